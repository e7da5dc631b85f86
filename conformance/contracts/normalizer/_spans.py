"""Text spans of derived cases: a content with some spans replaced (delimiters renamed),
and the chunk boundaries carried over to the new text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from conformance.model.chunks import Chunk


def without_prefix(chunks: Sequence[Chunk], size: int) -> tuple[Chunk, ...]:
    """`chunks` less their first `size` content characters."""
    out = []
    for chunk in chunks:
        content = chunk.content
        if size and content:
            cut = min(size, len(content))
            size -= cut
            chunk = replace(chunk, content=content[cut:])
        out.append(chunk)
    return tuple(out)


def renamed_text(delimiter: re.Pattern[str], names: dict[str, str], text: str) -> str:
    return delimiter.sub(lambda match: names[match.group()], text)


def between(content: str, spans: Sequence[tuple[int, int, str]]) -> list[str]:
    pieces, at = [], 0
    for start, end, _ in spans:
        pieces.append(content[at:start])
        at = end
    pieces.append(content[at:])
    return pieces


def rebuilt(content: str, spans: Sequence[tuple[int, int, str]]) -> str:
    pieces = between(content, spans)
    return "".join(p + (spans[i][2] if i < len(spans) else "") for i, p in enumerate(pieces))


def shifted(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The spans' places in the renamed content."""
    out, shift = [], 0
    for start, end, new in spans:
        out.append((start + shift, start + shift + len(new), new))
        shift += len(new) - (end - start)
    return out


def mapped(point: int, spans: Sequence[tuple[int, int, str]]) -> int:
    """Where a cut at `point` of the source content goes in the renamed content. A cut inside
    a delimiter stays inside it: after its first character, before its last, or at the same
    fraction of it."""
    shift = 0
    for start, end, new in spans:
        if point <= start:
            break
        if point < end:
            size, offset = end - start, point - start
            if offset == 1:
                inside = 1
            elif offset == size - 1:
                inside = len(new) - 1
            else:
                inside = min(len(new) - 1, max(1, round(offset * len(new) / size)))
            return start + shift + inside
        shift += len(new) - (end - start)
    return point + shift


def rechunked(
    chunks: Sequence[Chunk], spans: Sequence[tuple[int, int, str]], renamed: str
) -> tuple[Chunk, ...]:
    out, at = [], 0
    for chunk in chunks:
        if chunk.content is None:
            out.append(chunk)
            continue
        end = at + len(chunk.content)
        out.append(replace(chunk, content=renamed[mapped(at, spans) : mapped(end, spans)]))
        at = end
    return tuple(out)
