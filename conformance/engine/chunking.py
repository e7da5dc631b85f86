"""Re-chunkings of a case's stream: the ways a check feeds the same input.

Every re-chunking keeps the order of native reasoning and content text (SPEC.md 4.3), so the
final channels must not change.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conformance.model.chunks import Chunk
from conformance.model.grammar import Grammar


def pieces(chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """The stream as ordered (field, text) pieces: within a chunk, reasoning before content.
    Empty and null fields carry nothing and disappear."""
    out: list[tuple[str, str]] = []
    for chunk in chunks:
        if chunk.reasoning:
            out.append(("reasoning", chunk.reasoning))
        if chunk.content:
            out.append(("content", chunk.content))
    return out


def _runs(chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """Pieces with adjacent content merged into one run."""
    runs: list[tuple[str, str]] = []
    for name, text in pieces(chunks):
        if runs and name == "content" and runs[-1][0] == "content":
            runs[-1] = ("content", runs[-1][1] + text)
        else:
            runs.append((name, text))
    return runs


def one_char_chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    """One character (code point) per chunk."""
    return [Chunk(**{name: char}) for name, text in pieces(chunks) for char in text]


#: Content runs up to this long are cut at every point. Longer runs (whole recorded
#: responses) are cut where a delimiter could be split, which is where splitting matters, and
#: at evenly spaced points between: the cost of every point grows with the square of the length.
EXHAUSTIVE = 512
#: Evenly spaced cut points added in a long run, besides those near delimiter characters.
SPREAD = 64


def cut_points(text: str, grammar: Grammar | None) -> list[int]:
    """Where a content run is cut: every point strictly inside a short run; in a long one,
    every point within a delimiter's length after a character a delimiter can start with
    (so every way of splitting a delimiter there), near both ends, and SPREAD points between."""
    size = len(text)
    if size <= EXHAUSTIVE or grammar is None:
        return list(range(1, size))
    reach = grammar.max_prefix + 1
    points = set(range(1, min(size, reach + 1))) | set(range(max(1, size - reach), size))
    points |= {size * step // (SPREAD + 1) for step in range(1, SPREAD + 1)}
    for start in grammar.starts:
        at = text.find(start)
        while at != -1:
            points.update(range(max(1, at), min(size, at + reach + 1)))
            at = text.find(start, at + 1)
    return sorted(points)


def split_points(
    chunks: Sequence[Chunk], grammar: Grammar | None = None
) -> Iterator[tuple[int, list[Chunk]]]:
    """Two-way splits of the content, each split point once, made lazily: the content runs
    are joined, cut at the point, and native reasoning stays where it was. Without a grammar
    every point is cut; with one, long runs are cut as `cut_points` says."""
    runs = _runs(chunks)
    offset = 0
    for index, (name, text) in enumerate(runs):
        if name != "content":
            continue
        for cut in cut_points(text, grammar):
            out = [Chunk(**{n: t}) for n, t in runs[:index]]
            out += [Chunk(content=text[:cut]), Chunk(content=text[cut:])]
            out += [Chunk(**{n: t}) for n, t in runs[index + 1 :]]
            yield offset + cut, out
        offset += len(text)
