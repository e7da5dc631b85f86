"""Cohere's v2 Chat API (`/v2/chat`): `message.content[]` blocks of type `thinking`
(reasoning, in `thinking`) and `text` (content, in `text`); streamed as SSE events named by
their JSON `type`: `content-delta` carries `delta.message.content.thinking` or `.text`.

Non-streaming: one run of chunks from the blocks in order. Streaming: one chunk per
`content-delta`; the stream is complete at `message-end`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, load_json, mapping, provider_error, runs, text_of
from ._model import DecodeProblem
from ._sse import SseEvent

FAMILY = "cohere"
FORMS = ("sse", "json")
#: Stream events that carry no message text.
_SILENT = frozenset(
    (
        "message-start",
        "content-start",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "debug",
    )
)
#: Content blocks that carry no text for either channel.
_NO_TEXT_BLOCKS = frozenset(("image", "image_url", "document"))


def decode_sse(events: Iterable[SseEvent]) -> list[Chunk]:
    chunks: list[Chunk] = []
    ended = False
    last = 0
    for event in events:
        last = event.line
        if ended:
            raise DecodeProblem("an event after `message-end`", event.line)
        value = mapping(load_json(event.data, event.line, "a data line"), "an event", event.line)
        kind = value.get("type")
        if kind == "message-end":
            ended = True
            continue
        if kind in _SILENT:
            continue
        if kind == "error" or "error" in value:
            raise provider_error(value if "error" in value else {"error": value}, event.line)
        if kind != "content-delta":
            raise DecodeProblem(
                f"unknown Cohere stream event type {kind!r} (known: content-delta, "
                f"message-end, {', '.join(sorted(_SILENT))}); if Cohere added it, teach "
                "conformance/cassettes/_cohere.py",
                event.line,
            )
        delta = mapping(value.get("delta"), "content-delta.delta", event.line)
        message = mapping(delta.get("message"), "delta.message", event.line)
        content = mapping(message.get("content"), "delta.message.content", event.line)
        chunks.append(
            Chunk(
                content=text_of(content, "text", "delta.message.content", event.line),
                reasoning=text_of(content, "thinking", "delta.message.content", event.line),
            )
        )
    if not ended:
        raise DecodeProblem("truncated body: the stream ends without `message-end`", last or None)
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    value = mapping(value, "the response", line)
    if "error" in value:
        raise provider_error(value, line)
    if isinstance(value.get("message"), str):  # Cohere's error bodies: {"message": "..."}
        raise provider_error({"error": {"message": value["message"]}}, line)
    message = mapping(value.get("message"), "message", line)
    blocks = message.get("content") or []
    if not isinstance(blocks, list):
        raise DecodeProblem("message.content must be an array of blocks", line)
    pieces: list[tuple[str, str]] = []
    for block in blocks:
        block = mapping(block, "a block of message.content", line)
        kind = block.get("type")
        if kind == "thinking":
            pieces.append((REASONING, text_of(block, "thinking", "a thinking block", line) or ""))
        elif kind == "text":
            pieces.append((CONTENT, text_of(block, "text", "a text block", line) or ""))
        elif kind not in _NO_TEXT_BLOCKS:
            raise DecodeProblem(
                f"unknown content block type {kind!r} (known: thinking, text, "
                f"{', '.join(sorted(_NO_TEXT_BLOCKS))})",
                line,
            )
    return runs(pieces) or [Chunk(content=None, reasoning=None)]
