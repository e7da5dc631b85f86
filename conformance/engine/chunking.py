"""Re-chunkings of a case's stream: the ways a check feeds the same input.

Every re-chunking keeps the order of native reasoning and content text (SPEC.md 4.3), so the
final channels must not change.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from conformance.model.chunks import Chunk
from conformance.transport.connections import StreamRequest


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


class SplitRequests(Sequence[StreamRequest]):
    """The `splits` check's requests, one per split point, each made only when asked for.

    A case of n characters has about n split points of n characters each: built at once they
    take memory growing with n squared (a 40,000-character case took 4.6 GB). This sequence
    holds the case once and makes each request on demand, so the runner can send and judge
    them a batch at a time.
    """

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._runs = _runs(chunks)
        #: (index of the content run, where its first split point is overall, its length)
        self._content: list[tuple[int, int, int]] = []
        offset = 0
        for index, (name, text) in enumerate(self._runs):
            if name == "content":
                self._content.append((index, offset, len(text)))
                offset += len(text)
        self._count = sum(max(length - 1, 0) for *_, length in self._content)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, position: int) -> StreamRequest: ...
    @overload
    def __getitem__(self, position: slice) -> Sequence[StreamRequest]: ...

    def __getitem__(self, position: int | slice) -> StreamRequest | Sequence[StreamRequest]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(self._count))]
        return StreamRequest(self._split(position)[1])

    def point(self, position: int) -> int:
        """The character offset (in the joined content) where request `position` cuts."""
        return self._split(position)[0]

    def _split(self, position: int) -> tuple[int, list[Chunk]]:
        if position < 0:
            position += self._count
        if not 0 <= position < self._count:
            raise IndexError(position)
        for index, offset, length in self._content:
            if position < length - 1:
                cut = position + 1
                text = self._runs[index][1]
                out = [Chunk(**{n: t}) for n, t in self._runs[:index]]
                out += [Chunk(content=text[:cut]), Chunk(content=text[cut:])]
                out += [Chunk(**{n: t}) for n, t in self._runs[index + 1 :]]
                return offset + cut, out
            position -= max(length - 1, 0)
        raise IndexError(position)  # pragma: no cover - the count says otherwise
