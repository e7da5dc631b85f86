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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.errors import Failure
from conformance.model.chunks import Chunk
from conformance.model.document import cut, realistic_document
from conformance.model.requests import Ok, StreamRequest, Timeout
from conformance.model.results import CaseResult, Verdict
from conformance.transport.connections import Connection

CHECK = "growth"
CATEGORY = "cost"
CASE = "GROWTH"
SLUG = "time-per-character"
TITLE = "Time per character does not grow with the length of the stream"
TAXONOMY = "COST.growth"
#: 4 KB to 64 KB, evenly spaced on a logarithmic scale.
SIZES = (4096, 10321, 26008, 65536)
#: The same steps below 4 KB, longest first: where an implementation is too slow for the
#: longer lengths to fit the budget, or times out on them, it is measured on these instead,
#: so that the worst cases are judged rather than skipped.
SMALLER = (1625, 645, 256)
#: Lengths a measurement aims for; two are the least that can be judged.
ENOUGH = 3
#: Token-sized chunks: how streaming APIs deliver text.
CHUNK_SIZE = 4
ROUNDS = 5
#: Seconds for the whole measurement of one implementation (the reference in process takes
#: about 0.15 s).
BUDGET = 2.0
#: The fitted exponent above which growth is superlinear: time per character growing more
#: than 2.3x over a 16x longer stream (16 ** 0.3). Linear work measures 0.85 to 1.05 here,
#: work that re-scans the stream so far 1.5 to 2 (lower where fewer lengths fit the budget).
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
    #: Shorter lengths, longest first, for an implementation too slow for `sizes`.
    smaller: tuple[int, ...] = SMALLER


