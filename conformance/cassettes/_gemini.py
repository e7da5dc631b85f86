"""Google Gemini `generateContent` and `streamGenerateContent` (SSE with `alt=sse`, else one
streamed JSON array).

A text part with `thought: true` is reasoning; any other text part is content; parts without
text (function calls, inline data) give nothing. Streaming: the chunks of each response in
turn (one for a response whose text parts are all one kind). The stream is complete once a
candidate has a `finishReason`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, load_json, mapping, provider_error, runs, text_of
from ._model import DecodeProblem
from ._sse import SseEvent

FAMILY = "gemini"
FORMS = ("sse", "json-array", "json")


def decode_sse(events: Iterable[SseEvent]) -> list[Chunk]:
    items = []
    for event in events:
        if event.name != "message":
            raise DecodeProblem(
                f"unknown event {event.name!r}: Gemini streams have no named events", event.line
            )
        items.append((load_json(event.data, event.line, "a data line"), event.line))
    return decode_objects(items)


def decode_objects(items: Iterable[tuple[Any, int]]) -> list[Chunk]:
    chunks: list[Chunk] = []
    finished = False
    last = 0
    for value, line in items:
        last = line
        pieces, finish = _response(value, line)
        chunks += runs(pieces)
        finished = finished or finish
    if not finished:
        raise DecodeProblem(
            "truncated body: no response in the stream has a finishReason", last or None
        )
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    pieces, _ = _response(value, line)
    return runs(pieces)


def _response(value: Any, line: int) -> tuple[list[tuple[str, str]], bool]:
    value = mapping(value, "a response", line)
    if "error" in value:
        raise provider_error(value, line)
    candidates = value.get("candidates")
    if not candidates:
        feedback = value.get("promptFeedback") or {}
        if isinstance(feedback, Mapping) and feedback.get("blockReason"):
            raise DecodeProblem(f"the prompt was blocked: {feedback['blockReason']}", line)
        return [], False
    if not isinstance(candidates, list):
        raise DecodeProblem("`candidates` must be an array", line)
    candidate = mapping(candidates[0], "candidates[0]", line)
    content = candidate.get("content") or {}
    parts = mapping(content, "candidates[0].content", line).get("parts") or []
    if not isinstance(parts, list):
        raise DecodeProblem("candidates[0].content.parts must be an array", line)
    pieces = []
    for part in parts:
        part = mapping(part, "a part", line)
        text = text_of(part, "text", "a part", line)
        if text is not None:
            pieces.append((REASONING if part.get("thought") is True else CONTENT, text))
    return pieces, bool(candidate.get("finishReason"))
