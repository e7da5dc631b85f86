"""The recorded response a replay sends for a derived case (SPEC.md 5.6).

Under a profile the case files do not name (another grammar, `start_in_reasoning`), `run`
checks derived cases in place of the written ones (`engine.plans.profiled`): the written
input with its delimiters renamed, or a close delimiter put before it. A replay sends a
recorded response, so for a derived case it sends the recording with the same change made
in the response body: each changed chunk's content string rewritten where the body holds
it (as JSON writes it, `\\u003c` escapes included), and a close delimiter that is a chunk
of its own sent as a frame of its own, a copy of the first content frame. The body is then
decoded again, and used only if it gives exactly the derived chunks; otherwise the case is
SKIP, saying why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

from conformance.cassettes._decode import decode_interaction
from conformance.cassettes._model import CassetteError, Decoded
from conformance.model.chunks import Chunk

#: How JSON writers put a string into a body: ASCII escapes, UTF-8, and Go's HTML-safe form.
_ENCODINGS: tuple[Callable[[str], str], ...] = (
    lambda text: json.dumps(text, ensure_ascii=False),
    json.dumps,
    lambda text: (
        json.dumps(text, ensure_ascii=False)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    ),
)


def derived_body(decoded: Decoded, chunks: Sequence[Chunk], family: str | None) -> bytes | str:
    """The response body that decodes to `chunks`: the recorded one when they are the
    recorded chunks, else the recording rewritten; or why it cannot be written."""
    recorded = decoded.chunks
    if tuple(chunks) == recorded:
        return decoded.interaction.body
    try:
        text = decoded.interaction.body.decode("utf-8")
    except UnicodeDecodeError:
        return "the recorded body is not UTF-8 text, which a replay could rewrite"
    if len(chunks) == len(recorded) + 1 and tuple(chunks[1:]) == recorded:
        if not decoded.streaming:
            return (
                "a non-streaming response holds one message, so a chunk of its own cannot be "
                "added to it (the derived case that glues it to the first chunk is replayed)"
            )
        candidates: Iterable[str | None] = _frames_before(text, recorded, chunks[0])
    elif len(chunks) == len(recorded):
        # A frame may carry the content twice (Together's `text` beside `delta.content`).
        candidates = (_contents_rewritten(text, recorded, chunks, every) for every in (0, 1))
    else:
        candidates = ()
    for candidate in candidates:
        if candidate is None:
            continue
        body = candidate.encode("utf-8")
        try:
            again = decode_interaction(replace(decoded.interaction, body=body), family).chunks
        except CassetteError:
            continue
        if again == tuple(chunks):
            return body
    return "the derived input cannot be written into the recorded response"


def _found(text: str, content: str, start: int) -> tuple[int, str, Callable[[str], str]] | None:
    """Where `content` sits as a JSON string in `text` from `start`, as written there: as a
    field's value first (the same text may end a longer string, as in `"say \\"x"`)."""
    for prefix in (":", ": ", ""):
        for encode in _ENCODINGS:
            written = encode(content)
            at = text.find(prefix + written, start)
            if at >= 0:
                return at + len(prefix), written, encode
    return None


#: A missing or empty content as JSON writers put it, for a derived chunk that fills it.
_NO_CONTENT = tuple(
    f'"{field}":{space}{value}'
    for field in ("content", "text", "response")
    for space in ("", " ")
    for value in ("null", '""')
)


def _contents_rewritten(
    text: str, recorded: Sequence[Chunk], chunks: Sequence[Chunk], every: int
) -> str | None:
    """`text` with each changed chunk's content string replaced, in order: its first
    occurrence, or (`every`) every occurrence in the line that holds it."""
    cursor = 0
    for old, new in zip(recorded, chunks, strict=True):
        if old.reasoning != new.reasoning:
            return None
        if not old.content and new.content:  # a close delimiter glued to no content
            spots = [(text.find(n, cursor), n) for n in _NO_CONTENT if n in text[cursor:]]
            if not spots:
                return None
            at, empty = min(spots)
            field = empty.split(":")[0]
            replacement = f"{field}:{json.dumps(new.content, ensure_ascii=False)}"
            text = text[:at] + replacement + text[at + len(empty) :]
            cursor = at + len(replacement)
            continue
        found = _found(text, old.content, cursor) if old.content else None
        if found is None:
            if old.content != new.content:
                return None
            continue
        at, written, encode = found
        end = _line_end(text, at) if every else at + len(written)
        replaced = text[at:end].replace(written, encode(new.content or ""))
        text = text[:at] + replaced + text[end:]
        cursor = at + len(replaced)
    return text


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end + 1


#: How many places a frame of its own is tried at, from the start of the body.
_PLACES = 64


def _frames_before(text: str, recorded: Sequence[Chunk], first: Chunk) -> Iterator[str]:
    """`text` with a frame of its own for `first` (content only) at each line start up to
    the first content frame: a copy of that frame (the line that holds the first content
    string) with its content replaced by `first`'s; an SSE event keeps its blank line."""
    content = next((chunk.content for chunk in recorded if chunk.content), None)
    if first.reasoning or not first.content or content is None:
        return
    found = _found(text, content, 0)
    if found is None:
        return
    at, written, encode = found
    start = text.rfind("\n", 0, at) + 1
    end = _line_end(text, at)
    line = text[start:end]
    ending = line[len(line.rstrip("\r\n")) :] or "\n"
    frame = line.replace(written, encode(first.content)).rstrip("\r\n") + ending
    if text[end : end + len(ending)] == ending:  # events separated by a blank line
        frame += ending
    places = [0, *(i + 1 for i, c in enumerate(text[:start]) if c == "\n")]
    for place in places[:_PLACES]:
        yield text[:place] + frame + text[place:]
