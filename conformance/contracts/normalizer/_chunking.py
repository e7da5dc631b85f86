"""Re-chunkings of a case's stream: the ways a check feeds the same input.

Every re-chunking keeps the order of native reasoning and content text (SPEC.md 4.3), so the
final channels must not change.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import overload

from conformance.model.chunks import Chunk
from conformance.model.cuts import cuts_delimiter, inside_delimiters
from conformance.model.grammar import Grammar
from conformance.model.plans import UniformRequests
from conformance.model.requests import StreamRequest


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


def one_char_chunks(chunks: Sequence[Chunk], atomic: Grammar | None = None) -> list[Chunk]:
    """One character (code point) per chunk; with an `atomic` grammar (SPEC.md 5.11), each
    of its delimiter occurrences is one chunk, whole."""
    out: list[Chunk] = []
    for name, text in pieces(chunks) if atomic is None else _runs(chunks):
        # Positional arguments: a keyword mapping per character costs as much as the chunk.
        if name != "content":
            out += map(_reasoning, text)
        elif atomic is None:
            out += map(Chunk, text)
        else:
            out += map(Chunk, _atoms(text, atomic))
    return out


def _atoms(text: str, grammar: Grammar) -> list[str]:
    """The characters of `text`, each delimiter occurrence kept whole."""
    atoms: list[str] = []
    pos = 0
    for start, end, _ in grammar.occurrences(text):
        atoms += text[pos:start]
        atoms.append(text[start:end])
        pos = end
    atoms += text[pos:]
    return atoms


def atomic_chunks(chunks: Sequence[Chunk], grammar: Grammar) -> Sequence[Chunk]:
    """The case's own chunking with every chunk boundary that falls inside a delimiter
    occurrence moved to the start of that delimiter (SPEC.md 5.11); the chunks themselves
    when none does.

    The content is scanned as one text, native reasoning between its pieces or not, as the
    normalizer scans it. A delimiter then arrives whole in the chunk where it used to
    complete, so it acts at the same point of the stream and the channels cannot change."""
    if len(chunks) < 2:
        return chunks
    texts = [chunk.content or "" for chunk in chunks]
    text = "".join(texts)
    occurrences = grammar.occurrences(text)
    starts = [start for start, _, _ in occurrences]
    bounds = list(itertools.accumulate(map(len, texts)))
    moved = []
    for bound in bounds:
        at = bisect.bisect_left(starts, bound) - 1
        inside = at >= 0 and bound < occurrences[at][1]
        moved.append(starts[at] if inside else bound)
    if moved == bounds:
        return chunks
    out = []
    for chunk, low, high in zip(chunks, [0, *moved[:-1]], moved, strict=True):
        piece = text[low:high]
        out.append(Chunk(piece if piece or chunk.content is not None else None, chunk.reasoning))
    return out


def _reasoning(text: str) -> Chunk:
    return Chunk(None, text)


#: Content runs up to this long are cut at every point. Longer runs (whole recorded
#: responses) are cut where a delimiter could be split, which is where splitting matters, and
#: at evenly spaced points between: the cost of every point grows with the square of the length.
EXHAUSTIVE = 512
#: Evenly spaced cut points added in a long run, besides those near delimiter characters.
SPREAD = 64


def cut_points(text: str, grammar: Grammar | None, atomic: bool = False) -> list[int]:
    """Where a content run is cut: every point strictly inside a short run; in a long one,
    every point within a delimiter's length after a character a delimiter can start with
    (so every way of splitting a delimiter there), near both ends, and SPREAD points between.
    With `atomic` (SPEC.md 5.11), no point strictly inside a delimiter of `grammar`."""
    points = _points(text, grammar)
    if not atomic or grammar is None:
        return points
    inside = inside_delimiters(text, grammar)
    return [point for point in points if point not in inside] if inside else points


def _points(text: str, grammar: Grammar | None) -> list[int]:
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


class SplitRequests(UniformRequests):
    """The `splits` check's requests, one per split point, each made only when asked for.

    A case of n characters has about n split points of n characters each: built at once they
    take memory growing with n squared (a 40,000-character case took 4.6 GB). This sequence
    holds the case once and makes each request on demand, so the runner can send and judge
    them a batch at a time.
    """

    def __init__(
        self, chunks: Sequence[Chunk], grammar: Grammar | None = None, atomic: bool = False
    ) -> None:
        self._runs = _runs(chunks)
        #: One chunk per run, shared by every request (chunks are immutable): a request is
        #: these with one content run replaced by its two halves.
        self._chunks = [Chunk(**{name: text}) for name, text in self._runs]
        #: Per request: (index of the content run, where the run starts overall, the cut).
        self._cuts: list[tuple[int, int, int]] = []
        offset = 0
        for index, (name, text) in enumerate(self._runs):
            if name == "content":
                self._cuts += [(index, offset, cut) for cut in cut_points(text, grammar, atomic)]
                offset += len(text)
        #: The characters of every request (each feeds the whole stream).
        self.chars = sum(len(text) for _, text in self._runs)
        self._grammar = grammar
        #: The points strictly inside a delimiter of the joined content, once asked for.
        self._inside: set[int] | None = None
        self._parted = False

    def __len__(self) -> int:
        return len(self._cuts)

    @overload
    def __getitem__(self, position: int) -> StreamRequest: ...
    @overload
    def __getitem__(self, position: slice) -> Sequence[StreamRequest]: ...

    def __getitem__(self, position: int | slice) -> StreamRequest | Sequence[StreamRequest]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        index, _, cut = self._cuts[position]
        text = self._runs[index][1]
        out = self._chunks[:index]
        out += [Chunk(text[:cut]), Chunk(text[cut:])]
        out += self._chunks[index + 1 :]
        return StreamRequest(out)

    def label(self, index: int) -> str:
        return f"split at {self.point(index)}"

    def point(self, position: int) -> int:
        """The character offset (in the joined content) where request `position` cuts."""
        _, offset, cut = self._cuts[position]
        return offset + cut

    def cuts_delimiter(self, position: int) -> bool:
        """Whether request `position` cuts strictly inside a delimiter of the grammar: at its
        split point, or where native reasoning parts the content in every request."""
        if self._grammar is None:
            return False
        if self._inside is None:
            self._inside = inside_delimiters(
                "".join(chunk.content or "" for chunk in self._chunks), self._grammar
            )
            self._parted = cuts_delimiter((chunk.content for chunk in self._chunks), self._grammar)
        return self._parted or self.point(position) in self._inside
