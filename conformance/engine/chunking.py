"""Re-chunkings of a case's stream: the ways a check feeds the same input.

Every re-chunking keeps the order of native reasoning and content text (SPEC.md 4.3), so the
final channels must not change.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from conformance.model.chunks import Chunk


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


def split_points(chunks: Sequence[Chunk]) -> Iterator[tuple[int, list[Chunk]]]:
    """Every two-way split of the content, each split point once: the content runs are
    joined, cut at the point, and native reasoning stays where it was."""
    runs = _runs(chunks)
    offset = 0
    for index, (name, text) in enumerate(runs):
        if name != "content":
            continue
        for cut in range(1, len(text)):
            out = [Chunk(**{n: t}) for n, t in runs[:index]]
            out += [Chunk(content=text[:cut]), Chunk(content=text[cut:])]
            out += [Chunk(**{n: t}) for n, t in runs[index + 1 :]]
            yield offset + cut, out
        offset += len(text)
