"""A case's chunks as providers send them: OpenAI Chat Completions (SSE, and a whole
completion) and Ollama's `/api/chat` (JSON lines, and a whole response).

A chunk's `content` is the message content and its `reasoning` the provider's native
reasoning field: `reasoning_content` (DeepSeek's, which vLLM, SGLang and most
OpenAI-compatible servers use) for OpenAI, `thinking` for Ollama. A field that is None is
left out, as servers leave it out.
"""

from __future__ import annotations

import json
from typing import Any

from ..interface import Chunk

MODEL = "conformance-model"
SSE = "text/event-stream"
JSON = "application/json"
NDJSON = "application/x-ndjson"
#: Ollama's timestamps; any fixed one will do.
_CREATED_AT = "2026-01-01T00:00:00Z"


def _message(content: str | None, reasoning: str | None, native: str) -> dict[str, Any]:
    message: dict[str, Any] = {}
    if content is not None:
        message["content"] = content
    if reasoning is not None:
        message[native] = reasoning
    return message


def _completion(kind: str, choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": "conformance", "object": kind, "created": 0, "model": MODEL, "choices": [choice]}


def openai_event(chunk: Chunk) -> bytes:
    """One streamed `chat.completion.chunk` as one server-sent event."""
    delta = _message(chunk.get("content"), chunk.get("reasoning"), "reasoning_content")
    choice = {"index": 0, "delta": delta, "finish_reason": None}
    return b"data: %s\n\n" % json.dumps(_completion("chat.completion.chunk", choice)).encode()


def openai_end() -> bytes:
    """The end of a stream: the chunk with the finish reason, then `[DONE]`."""
    choice = {"index": 0, "delta": {}, "finish_reason": "stop"}
    last = json.dumps(_completion("chat.completion.chunk", choice)).encode()
    return b"data: %s\n\ndata: [DONE]\n\n" % last


def openai_whole(content: str | None, reasoning: str | None) -> bytes:
    """A non-streamed `chat.completion`."""
    message = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return json.dumps(_completion("chat.completion", choice)).encode()


def _ollama(message: dict[str, Any], *, done: bool) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": MODEL,
        "created_at": _CREATED_AT,
        "message": {"role": "assistant", **message},
        "done": done,
    }
    if done:
        line["done_reason"] = "stop"
    return line


def ollama_line(chunk: Chunk) -> bytes:
    """One streamed `/api/chat` response line."""
    message = _message(chunk.get("content"), chunk.get("reasoning"), "thinking")
    message.setdefault("content", "")
    return json.dumps(_ollama(message, done=False)).encode() + b"\n"


def ollama_end() -> bytes:
    """The last line of a stream: an empty message marked done."""
    return json.dumps(_ollama({"content": ""}, done=True)).encode() + b"\n"


def ollama_whole(content: str | None, reasoning: str | None) -> bytes:
    """A non-streamed `/api/chat` response."""
    message = _message(content if content is not None else "", reasoning, "thinking")
    return json.dumps(_ollama(message, done=True)).encode()
