"""Anthropic Messages: extended thinking, redacted thinking and text blocks.

Streaming: one chunk per `text_delta` (content) and `thinking_delta` (reasoning), and per
`content_block_start` that already carries text. Signature deltas, redacted thinking (opaque
data, no text), tool input and citations give no chunk. Non-streaming: the `content` blocks
in order, thinking as reasoning and text as content (runs of chunks, see _common.runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, load_json, mapping, provider_error, runs, text_of
from ._model import DecodeProblem
from ._sse import SseEvent

FAMILY = "anthropic"
FORMS = ("sse", "json")

_EVENTS = {
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
}
#: Block types and the key of their text; None: a block with no text for either channel.
_BLOCKS: dict[str, tuple[str, str] | None] = {
    "text": (CONTENT, "text"),
    "thinking": (REASONING, "thinking"),
    "redacted_thinking": None,
    "tool_use": None,
    "server_tool_use": None,
    "web_search_tool_result": None,
    "web_fetch_tool_result": None,
    "code_execution_tool_result": None,
    "mcp_tool_use": None,
    "mcp_tool_result": None,
    "container_upload": None,
    "bash_code_execution_tool_result": None,
    "text_editor_code_execution_tool_result": None,
    "tool_search_tool_result": None,
    "advisor_tool_result": None,
    # A summary of earlier turns that the server compacted: neither answer nor reasoning.
    "compaction": None,
}
_DELTAS: dict[str, tuple[str, str] | None] = {
    "text_delta": (CONTENT, "text"),
    "thinking_delta": (REASONING, "thinking"),
    "signature_delta": None,
    "input_json_delta": None,
    "citations_delta": None,
}


def decode_sse(events: Iterable[SseEvent]) -> list[Chunk]:
    chunks: list[Chunk] = []
    stopped = False
    last = 0
    for event in events:
        last = event.line
        value = mapping(load_json(event.data, event.line, "a data line"), "a data line", event.line)
        kind = value.get("type")
        if event.named and event.name != kind:
            raise DecodeProblem(
                f"the event is named {event.name!r} but its data has type {kind!r}", event.line
            )
        if kind not in _EVENTS:
            raise DecodeProblem(
                f"unknown event {kind!r} (known: {', '.join(sorted(_EVENTS))}); if Anthropic "
                "added it, teach conformance/cassettes/_anthropic.py",
                event.line,
            )
        if kind == "error":
            raise provider_error(value, event.line)
        if stopped:
            raise DecodeProblem(f"a {kind} event after message_stop", event.line)
        if kind == "message_stop":
            stopped = True
        elif kind == "content_block_start":
            block = mapping(value.get("content_block"), "content_block", event.line)
            piece = _piece(block, _BLOCKS, "content block", event.line)
            if piece is not None and piece[1]:
                chunks.append(_chunk(*piece))
        elif kind == "content_block_delta":
            delta = mapping(value.get("delta"), "delta", event.line)
            piece = _piece(delta, _DELTAS, "delta", event.line)
            if piece is not None:
                chunks.append(_chunk(*piece))
    if not stopped:
        raise DecodeProblem("truncated body: the stream has no message_stop event", last or None)
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    value = mapping(value, "the response", line)
    if value.get("type") == "error":
        raise provider_error(value, line)
    blocks = value.get("content")
    if not isinstance(blocks, list):
        raise DecodeProblem("the response has no `content` array of blocks", line)
    pieces = []
    for block in blocks:
        piece = _piece(mapping(block, "a content block", line), _BLOCKS, "content block", line)
        if piece is not None and piece[1] is not None:
            pieces.append((piece[0], piece[1]))
    return runs(pieces)


def _piece(
    value: Mapping[str, Any], known: Mapping[str, tuple[str, str] | None], what: str, line: int
) -> tuple[str, str | None] | None:
    kind = value.get("type")
    if kind not in known:
        raise DecodeProblem(
            f"unknown {what} type {kind!r} (known: {', '.join(known)}); if Anthropic added "
            "it, teach conformance/cassettes/_anthropic.py",
            line,
        )
    assert isinstance(kind, str)  # as every key of `known` is
    spec = known[kind]
    if spec is None:
        return None
    where, key = spec
    return where, text_of(value, key, f"the {kind} {what}", line)


def _chunk(where: str, text: str | None) -> Chunk:
    return Chunk(**{where: text if text is not None else ""})
