"""The splits check's cut points: every point of a short run; in a long run, every way of
splitting every possible delimiter, plus an even spread."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from conformance.contracts.normalizer._chunking import (
    EXHAUSTIVE,
    SPREAD,
    SplitRequests,
    atomic_chunks,
    cut_points,
    one_char_chunks,
)
from conformance.contracts.normalizer._plans import plan_checks
from conformance.engine.plans import plan_case, profiled
from conformance.engine.runner import run_implementation
from conformance.model.cases import Case
from conformance.model.chunks import Chunk
from conformance.model.grammar import Grammar
from conformance.model.options import DEFAULT, Options
from conformance.model.requests import StreamRequest
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl
from tests.helpers import bundled_corpus


def test_a_short_run_is_cut_everywhere() -> None:
    text = "a<think>b</think>c"
    assert cut_points(text, DEFAULT.grammar) == list(range(1, len(text)))


def test_a_long_run_is_cut_through_every_delimiter_and_spread_between() -> None:
    prose = "x" * 2000
    text = prose + "<think>plan</think>" + prose + "</thinking>" + prose
    points = cut_points(text, DEFAULT.grammar)
    assert len(points) < 250 < EXHAUSTIVE < len(text)
    for delimiter in ("<think>", "</think>", "</thinking>"):
        at = text.index(delimiter)
        assert set(range(at, at + len(delimiter) + 1)) <= set(points), delimiter
    gaps = [b - a for a, b in itertools.pairwise(points)]
    assert max(gaps) <= len(text) // (SPREAD + 1) + 1
    assert points[0] == 1 and points[-1] == len(text) - 1


def test_a_long_run_follows_the_grammar_in_force() -> None:
    text = "y" * 1000 + "[THINK]a[/THINK]" + "y" * 1000
    bracket = Options(delimiters="bracket").grammar
    at = text.index("[/THINK]")
    assert set(range(at, at + 9)) <= set(cut_points(text, bracket))
    assert at + 4 not in cut_points(text, DEFAULT.grammar)


def test_splits_keep_native_reasoning_in_place() -> None:
    chunks = [Chunk(reasoning="r"), Chunk(content="ab"), Chunk(content="c")]
    splits = SplitRequests(chunks, DEFAULT.grammar)
    assert len(splits) == 2
    assert list(splits[0].chunks) == [Chunk(reasoning="r"), Chunk(content="a"), Chunk(content="bc")]
    assert [splits.point(i) for i in range(len(splits))] == [1, 2]


def test_a_long_case_makes_few_split_requests() -> None:
    text = "z" * 5000 + "<think>a</think>" + "z" * 5000
    splits = SplitRequests([Chunk(content=text)], DEFAULT.grammar)
    assert len(splits) < 300
    assert {splits.point(i) for i in range(len(splits))} == set(cut_points(text, DEFAULT.grammar))


# Atomic delimiters (SPEC.md 5.11): no request cuts inside a delimiter.

QWEN3 = Options.from_mapping({"profile": "qwen3"})


def _cuts_inside(chunks: Sequence[Chunk], grammar: Grammar) -> list[int]:
    """The chunk boundaries of `chunks` (offsets in the joined content) strictly inside a
    delimiter occurrence."""
    text = "".join(chunk.content or "" for chunk in chunks)
    bounds = set(itertools.accumulate(len(chunk.content or "") for chunk in chunks))
    return sorted(
        bound
        for start, end, _ in grammar.occurrences(text)
        for bound in bounds
        if start < bound < end
    )


def test_under_qwen3_no_request_of_any_plan_cuts_inside_a_delimiter() -> None:
    grammar = QWEN3.grammar
    assert {"<think>", "</think>", "<tool_call>"} <= {
        d for pair in QWEN3.pairs for d in pair
    } | set(QWEN3.tool_markers)
    cut_before = 0
    for case in profiled(bundled_corpus().cases, QWEN3):
        if not isinstance(case, Case):
            continue
        if _cuts_inside(case.chunks, grammar):
            cut_before += 1
        for plan in plan_case(case, QWEN3, ("stream", "chars", "splits")):
            for request in plan.requests:
                assert isinstance(request, StreamRequest)
                assert _cuts_inside(request.chunks, grammar) == [], (case.id, plan.check)
    # The corpus does cut inside delimiters in its own chunkings: the stream check moved them.
    assert cut_before >= 10


ATOMIC = replace(DEFAULT, atomic_delimiters=True)


def _case(*chunks: Chunk) -> Case:
    """A written case of the corpus fed `chunks` instead of its own."""
    written = next(case for case in bundled_corpus().cases if isinstance(case, Case))
    return replace(written, chunks=chunks)


def _plan_cuts(case: Case, options: Options) -> dict[str, list[list[int]]]:
    """Per check, the cuts inside a delimiter of each of its requests."""
    return {
        plan.check: [
            _cuts_inside(request.chunks, options.grammar)
            for request in plan.requests
            if isinstance(request, StreamRequest)
        ]
        for plan in plan_checks(case, options, ("stream", "chars", "splits"))
    }


def test_without_atomic_delimiters_the_checks_cut_inside_them() -> None:
    cuts = _plan_cuts(_case(Chunk(content="<thi"), Chunk(content="nk>a</think>b")), DEFAULT)
    assert cuts["stream"] == [[4]]  # the case's own chunking, as written
    assert cuts["chars"] == [[1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15]]
    assert sum(map(len, cuts["splits"])) == 13


def test_with_atomic_delimiters_no_check_cuts_inside_them() -> None:
    case = _case(Chunk(content="<thi"), Chunk(content="nk>a</think>b"))
    cuts = _plan_cuts(case, ATOMIC)
    assert cuts == {"stream": [[]], "chars": [[]], "splits": [[]] * 3}
    plans = plan_checks(case, ATOMIC, ("stream", "splits"))
    # The case itself, id and all, is unchanged: only what is fed moves.
    assert plans[0].case is case
    assert list(plans[0].requests[0].chunks) == [
        Chunk(content=""),
        Chunk(content="<think>a</think>b"),
    ]
    assert [plans[1].requests.point(i) for i in range(3)] == [7, 8, 16]


def test_an_atomic_cut_moves_to_the_start_of_the_delimiter() -> None:
    chunks = (
        Chunk(content="a<thi"),
        Chunk(reasoning="r"),
        Chunk(content="nk>b</"),
        Chunk(content="think>c"),
    )
    moved = atomic_chunks(chunks, ATOMIC.grammar)
    # The delimiter arrives whole where it used to complete: after the native reasoning.
    assert moved == [
        Chunk(content="a"),
        Chunk(reasoning="r"),
        Chunk(content="<think>b"),
        Chunk(content="</think>c"),
    ]
    assert atomic_chunks(moved, ATOMIC.grammar) is moved
    chars = one_char_chunks(moved, ATOMIC.grammar)
    assert [chunk.content or chunk.reasoning for chunk in chars] == [
        "a",
        "r",
        "<think>",
        "b",
        "</think>",
        "c",
    ]


def test_a_normalizer_that_misses_split_delimiters_passes_when_they_are_atomic() -> None:
    """NoCarry finds a delimiter only within one chunk: under atomic delimiters every check
    feeds delimiters whole, so it passes; the same options otherwise fail it."""
    cases = [case for case in bundled_corpus().cases if case.taxonomy.startswith("SPLIT")]
    verdicts = {}
    for atomic in (True, False):
        options = {"native_with_tags": "merge", "atomic_delimiters": atomic}
        connection = connect(parse_impl("python:tests.fakes.broken_impls:NoCarry", options))
        results = run_implementation(connection, cases).results
        verdicts[atomic] = Counter(result.verdict for result in results)
    assert verdicts[True][Verdict.FAIL] == 0 and verdicts[True][Verdict.PASS] > 100
    assert verdicts[False][Verdict.FAIL] > 50


def test_a_case_that_is_one_delimiter_has_no_atomic_split_point() -> None:
    case = _case(Chunk(content="</think>"))
    assert len(plan_checks(case, DEFAULT, ("splits",))[0].requests) == 7
    (plan,) = plan_checks(case, ATOMIC, ("splits",))
    assert plan.skip == "no split points: atomic delimiters, and every cut is inside one"


def test_a_split_knows_whether_it_cuts_a_delimiter() -> None:
    splits = SplitRequests([Chunk(content="a</think>b")], DEFAULT.grammar)
    assert [splits.cuts_delimiter(i) for i in range(len(splits))] == [
        False,
        True,
        True,
        True,
        True,
        True,
        True,
        True,
        False,
    ]
    # Native reasoning parting a delimiter cuts it in every request.
    parted = SplitRequests(
        [Chunk(content="ab</th"), Chunk(reasoning="r"), Chunk(content="ink>c")], DEFAULT.grammar
    )
    assert all(parted.cuts_delimiter(i) for i in range(len(parted)))
