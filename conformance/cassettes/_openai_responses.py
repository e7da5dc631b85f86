"""OpenAI Responses (`POST /v1/responses`), and OpenRouter's data-only copy of it.

Streaming: one chunk per text delta event: `response.reasoning_summary_text.delta` and
`response.reasoning_text.delta` (reasoning), `response.output_text.delta` and
`response.refusal.delta` (content). The stream ends with `response.completed` or
`response.incomplete` (OpenRouter adds `data: [DONE]`); `response.failed` and `error` are
provider errors. Non-streaming: the `output` items in order, reasoning items' summary and
reasoning text as reasoning, message items' output text and refusals as content.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, load_json, mapping, provider_error, runs, text_of
from ._model import DecodeProblem
from ._sse import SseEvent

FAMILY = "openai-responses"
FORMS = ("sse", "json")

_TEXT_DELTAS = {
    "response.reasoning_summary_text.delta": REASONING,
    "response.reasoning_text.delta": REASONING,
    "response.output_text.delta": CONTENT,
    "response.refusal.delta": CONTENT,
}
_QUIET = {
    "response.created",
    "response.in_progress",
    "response.queued",
    "response.output_item.added",
    "response.output_item.done",
    "response.content_part.added",
    "response.content_part.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.done",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.done",
}
#: Tool-call progress events, by prefix: they carry no text for either channel.
_QUIET_PREFIXES = (
    "response.function_call_arguments.",
    "response.custom_tool_call_input.",
    "response.file_search_call.",
    "response.web_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_",
)
_END = {"response.completed", "response.incomplete"}


def decode_sse(events: Iterable[SseEvent]) -> list[Chunk]:
    chunks: list[Chunk] = []
    ended = done = False
    last = 0
    for event in events:
        last = event.line
        if event.data.strip() == "[DONE]":
            done = True
            continue
        if done or ended:
            raise DecodeProblem("an event after the end of the response", event.line)
        value = mapping(load_json(event.data, event.line, "a data line"), "a data line", event.line)
        kind = value.get("type")
        if event.named and event.name != kind:
            raise DecodeProblem(
                f"the event is named {event.name!r} but its data has type {kind!r}", event.line
            )
        if kind == "error":
            raise provider_error({"error": value}, event.line)
        if kind == "response.failed":
            response = value.get("response") or {}
            raise provider_error({"error": response.get("error") or "response.failed"}, event.line)
        if kind in _TEXT_DELTAS:
            text = text_of(value, "delta", kind, event.line)
            chunks.append(Chunk(**{_TEXT_DELTAS[kind]: text or ""}))
        elif kind in _END:
            ended = True
        elif kind not in _QUIET and not str(kind).startswith(_QUIET_PREFIXES):
            raise DecodeProblem(
                f"unknown event {kind!r}; if OpenAI added it, teach "
                "conformance/cassettes/_openai_responses.py",
                event.line,
            )
    if not ended:
        raise DecodeProblem(
            "truncated body: the stream has no response.completed or response.incomplete event",
            last or None,
        )
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    value = mapping(value, "the response", line)
    if value.get("error"):
        raise provider_error(value, line)
    output = value.get("output")
    if not isinstance(output, list):
        raise DecodeProblem("the response has no `output` array", line)
    pieces: list[tuple[str, str]] = []
    for item in output:
        item = mapping(item, "an output item", line)
        kind = item.get("type")
        if kind == "reasoning":
            for part in item.get("summary") or ():
                pieces += _part(part, "summary_text", REASONING, line)
            for part in item.get("content") or ():
                pieces += _part(part, "reasoning_text", REASONING, line)
        elif kind == "message":
            for part in item.get("content") or ():
                part = mapping(part, "a message content part", line)
                if part.get("type") == "refusal":
                    pieces.append((CONTENT, text_of(part, "refusal", "a refusal", line) or ""))
                else:
                    pieces += _part(part, "output_text", CONTENT, line)
    return runs(pieces)


def _part(part: Any, kind: str, where: str, line: int) -> list[tuple[str, str]]:
    part = mapping(part, f"a {kind} part", line)
    if part.get("type") != kind:
        raise DecodeProblem(f"expected a {kind} part, found type {part.get('type')!r}", line)
    return [(where, text_of(part, "text", kind, line) or "")]
