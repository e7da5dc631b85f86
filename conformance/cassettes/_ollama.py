"""Ollama's native API: `/api/chat` (`message.content`, `message.thinking`) and
`/api/generate` (`response`, `thinking`), streamed as NDJSON or answered as one object.

One chunk per object. The stream is complete at the object with `"done": true`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.model.chunks import Chunk

from ._common import mapping, provider_error, text_of
from ._model import DecodeProblem

FAMILY = "ollama"
FORMS = ("ndjson", "json")


def decode_objects(items: Iterable[tuple[Any, int]]) -> list[Chunk]:
    chunks: list[Chunk] = []
    done_at: int | None = None
    last = 0
    for value, line in items:
        last = line
        if done_at is not None:
            raise DecodeProblem(f"an object after the `done: true` object of line {done_at}", line)
        chunks.append(_chunk(value, line))
        if value.get("done") is True:
            done_at = line
    if done_at is None:
        raise DecodeProblem('truncated body: no object has `"done": true`', last or None)
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    return [_chunk(value, line)]


def _chunk(value: Any, line: int) -> Chunk:
    value = mapping(value, "a response object", line)
    if "error" in value:
        raise provider_error(value, line)
    if "message" in value:
        message = mapping(value["message"], "message", line)
        return Chunk(
            content=text_of(message, "content", "message", line),
            reasoning=text_of(message, "thinking", "message", line),
        )
    if "response" in value:
        return Chunk(
            content=text_of(value, "response", "the object", line),
            reasoning=text_of(value, "thinking", "the object", line),
        )
    raise DecodeProblem(
        "an object with neither `message` (/api/chat) nor `response` (/api/generate)", line
    )
