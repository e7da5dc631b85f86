"""The growth check (SPEC.md 14): does an implementation's time per character grow with the
length of the stream?

Each implementation gets prefixes of one realistic document (model/document.py) at a few
lengths spanning 16x, in token-sized chunks, one stream request per length. The lengths are
run in rounds (smallest to largest, then again), so that a burst of load on a shared machine
falls on every length alike rather than on one; each length's figure is the median of its
rounds. The exponent k of time ~ length^k is fitted by least squares on the logarithms: linear
work gives about 1, work that re-scans the stream so far at every chunk gives about 2.

What is timed: in process (`reference`, `python:`) the CPU time of this process (a `python:`
implementation runs on a thread of its own), so time lost to other processes on a loaded
machine does not count; through `cmd:` and `python-isolated:` the wall-clock time of the
request (protocol included, whose cost is linear).

The measurement is capped: a round of every length must fit in a third of the budget, so a
slow implementation is measured on the shorter lengths only (and the result says up to which),
and rounds stop when the budget is spent (after three, when load stretches them, at twice
the budget).
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.errors import Failure
from conformance.model.chunks import Chunk
from conformance.model.document import cut, realistic_document
from conformance.model.requests import Ok, StreamRequest
from conformance.model.results import CaseResult, Verdict
from conformance.transport.connections import Connection
from conformance.transport.inprocess import InProcessConnection

CHECK = "growth"
CATEGORY = "cost"
CASE = "GROWTH"
SLUG = "time-per-character"
TITLE = "Time per character does not grow with the length of the stream"
TAXONOMY = "COST.growth"
#: 4 KB to 64 KB, evenly spaced on a logarithmic scale.
SIZES = (4096, 10321, 26008, 65536)
#: Token-sized chunks: how streaming APIs deliver text.
CHUNK_SIZE = 4
ROUNDS = 5
#: Seconds for the whole measurement of one implementation (the reference in process takes
#: about 0.15 s).
BUDGET = 2.0
#: The fitted exponent above which growth is superlinear: time per character growing more
#: than 2.3x over a 16x longer stream (16 ** 0.3). Linear work measures 0.85 to 1.05 here,
#: work that re-scans the stream so far 1.7 to 2.
LIMIT = 1.3


@dataclass(frozen=True, slots=True)
class GrowthSettings:
    sizes: tuple[int, ...] = SIZES
    chunk_size: int = CHUNK_SIZE
    rounds: int = ROUNDS
    budget: float = BUDGET
    limit: float = LIMIT
    #: Superlinear growth is a FAIL rather than NON_STRICT (`--strict-growth`).
    strict: bool = False


@dataclass(frozen=True, slots=True)
class Measurement:
    """Times of streams of several lengths; `runs[i]` are the times of `sizes[i]`."""

    sizes: tuple[int, ...]
    runs: tuple[tuple[float, ...], ...]
    #: "cpu" (in process) or "wall" (through a protocol).
    clock: str
    chunk_size: int
    #: Why longer lengths or more rounds were not measured, if they were not.
    cut_short: str = ""

    @property
    def medians(self) -> tuple[float, ...]:
        return tuple(statistics.median(times) for times in self.runs)

    @property
    def exponent(self) -> float:
        return fitted_exponent(self.sizes, self.medians)

    @property
    def per_character_ratio(self) -> float:
        """Time per character at the longest length over that at the shortest."""
        first, last = self.medians[0] / self.sizes[0], self.medians[-1] / self.sizes[-1]
        return last / first if first > 0 else math.inf

    def to_json(self, limit: float) -> dict[str, Any]:
        return {
            # As the reason shows it: one value, not two roundings of it.
            "exponent": round(self.exponent, 2),
            "limit": limit,
            "per_character_ratio": round(self.per_character_ratio, 3),
            "sizes": list(self.sizes),
            "seconds": [round(s, 6) for s in self.medians],
            "rounds": min(len(times) for times in self.runs),
            # The implementation's own time in the check: its share of the run's time.
            "measured_seconds": round(sum(map(sum, self.runs)), 6),
            "clock": self.clock,
            "chunk_size": self.chunk_size,
            **({"cut_short": self.cut_short} if self.cut_short else {}),
        }


def fitted_exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """The least-squares slope of log(seconds) over log(size)."""
    xs = [math.log(size) for size in sizes]
    ys = [math.log(max(s, 1e-9)) for s in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


class NotMeasured(Failure):
    """Not even two lengths could be timed: a measurement that failed (exit status 1, were it
    to end a command; `growth_result` makes it the growth check's SKIP with the reason)."""


def measure(
    connection: Connection,
    settings: GrowthSettings = GrowthSettings(),
    *,
    stop: Callable[[], bool] | None = None,
) -> Measurement:
    """Time streams of `settings.sizes` characters; raises NotMeasured (with the reason) when
    fewer than two lengths could be."""
    in_process = isinstance(connection, InProcessConnection)
    clock = time.process_time if in_process else time.perf_counter
    text = realistic_document(max(settings.sizes))
    requests = [
        StreamRequest(tuple(Chunk(piece) for piece in cut(text[:size], settings.chunk_size)))
        for size in settings.sizes
    ]
    stopped = stop or (lambda: False)
    started = time.perf_counter()
    runs: list[list[float]] = []
    walls: list[float] = []
    cut_short = ""
    # The first round, shortest first: the second length is timed if it should fit in the
    # budget, each further one only if the round still fits in a third of it (so that
    # several rounds do), going by the growth so far. These choices go by the measuring
    # clock (CPU time in process), so that load on the machine does not change what is
    # measured; the rounds stop by the wall clock, so that it does not stretch the check.
    for index, request in enumerate(requests):
        size = settings.sizes[index]
        share = settings.budget if index < 2 else settings.budget / 3
        first = [times[0] for times in runs]
        if index and sum(first) + _predicted(settings.sizes, first, size) > share:
            cut_short = (
                f"measured up to {_size(settings.sizes[index - 1])}: "
                f"{_size(size)} would not fit in the {settings.budget:g} s budget"
            )
            break
        if stopped():
            raise NotMeasured("the run was stopping")
        timed = _timed(connection, request, clock)
        if isinstance(timed, str):
            if index < 2:
                raise NotMeasured(f"the {_size(size)} stream: {timed}")
            cut_short = f"measured up to {_size(settings.sizes[index - 1])}: {_size(size)}: {timed}"
            break
        runs.append([timed[0]])
        walls.append(timed[1])
    if len(runs) < 2:
        raise NotMeasured(
            f"the {_size(settings.sizes[0])} stream took {runs[0][0]:.2f} s: the "
            f"{_size(settings.sizes[1])} one would not fit in the {settings.budget:g} s budget"
        )
    round_wall = sum(walls)
    for done in range(1, settings.rounds):
        # Three rounds at least, while a loaded machine stretches them to twice the budget.
        budget = settings.budget * (2 if done < 3 else 1)
        if time.perf_counter() - started + round_wall > budget or stopped():
            if not cut_short:
                cut_short = f"{len(runs[0])} rounds within the {settings.budget:g} s budget"
            break
        for index, times in enumerate(runs):
            timed = _timed(connection, requests[index], clock)
            if isinstance(timed, str):
                cut_short = f"a later round of {_size(settings.sizes[index])}: {timed}"
                break
            times.append(timed[0])
        else:
            continue
        break
    return Measurement(
        tuple(settings.sizes[: len(runs)]),
        tuple(tuple(times) for times in runs),
        "cpu" if in_process else "wall",
        settings.chunk_size,
        cut_short,
    )


def _timed(
    connection: Connection, request: StreamRequest, clock: Callable[[], float]
) -> tuple[float, float] | str:
    """(clock seconds, wall seconds) of one request, or why it was not answered."""
    enabled = gc.isenabled()
    gc.disable()  # a collection of the harness's own objects is not the implementation's cost
    try:
        wall = time.perf_counter()
        began = clock()
        (reply,) = connection.send([request])
        seconds = clock() - began
        wall = time.perf_counter() - wall
    finally:
        if enabled:
            gc.enable()
    if not isinstance(reply, Ok):
        return f"{reply.verdict.value}: {reply.reason}"
    del reply  # freed before the next request's clock starts
    return seconds, wall


def _predicted(sizes: Sequence[int], seconds: Sequence[float], size: int) -> float:
    """The expected seconds of `size`, from the growth of the lengths timed so far (a square
    law until two are, and never less than linear)."""
    done = sizes[: len(seconds)]
    exponent = 2.0 if len(seconds) < 2 else max(fitted_exponent(done, seconds), 1.0)
    return seconds[-1] * (size / done[-1]) ** exponent


def _size(characters: int) -> str:
    return f"{characters / 1024:.0f} KB" if characters >= 1024 else f"{characters} characters"


def judge_growth(measurement: Measurement | str, settings: GrowthSettings) -> CaseResult:
    """The growth result: PASS, NON_STRICT when superlinear (FAIL when `strict`), SKIP with
    the reason when it could not be measured."""
    if isinstance(measurement, str):
        return _result(Verdict.SKIP, f"not measured: {measurement}")
    exponent = round(measurement.exponent, 2)  # as results.json keeps it
    superlinear = exponent > settings.limit
    medians = " / ".join(f"{s * 1000:.1f}" for s in measurement.medians)
    rounds = min(len(times) for times in measurement.runs)
    reason = (
        f"{'superlinear' if superlinear else 'linear'}: time per character x"
        f"{measurement.per_character_ratio:.2f} from {_size(measurement.sizes[0])} to "
        f"{_size(measurement.sizes[-1])} ({measurement.chunk_size}-character chunks), fitted "
        f"exponent {exponent:.2f} (linear is 1, the limit {settings.limit:g}); "
        f"{medians} ms {measurement.clock} time, median of {rounds}"
        + (f"; {measurement.cut_short}" if measurement.cut_short else "")
    )
    if not superlinear:
        verdict = Verdict.PASS
    else:
        verdict = Verdict.FAIL if settings.strict else Verdict.NON_STRICT
    return _result(verdict, reason, measurement.to_json(settings.limit))


def _result(verdict: Verdict, reason: str, growth: dict[str, Any] | None = None) -> CaseResult:
    return CaseResult(
        CASE, SLUG, CATEGORY, TAXONOMY, "should", CHECK, verdict, reason, title=TITLE, growth=growth
    )


def growth_result(
    connection: Connection,
    settings: GrowthSettings = GrowthSettings(),
    *,
    stop: Callable[[], bool] | None = None,
) -> CaseResult:
    """Measure and judge one live implementation; never raises for what it does."""
    try:
        measured: Measurement | str = measure(connection, settings, stop=stop)
    except NotMeasured as reason:
        measured = str(reason)
    return judge_growth(measured, settings)
