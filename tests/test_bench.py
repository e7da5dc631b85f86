"""`conformance bench`: figures for in-process and `cmd:` implementations on the same inputs.

Timings are printed, never asserted beyond sanity: tests do not measure speed."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import pytest

from conformance.model.document import cut, realistic_document
from conformance.tools.bench import _timed, bench, render_bench
from conformance.tools.bench_figures import (
    IN_PROCESS,
    THROUGH_PROTOCOL,
    BenchResult,
    BenchSettings,
    Growth,
)
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import cli

TINY = BenchSettings(document_size=20_000, growth_sizes=(20_000, 200_000), repeats=1)
REFERENCE_CMD = f"cmd:{sys.executable} -m conformance.server"


def measure(spec: str, settings: BenchSettings = TINY) -> BenchResult:
    connection = connect(parse_impl(spec), timeout=60)
    try:
        return bench(connection, settings)
    finally:
        connection.close()


def assert_sane(result: BenchResult, settings: BenchSettings = TINY) -> None:
    assert result.problems == ()
    assert [t.chunk_size for t in result.throughput] == list(settings.chunk_sizes)
    for figure in result.throughput:
        assert figure.characters == settings.document_size
        assert figure.chunks == -(-settings.document_size // figure.chunk_size)
        assert figure.size_bytes > figure.characters  # the document has non-ASCII text
        assert figure.seconds > 0
        assert figure.megabytes_per_second > 0
        assert figure.microseconds_per_chunk > 0
    assert result.growth is not None
    assert result.growth.small_seconds > 0
    assert result.growth.large_seconds > 0


def test_the_document_is_deterministic_realistic_and_exactly_sized() -> None:
    text = realistic_document(50_000)
    assert len(text) == 50_000
    assert text == realistic_document(50_000)
    assert text != realistic_document(50_000, seed=8)
    assert "<think>" in text and "Vec<T>" in text and "\U0001f600" in text
    assert "".join(cut(text, 4096)) == text
    assert [len(piece) for piece in cut("abcdefghij", 4)] == [4, 4, 2]


def test_the_reference_in_process() -> None:
    result = measure("reference")
    print(render_bench([result], TINY))
    assert result.measured == IN_PROCESS
    assert_sane(result)
    assert result.holdback is not None
    assert (result.holdback.max, result.holdback.mean, result.holdback.agrees) == (0, 0.0, True)


@pytest.mark.slow
def test_the_reference_through_cmd() -> None:
    result = measure(REFERENCE_CMD)
    print(render_bench([result], TINY))
    assert result.measured == THROUGH_PROTOCOL
    assert_sane(result)
    assert result.holdback is not None
    assert (result.holdback.max, result.holdback.agrees) == (0, True)


def test_an_implementation_that_buffers_everything_holds_back_the_whole_document() -> None:
    result = measure("python:tests.fakes.broken_impls:BuffersEverything")
    assert result.holdback is not None
    # After the last chunk nearly the whole document is held (bar its removed delimiters).
    assert result.holdback.max > TINY.document_size * 0.9
    assert result.holdback.mean > 0
    assert result.holdback.agrees


def test_holdback_is_measured_per_chunk_against_the_reference() -> None:
    result = measure("python:tests.fakes.broken_impls:DelayedByOneChunk")
    assert result.holdback is not None
    assert result.holdback.agrees
    # One chunk late: the reference's release of one 4-character chunk, plus at most the
    # longest delimiter prefix it had held before (`</thinking`, 10 characters).
    assert 4 <= result.holdback.max <= 4 + 10
    assert 3 < result.holdback.mean <= 4


def test_an_implementation_with_the_wrong_text_is_flagged() -> None:
    result = measure("python:tests.fakes.broken_impls:DuplicatesNative")
    assert result.holdback is not None
    # No native reasoning in the document: merge and native_only give the same text.
    assert result.holdback.agrees
    result = measure("python:tests.fakes.broken_impls:StripsEveryTag")
    assert result.holdback is not None and not result.holdback.agrees
    assert "(text differs from the reference)" in render_bench([result], TINY)


def test_a_failing_implementation_gives_problems_not_exceptions() -> None:
    # It raises on a chunk containing `thinking`: only 4 KB chunks hold the whole word.
    result = measure("python:tests.fakes.broken_impls:Raises")
    assert [t.chunk_size for t in result.throughput] == [1, 4]
    assert result.growth is None
    assert result.problems == (
        "4096-character chunks: raised ValueError: cannot handle <thinking>",
        "growth, 20 KB: raised ValueError: cannot handle <thinking>",
    )
    table = render_bench([result], TINY)
    assert "failed" in table
    assert "Raises: 4096-character chunks: raised ValueError" in table


def test_growth_is_flagged_superlinear_well_above_the_size_ratio() -> None:
    linear = Growth(4096, 1_000_000, 10_000_000, 0.01, 0.12)
    noisy = Growth(4096, 1_000_000, 10_000_000, 0.01, 0.25)
    quadratic = Growth(4096, 1_000_000, 10_000_000, 0.01, 0.9)
    assert (linear.ratio, linear.superlinear) == (12.0, False)
    assert not noisy.superlinear
    assert quadratic.superlinear
    assert "SUPERLINEAR" in render_bench(
        [BenchResult(connect(parse_impl("reference")).info, IN_PROCESS, growth=quadratic)]
    )


def fake_runner(seconds_per_piece: float, calls: list[int]) -> Any:
    """A runner whose runs take `seconds_per_piece` per piece, by its own account."""

    def run(pieces: Sequence[str], keep: bool) -> tuple[float, None]:
        calls.append(len(pieces))
        return len(pieces) * seconds_per_piece, None

    return run


@pytest.mark.parametrize(
    ("per_piece", "budget", "expected_calls", "expected"),
    [
        # Fast: the probe, then the whole document `repeats` times.
        (1e-6, 2.0, [1000, 100_000, 100_000, 100_000], (100_000, 0.1)),
        # Too slow for more than the probe: the probe is the figure, repeated while the
        # budget lasts.
        (1e-3, 2.0, [1000, 1000], (1000, 1.0)),
        # In between: as much of the document as three runs can take in what is left.
        (1e-5, 2.0, [1000, 66_333, 66_333, 66_333], (66_333, 0.66333)),
        # No budget: the whole document, `repeats` times, however long it takes.
        (1e-3, None, [100_000] * 3, (100_000, 100.0)),
    ],
)
def test_a_budget_measures_a_slow_implementation_on_the_start_of_the_document(
    per_piece: float,
    budget: float | None,
    expected_calls: list[int],
    expected: tuple[int, float],
) -> None:
    calls: list[int] = []
    settings = BenchSettings(repeats=3, budget=budget)
    count, seconds = _timed(fake_runner(per_piece, calls), ["x"] * 100_000, settings)
    assert calls == expected_calls
    assert (count, round(seconds, 6)) == expected


@pytest.mark.slow
def test_a_slow_implementation_under_a_budget_says_what_its_figures_cover() -> None:
    settings = BenchSettings(
        document_size=20_000, growth_sizes=(20_000, 200_000), repeats=1, budget=0.5
    )
    started = time.perf_counter()
    result = measure("python:tests.fakes.growth_impls:SlowPerChunk", settings)
    # Four figures and the holdback at most half a second each, and the growth check.
    assert time.perf_counter() - started < 10
    assert result.problems == ()
    one, four, kilobytes = result.throughput
    assert 1000 <= one.chunks < 20_000 and one.characters == one.chunks
    assert 1000 <= four.chunks < 5000 and four.characters == 4 * four.chunks
    assert kilobytes.characters == 20_000  # five chunks: the whole document fits
    assert result.holdback is not None
    assert result.holdback.characters == four.characters
    assert (result.holdback.max, result.holdback.agrees) == (0, True)
    table = render_bench([result], settings)
    print(table)
    assert f"(first {one.characters:,} characters)" in table
    assert f"0 / 0.00 (first {four.characters:,} characters)" in table
    assert "at most 0.5 s each" in table


@pytest.mark.slow
def test_bench_command_quick_side_by_side() -> None:
    done = cli(
        "bench",
        "--quick",
        "--impl",
        "reference",
        "--impl",
        f"ref-cmd={REFERENCE_CMD}",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["settings"]["document_size"] == 100_000
    assert [r["implementation"]["label"] for r in data["results"]] == ["reference", "ref-cmd"]
    assert [r["measured"] for r in data["results"]] == [IN_PROCESS, THROUGH_PROTOCOL]
    for result in data["results"]:
        print(result["implementation"]["label"], result["throughput"], result["growth"])
        assert all(t["megabytes_per_second"] > 0 for t in result["throughput"])
        assert result["holdback"]["max"] == 0
        assert result["growth"]["large_size"] == 2_000_000
