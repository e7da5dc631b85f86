"""AWS Bedrock's Converse API: `/model/{id}/converse` answers one JSON document whose
`output.message.content[]` holds `reasoningContent.reasoningText.text` (reasoning) and
`text` (content) blocks; `/model/{id}/converse-stream` answers in AWS's binary event-stream
framing (`application/vnd.amazon.eventstream`), decoded with botocore's maintained parser:
`contentBlockDelta` events carry `delta.reasoningContent.text` or `delta.text`.

Signatures and redacted reasoning carry no text. The stream is complete at `messageStop`.
Problems name the byte offset of the event-stream message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, mapping, provider_error, runs, text_of
from ._model import DecodeProblem

FAMILY = "bedrock"
FORMS = ("eventstream", "json")
#: Event types that carry no message text.
_SILENT = frozenset(("messageStart", "contentBlockStart", "contentBlockStop", "metadata"))
#: Content blocks and delta keys without text for either channel.
_NO_TEXT = frozenset(
    ("toolUse", "toolResult", "image", "document", "video", "citationsContent", "citation")
)


def decode_json(value: Any, line: int) -> list[Chunk]:
    value = mapping(value, "the response", line)
    if "output" not in value and "message" in value:
        raise provider_error({"error": {"message": value["message"]}}, line)
    output = mapping(value.get("output"), "output", line)
    message = mapping(output.get("message"), "output.message", line)
    blocks = message.get("content") or []
    if not isinstance(blocks, list):
        raise DecodeProblem("output.message.content must be an array", line)
    pieces: list[tuple[str, str]] = []
    for block in blocks:
        block = mapping(block, "a content block", line)
        if "text" in block:
            pieces.append((CONTENT, text_of(block, "text", "a text block", line) or ""))
        elif "reasoningContent" in block:
            reasoning = mapping(block["reasoningContent"], "reasoningContent", line)
            if "reasoningText" in reasoning:
                text_block = mapping(reasoning["reasoningText"], "reasoningText", line)
                text = text_of(text_block, "text", "reasoningText", line)
                pieces.append((REASONING, text or ""))
            elif "redactedContent" not in reasoning:
                raise DecodeProblem(
                    f"unknown reasoningContent keys {sorted(reasoning)} (known: reasoningText, "
                    "redactedContent)",
                    line,
                )
        elif _NO_TEXT.isdisjoint(block):
            raise DecodeProblem(f"unknown content block with keys {sorted(block)}", line)
    return runs(pieces) or [Chunk(content=None, reasoning=None)]


def decode_eventstream(body: bytes) -> list[Chunk]:
    chunks: list[Chunk] = []
    stopped_at: int | None = None
    for offset, event_type, message_type, payload in _messages(body):
        try:
            stopped = _event(chunks, offset, event_type, message_type, payload)
        except DecodeProblem as problem:
            if problem.offset is None:
                raise DecodeProblem(problem.message, offset=offset) from None
            raise
        if stopped:
            stopped_at = offset
    if stopped_at is None:
        raise DecodeProblem(
            "truncated body: the event stream ends without `messageStop`", offset=len(body)
        )
    return chunks


def _event(
    chunks: list[Chunk], offset: int, event_type: str, message_type: str, payload: dict[str, Any]
) -> bool:
    """Add the chunk of one event; True at `messageStop`."""
    if message_type != "event":
        raise DecodeProblem(
            f"the provider sent an {message_type} ({event_type}): {payload!r}"[:300],
            offset=offset,
        )
    if event_type == "messageStop":
        return True
    if event_type in _SILENT:
        return False
    if event_type != "contentBlockDelta":
        raise DecodeProblem(
            f"unknown event type {event_type!r} (known: contentBlockDelta, messageStop, "
            f"{', '.join(sorted(_SILENT))}); if AWS added it, teach "
            "conformance/cassettes/_bedrock.py",
            offset=offset,
        )
    delta = mapping(payload.get("delta"), "contentBlockDelta.delta", 1)
    if "text" in delta:
        chunks.append(Chunk(content=text_of(delta, "text", "delta", 1), reasoning=None))
    elif "reasoningContent" in delta:
        reasoning = mapping(delta["reasoningContent"], "delta.reasoningContent", 1)
        if "text" in reasoning:
            text = text_of(reasoning, "text", "delta.reasoningContent", 1)
            chunks.append(Chunk(content=None, reasoning=text))
        elif not {"signature", "redactedContent"} & set(reasoning):
            raise DecodeProblem(
                f"unknown reasoningContent delta keys {sorted(reasoning)}", offset=offset
            )
    elif _NO_TEXT.isdisjoint(delta):
        raise DecodeProblem(f"unknown delta with keys {sorted(delta)}", offset=offset)
    return False


def _messages(body: bytes) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(byte offset, :event-type, :message-type, JSON payload) of each message."""
    # Imported here: only event-stream bodies need botocore, and it is slow to import.
    # It ships no type information (no stubs, no py.typed): its names are Any here.
    from botocore.eventstream import (  # type: ignore[import-untyped]
        EventStreamBuffer,
        ParserError,
    )

    buffer = EventStreamBuffer()
    buffer.add_data(body)
    offset = 0
    try:
        for message in buffer:
            headers = message.headers
            size = message.prelude.total_length
            try:
                payload = json.loads(message.payload) if message.payload else {}
            except ValueError as error:
                raise DecodeProblem(
                    f"invalid JSON in an event-stream payload: {error}", offset=offset
                ) from None
            if not isinstance(payload, dict):
                raise DecodeProblem("an event-stream payload is not a JSON object", offset=offset)
            kind = headers.get(":event-type") or headers.get(":exception-type") or ""
            yield offset, str(kind), str(headers.get(":message-type", "event")), payload
            offset += size
    except ParserError as error:
        raise DecodeProblem(f"malformed event-stream message: {error}", offset=offset) from None
    if offset < len(body):
        raise DecodeProblem(
            f"truncated body: {len(body) - offset} bytes of an incomplete event-stream message",
            offset=offset,
        )