@dataclass(frozen=True, slots=True)
class Measurement:
    """Times of streams of several lengths; `runs[i]` are the times of `sizes[i]`."""

    sizes: tuple[int, ...]
    runs: tuple[tuple[float, ...], ...]
    #: "cpu" (the implementation's own CPU time) or "wall" (where the system does not say).
    clock: str
    chunk_size: int
    #: Why longer lengths or more rounds were not measured, if they were not.
    cut_short: str = ""
    #: A longer length that got no reply within the request timeout: (characters, seconds
    #: waited), a lower bound on its time.
    timed_out: tuple[int, float] | None = None

    @property
    def best(self) -> tuple[float, ...]:
        """Each length's fastest round. Load on the machine only ever adds time, so the
        fastest is the least disturbed; a median still moves with a burst of load."""
        return tuple(min(times) for times in self.runs)

    @property
    def exponent(self) -> float:
        return fitted_exponent(self.sizes, self.best)

    @property
    def bound_exponent(self) -> float | None:
        """The exponent with the timed-out length at the time waited for it: the true one is
        at least this (a longer length's time only raises the fitted slope)."""
        if self.timed_out is None:
            return None
        size, waited = self.timed_out
        return fitted_exponent((*self.sizes, size), (*self.best, waited))

    @property
    def per_character_ratio(self) -> float:
        """Time per character at the longest length over that at the shortest."""
        first, last = self.best[0] / self.sizes[0], self.best[-1] / self.sizes[-1]
        return last / first if first > 0 else math.inf

    def to_json(self, limit: float) -> dict[str, Any]:
        return {
            # As the reason shows it: one value, not two roundings of it.
            "exponent": round(self.exponent, 2),
            "limit": limit,
            "per_character_ratio": round(self.per_character_ratio, 3),
            "sizes": list(self.sizes),
            "seconds": [round(s, 6) for s in self.best],
            "rounds": min(len(times) for times in self.runs),
            # The implementation's own time in the check: its share of the run's time.
            "measured_seconds": round(sum(map(sum, self.runs)), 6),
            "clock": self.clock,
            "chunk_size": self.chunk_size,
            **({"cut_short": self.cut_short} if self.cut_short else {}),
            **(
                {"timed_out": {"size": self.timed_out[0], "after": round(self.timed_out[1], 3)}}
                if self.timed_out
                else {}
            ),
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


class _Timing:
    """The first round of a measurement: which lengths were timed, and what stopped it."""

    def __init__(self, connection: Connection, settings: GrowthSettings, clock: _Clock) -> None:
        self.connection = connection
        self.settings = settings
        self.clock = clock
        text = realistic_document(max(settings.sizes))
        self.requests = {
            size: StreamRequest(tuple(Chunk(p) for p in cut(text[:size], settings.chunk_size)))
            for size in (*settings.sizes, *settings.smaller)
        }
        #: Size -> [clock seconds], and the first round's wall seconds of each.
        self.times: dict[int, list[float]] = {}
        self.walls: dict[int, float] = {}
        self.cut_short = ""
        self.timed_out: tuple[int, float] | None = None
        self.failed = ""

    def time(self, size: int) -> bool:
        """Time `size` once; False (with the reason kept) when it was not answered."""
        timed = _timed(self.connection, self.requests[size], self.clock)
        if isinstance(timed, Timed):
            self.times.setdefault(size, []).append(timed.seconds)
            self.walls.setdefault(size, timed.wall)
            return True
        if timed.timeout is not None:
            self.timed_out = (size, timed.timeout)
        self.failed = self.failed or f"the {_size(size)} stream: {timed.reason}"
        return False

    def spent(self) -> float:
        return sum(times[0] for times in self.times.values())

    def predicted(self, size: int) -> float:
        done = sorted(self.times)
        return _predicted(done, [self.times[s][0] for s in done], size)


def measure(
    connection: Connection,
    settings: GrowthSettings = GrowthSettings(),
    *,
    stop: Callable[[], bool] | None = None,
) -> Measurement:
    """Time streams of `settings.sizes` characters (or shorter ones, for an implementation too
    slow for them); raises NotMeasured (with the reason) when fewer than two could be."""
    clock = _clock(connection)
    timing = _Timing(connection, settings, clock)
    stopped = stop or (lambda: False)
    started = time.perf_counter()
    sizes = settings.sizes
    # The first round, shortest first: the second length is timed if it should fit in the
    # budget, each further one only if the round still fits in a third of it (so that
    # several rounds do), going by the growth so far. These choices go by the measuring
    # clock (CPU time), so that load on the machine does not change what is measured; the
    # rounds stop by the wall clock, so that it does not stretch the check.
    for index, size in enumerate(sizes):
        share = settings.budget if index < 2 else settings.budget / 3
        if index and timing.spent() + timing.predicted(size) > share:
            timing.cut_short = (
                f"measured up to {_size(sizes[index - 1])}: "
                f"{_size(size)} would not fit in the {settings.budget:g} s budget"
            )
            break
        if stopped():
            raise NotMeasured("the run was stopping")
        if not timing.time(size):
            if index:
                timing.cut_short = f"measured up to {_size(sizes[index - 1])}: {timing.failed}"
            break
    # Too slow for the longer lengths, or timed out on one: the shorter ones, longest first,
    # until enough are timed. Each is cheaper than the one before, so a strongly superlinear
    # implementation is measured, and flagged, rather than skipped. (An error is no matter
    # of time: it stays the reason.)
    slow = not timing.failed or timing.timed_out is not None
    for size in settings.smaller if slow else ():
        if len(timing.times) >= ENOUGH or stopped():
            break
        if timing.times and timing.spent() + timing.predicted(size) > settings.budget * 2:
            break
        timing.time(size)
    measured = sorted(timing.times)
    if len(measured) < 2:
        if stopped():
            raise NotMeasured("the run was stopping")
        if timing.failed:
            raise NotMeasured(timing.failed)
        raise NotMeasured(
            f"the {_size(measured[0])} stream took {timing.times[measured[0]][0]:.2f} s: no "
            f"second length would fit in the {settings.budget:g} s budget"
        )
    if measured[0] < sizes[0]:
        why = timing.cut_short or timing.failed
        timing.cut_short = f"measured from {_size(measured[0])}, below {_size(sizes[0])}: {why}"
    round_wall = sum(timing.walls[size] for size in measured)
    for done in range(1, settings.rounds):
        # Three rounds at least, while a loaded machine stretches them to twice the budget.
        budget = settings.budget * (2 if done < 3 else 1)
        if time.perf_counter() - started + round_wall > budget or stopped():
            if not timing.cut_short:
                plural = "s" if done > 1 else ""
                timing.cut_short = f"{done} round{plural} within the {settings.budget:g} s budget"
            break
        if not all(timing.time(size) for size in measured):
            timing.cut_short = f"a later round: {timing.failed}"
            break
    rounds = min(len(timing.times[size]) for size in measured)
    return Measurement(
        tuple(measured),
        tuple(tuple(timing.times[size][:rounds]) for size in measured),
        clock.kind,
        settings.chunk_size,
        timing.cut_short,
        timing.timed_out if timing.timed_out and timing.timed_out[0] > measured[-1] else None,
    )


@dataclass(frozen=True, slots=True)
class _Clock:
    read: Callable[[], float | None]
    kind: str


def _clock(connection: Connection) -> _Clock:
    """The implementation's own CPU time where it can be read: this thread's in process, the
    process group's through the protocol (so the protocol's cost, linear, is in it); the
    request's wall-clock time otherwise."""
    cpu = connection.cpu_seconds
    if cpu() is not None:
        return _Clock(cpu, "cpu")
    return _Clock(time.perf_counter, "wall")


@dataclass(frozen=True, slots=True)
class Timed:
    seconds: float
    wall: float


@dataclass(frozen=True, slots=True)
class _Unanswered:
    reason: str
    #: The request timeout, when the request timed out.
    timeout: float | None = None


def _timed(connection: Connection, request: StreamRequest, clock: _Clock) -> Timed | _Unanswered:
    """Clock and wall seconds of one request, or why it was not answered."""
    enabled = gc.isenabled()
    gc.disable()  # a collection of the harness's own objects is not the implementation's cost
    try:
        wall = time.perf_counter()
        began = clock.read()
        (reply,) = connection.send([request])
        ended = clock.read()
        wall = time.perf_counter() - wall
    finally:
        if enabled:
            gc.enable()
    if isinstance(reply, Timeout):
        return _Unanswered(f"{reply.verdict.value}: {reply.reason}", wall)
    if not isinstance(reply, Ok):
        return _Unanswered(f"{reply.verdict.value}: {reply.reason}")
    del reply  # freed before the next request's clock starts
    if began is None or ended is None or ended < began:  # the process was restarted
        return _Unanswered("the implementation's process changed during the request")
    return Timed(ended - began, wall)


def _predicted(sizes: Sequence[int], seconds: Sequence[float], size: int) -> float:
    """The expected seconds of `size`, from the growth of the lengths timed so far (a square
    law until two are, and never less than linear)."""
    exponent = 2.0 if len(seconds) < 2 else max(fitted_exponent(sizes, seconds), 1.0)
    nearest = min(range(len(sizes)), key=lambda i: abs(math.log(size / sizes[i])))
    return seconds[nearest] * (size / sizes[nearest]) ** exponent


def _size(characters: int) -> str:
    return f"{characters / 1024:.0f} KB" if characters >= 1024 else f"{characters} characters"


def judge_growth(measurement: Measurement | str, settings: GrowthSettings) -> CaseResult:
    """The growth result: PASS, NON_STRICT when superlinear (FAIL when `strict`), SKIP with
    the reason when it could not be measured."""
    if isinstance(measurement, str):
        return _result(Verdict.SKIP, f"not measured: {measurement}")
    exponent = round(measurement.exponent, 2)  # as results.json keeps it
    bound = measurement.bound_exponent
    # A longer length that timed out where the shorter ones' growth would not have: that
    # timeout is the growth, not a failure of its own.
    grew_out = bound is not None and bound > settings.limit
    superlinear = exponent > settings.limit or grew_out
    best = " / ".join(f"{s * 1000:.1f}" for s in measurement.best)
    rounds = min(len(times) for times in measurement.runs)
    timed_out = ""
    if measurement.timed_out is not None and bound is not None:
        size, waited = measurement.timed_out
        timed_out = (
            f"; the {_size(size)} stream got no reply in {waited:.1f} s, an exponent of at "
            f"least {bound:.2f}"
        )
    reason = (
        f"{'superlinear' if superlinear else 'linear'}: time per character x"
        f"{measurement.per_character_ratio:.2f} from {_size(measurement.sizes[0])} to "
        f"{_size(measurement.sizes[-1])} ({measurement.chunk_size}-character chunks), fitted "
        f"exponent {exponent:.2f} (linear is 1, the limit {settings.limit:g}); "
        f"{best} ms {measurement.clock} time, fastest of {rounds}"
        + timed_out
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
