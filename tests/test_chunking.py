"""The splits check's cut points: every point of a short run; in a long run, every way of
splitting every possible delimiter, plus an even spread."""

from __future__ import annotations

import itertools

from conformance.contracts.normalizer._chunking import EXHAUSTIVE, SPREAD, SplitRequests, cut_points
from conformance.model.chunks import Chunk
from conformance.model.options import DEFAULT, Options


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
