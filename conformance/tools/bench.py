"""`conformance bench`: the speed of implementations, side by side, on the same inputs.

Every implementation gets the same realistic document (conformance/model/document.py) and:

- **throughput** in 1-character, token-sized (4-character) and 4 KB chunks: MB/s, chunks per
  second and time per chunk, the best of a few runs;
- **holdback**: over the document in token-sized chunks, how many characters it had released
  fewer of than the reference at each chunk (SPEC.md 7.2), as the maximum and the mean;
- **growth**: the time for a small and a ten times larger document in 4 KB chunks; a ratio
  well above ten (SUPERLINEAR_FACTOR) flags superlinear work, such as re-scanning the stream
  so far at every chunk.

With a budget (`--quick`, and the matrix), each throughput figure and the holdback run take
at most that many seconds: an implementation too slow for the whole document is measured on
its start, and the figure says how many characters it covers.

What is timed depends on how the implementation is reached. In process (`reference`,
`python:`) it is the normalizer alone: `feed` for each chunk, then `finish`. Through `cmd:` a
whole stream is one protocol request, so it is the protocol and the implementation together:
JSON encoding both ways, the pipes, the implementation's own parsing, and the harness's reply
checks. Figures of the two kinds are not comparable with each other.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tabulate import tabulate

from conformance.errors import Failure
from conformance.model.chunks import Chunk
from conformance.model.document import cut, realistic_document
from conformance.model.judge import behind, released
from conformance.model.options import Options
from conformance.model.requests import Ok, StreamRequest, Timeout
from conformance.model.results import ImplementationInfo
from conformance.reference import Delta, normalize_stream
from conformance.tools.bench_figures import (
    IN_PROCESS,
    PROBE_CHUNKS,
    THROUGH_PROTOCOL,
    BenchResult,
    BenchSettings,
    Growth,
    Holdback,
    Throughput,
)
from conformance.transport.connections import Connection
from conformance.transport.inprocess import InProcessConnection
from conformance.transport.messages import stream_reply

FULL = BenchSettings()
#: Under ten seconds for a `cmd:` implementation that is as fast as the reference, and under
#: half a minute for any implementation whose cost does not grow with the stream: a client
#: driven through HTTP takes tens of microseconds per chunk, minutes for the whole document
#: in 1-character chunks three times over.
QUICK = BenchSettings(document_size=100_000, growth_sizes=(200_000, 2_000_000), budget=2.0)


class BenchFailure(Failure):
    """A measured run did not produce a valid stream reply; reported as a problem of the
    benchmark, which then exits 1 (exit status 1)."""


# --- running streams ------------------------------------------------------------------------


Deltas = list[dict[str, str]]
#: Runs one stream of content pieces: (seconds, deltas if asked for).
Runner = Callable[[Sequence[str], bool], tuple[float, Deltas | None]]


def _in_process(connection: InProcessConnection) -> Runner:
    factory = connection.factory

    def run(pieces: Sequence[str], keep: bool) -> tuple[float, Deltas | None]:
        chunks = [{"content": piece, "reasoning": None} for piece in pieces]
        deltas: list[Any] | None = None
        try:
            normalizer = factory()
            feed = normalizer.feed
            started = time.perf_counter()
            if keep:
                deltas = [feed(chunk) for chunk in chunks]
                deltas.append(normalizer.finish())
            else:
                for chunk in chunks:
                    feed(chunk)
                normalizer.finish()
            seconds = time.perf_counter() - started
        except Exception as error:  # the implementation's failure is a finding, not ours
            raise BenchFailure(f"raised {type(error).__name__}: {error}") from None
        if deltas is None:
            return seconds, None
        reply = stream_reply(deltas, len(chunks))
        if not isinstance(reply, Ok) or reply.deltas is None:
            raise BenchFailure(getattr(reply, "reason", "no deltas"))
        return seconds, reply.deltas

    return run


def _through_protocol(connection: Connection) -> Runner:
    def run(pieces: Sequence[str], keep: bool) -> tuple[float, Deltas | None]:
        request = StreamRequest(tuple(Chunk(piece) for piece in pieces))
        started = time.perf_counter()
        (reply,) = connection.send([request])
        seconds = time.perf_counter() - started
        if not isinstance(reply, Ok):
            hint = " (raise it with --timeout)" if isinstance(reply, Timeout) else ""
            raise BenchFailure(reply.reason + hint)
        assert reply.deltas is not None
        return seconds, reply.deltas

    return run


def _best(runner: Runner, pieces: Sequence[str], repeats: int) -> float:
    return min(runner(pieces, False)[0] for _ in range(max(1, repeats)))


def _timed(runner: Runner, pieces: Sequence[str], settings: BenchSettings) -> tuple[int, float]:
    """How many of `pieces` were measured (all of them without a budget) and the best time
    of their runs."""
    repeats = max(1, settings.repeats)
    budget = settings.budget
    if budget is None:
        return len(pieces), _best(runner, pieces, repeats)
    count = min(len(pieces), PROBE_CHUNKS)
    times = [runner(pieces[:count], False)[0]]
    spent = times[0]
    if count < len(pieces):
        # As many chunks as `repeats` runs can take in what is left of the budget, at the
        # probe's time per chunk; the probe is the figure when no more fit.
        per_chunk = times[0] / count
        fits = int((budget - spent) / repeats / per_chunk) if per_chunk > 0 else len(pieces)
        if fits > count:
            count, times = min(len(pieces), fits), []
    while not times or (len(times) < repeats and spent < budget):
        times.append(runner(pieces[:count], False)[0])
        spent += times[-1]
    return count, min(times)


def _covered(pieces: Sequence[str]) -> tuple[int, int]:
    """Characters and UTF-8 bytes of the document that `pieces` make."""
    text = "".join(pieces)
    return len(text), len(text.encode("utf-8"))


# --- measuring --------------------------------------------------------------------------------


def bench(
    connection: Connection,
    settings: BenchSettings = FULL,
    *,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    """Measure one live implementation. Failures become `problems`, never exceptions."""
    if isinstance(connection, InProcessConnection):
        runner, measured = _in_process(connection), IN_PROCESS
    else:
        runner, measured = _through_protocol(connection), THROUGH_PROTOCOL
    say = progress or (lambda text: None)
    text = realistic_document(settings.document_size)
    throughput: list[Throughput] = []
    problems: list[str] = []
    for size in settings.chunk_sizes:
        say(f"{connection.info.label}: {size}-character chunks")
        pieces = cut(text, size)
        try:
            count, seconds = _timed(runner, pieces, settings)
        except BenchFailure as failure:
            problems.append(f"{size}-character chunks: {failure}")
            continue
        throughput.append(Throughput(size, count, *_covered(pieces[:count]), seconds))
    say(f"{connection.info.label}: holdback")
    size = settings.holdback_chunk_size
    # Under a budget, as far into the document as that chunk size's throughput run got.
    figure = next((t for t in throughput if t.chunk_size == size), None)
    pieces = cut(text, size)
    if settings.budget is not None and figure is not None:
        pieces = pieces[: figure.chunks]
    holdback = _holdback(runner, pieces, size, connection.info, problems)
    say(f"{connection.info.label}: growth")
    growth = _growth(runner, settings, problems)
    return BenchResult(
        connection.info, measured, tuple(throughput), holdback, growth, tuple(problems)
    )


def _holdback(
    runner: Runner, pieces: Sequence[str], size: int, info: ImplementationInfo, problems: list[str]
) -> Holdback | None:
    try:
        _, deltas = runner(pieces, True)
    except BenchFailure as failure:
        problems.append(f"holdback: {failure}")
        return None
    assert deltas is not None
    options = Options.from_mapping(info.options)
    reference = normalize_stream(({"content": piece} for piece in pieces), options)
    # After each chunk (not the flush): what the reference had released and the
    # implementation had not yet, or 0 when it was ahead.
    lags = [max(0, lag) for lag in behind(released(deltas[:-1]), released(reference[:-1]))]
    agrees = _joined(deltas) == _joined(reference)
    mean = sum(lags) / len(lags) if lags else 0.0
    return Holdback(size, max(lags, default=0), mean, agrees, sum(map(len, pieces)))


def _joined(deltas: Sequence[Mapping[str, str]] | Sequence[Delta]) -> tuple[str, str]:
    return (
        "".join(d["assistant"] for d in deltas),
        "".join(d["thinking"] for d in deltas),
    )


def _growth(runner: Runner, settings: BenchSettings, problems: list[str]) -> Growth | None:
    small, large = settings.growth_sizes
    times = []
    for size in (small, large):
        pieces = cut(realistic_document(size), settings.growth_chunk_size)
        try:
            times.append(_best(runner, pieces, settings.repeats))
        except BenchFailure as failure:
            problems.append(f"growth, {format_size(size)}: {failure}")
            return None
    return Growth(settings.growth_chunk_size, small, large, times[0], times[1])


# --- display ----------------------------------------------------------------------------------


def format_size(characters: int) -> str:
    """1000000 -> `1 MB`, 100000 -> `100 KB` (characters of mostly-ASCII text)."""
    if characters >= 1_000_000 and characters % 100_000 == 0:
        return f"{characters / 1e6:g} MB"
    if characters >= 1000 and characters % 100 == 0:
        return f"{characters / 1e3:g} KB"
    return f"{characters} characters"


def _chunk_label(size: int) -> str:
    if size == 4096:
        return "4 KB chunks"
    return f"{size}-char chunks"


def _throughput_cell(figure: Throughput | None, settings: BenchSettings) -> str:
    if figure is None:
        return "failed"
    cell = f"{figure.megabytes_per_second:.1f} MB/s, {figure.microseconds_per_chunk:.2f} µs/chunk"
    return cell + _coverage(figure.characters, settings)


def _holdback_cell(holdback: Holdback | None, settings: BenchSettings) -> str:
    if holdback is None:
        return "failed"
    cell = f"{holdback.max} / {holdback.mean:.2f}" + _coverage(holdback.characters, settings)
    return cell if holdback.agrees else cell + " (text differs from the reference)"


def _coverage(characters: int, settings: BenchSettings) -> str:
    """How much of the document a figure covers, when not all of it (under a budget)."""
    if characters >= settings.document_size:
        return ""
    return f" (first {characters:,} characters)"


def _growth_cell(growth: Growth | None) -> str:
    if growth is None:
        return "failed"
    flag = "SUPERLINEAR" if growth.superlinear else "linear"
    return (
        f"{growth.small_seconds:.3f} s / {growth.large_seconds:.3f} s "
        f"({growth.ratio:.1f} x, {flag})"
    )


def render_bench(
    results: Sequence[BenchResult], settings: BenchSettings = FULL, format_: str = "text"
) -> str:
    """One row per implementation: a plain table (`text`), `markdown`, or `json`."""
    if format_ == "json":
        document = {
            "settings": {
                "document_size": settings.document_size,
                "chunk_sizes": list(settings.chunk_sizes),
                "holdback_chunk_size": settings.holdback_chunk_size,
                "growth_sizes": list(settings.growth_sizes),
                "growth_chunk_size": settings.growth_chunk_size,
                "repeats": settings.repeats,
                "budget": settings.budget,
            },
            "results": [result.to_json() for result in results],
        }
        return json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    small, large = (format_size(size) for size in settings.growth_sizes)
    headers = [
        "implementation",
        "measured",
        *(_chunk_label(size) for size in settings.chunk_sizes),
        f"holdback max / mean ({settings.holdback_chunk_size}-char chunks)",
        f"{small} / {large} ({_chunk_label(settings.growth_chunk_size)})",
    ]
    rows = [
        [
            f"{result.info.label} ({result.info.name} {result.info.version})",
            result.measured,
            *(
                _throughput_cell(result.throughput_at(size), settings)
                for size in settings.chunk_sizes
            ),
            _holdback_cell(result.holdback, settings),
            _growth_cell(result.growth),
        ]
        for result in results
    ]
    table = tabulate(
        rows, headers=headers, tablefmt="github" if format_ == "markdown" else "simple"
    )
    notes = [
        f"Document: {format_size(settings.document_size)} of realistic mixed text; "
        f"best of {settings.repeats} run{'s' if settings.repeats != 1 else ''} per figure"
        + (
            ""
            if settings.budget is None
            else f", at most {settings.budget:g} s each (an implementation slower than that "
            "is measured on the start of the document, as its cells say)"
        )
        + ". Holdback: characters released later than the reference would, after each chunk.",
    ]
    for result in results:
        notes += [f"{result.info.label}: {problem}" for problem in result.problems]
    return table + "\n\n" + "\n".join(notes) + "\n"
