"""LlamaIndex: its Ollama chat model, streamed and whole, through real HTTP.

    conformance run --impl llama-index-ollama=python:conformance.adapters.llama_index:OllamaChat

`llama_index.llms.ollama.Ollama` is LlamaIndex's client for Ollama's `/api/chat`. Streams go
through `astream_chat`: each response line becomes a `ChatResponse` whose `delta` is the
line's content and whose `additional_kwargs["thinking_delta"]` is its `thinking` field (the
reasoning a UI shows as it arrives). Whole messages go through `achat`, which makes a
`ThinkingBlock` of the `thinking` field and a `TextBlock` of the content. The model talks to
a loopback server (`event_loop_http`) that sends the case's chunks as Ollama's JSON lines, one
per `feed`.

Checked against the installed llama-index-llms-ollama (`llama_index/llms/ollama/base.py`):
content is never searched for tags (the split is Ollama's own, `think=True`), so it keeps
native reasoning and shows every tag. llama-index-llms-openai-like, LlamaIndex's other
client with a thinking delta (PR #20786), pins transformers<5, which this project's
environment cannot take.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock, ThinkingBlock
from llama_index.llms.ollama import Ollama

from ..interface import Chunk, Delta, implementation
from . import wire_events
from .common import delta, installed_version
from .event_loop_http import Streamed, local

MESSAGES = [ChatMessage(role="user", content="hi")]


def _llm(url: str) -> Ollama:
    # A known context window: otherwise the model asks the server (`/api/show`, blocking).
    return Ollama(
        model=wire_events.MODEL,
        base_url=url,
        thinking=True,
        request_timeout=30.0,
        context_window=8192,
    )


def _shown(responses: list[Any]) -> Delta:
    assistant = "".join(r.delta or "" for r in responses)
    thinking = "".join(r.additional_kwargs.get("thinking_delta") or "" for r in responses)
    return delta(assistant, thinking)


@implementation(
    name="llama-index (ollama)",
    version=installed_version("llama-index-llms-ollama"),
    options={"native_with_tags": "native_only"},
)
class OllamaChat:
    """One `astream_chat` of LlamaIndex's Ollama model."""

    def __init__(self) -> None:
        self._llm: Ollama = local().client("llama-index-ollama", _llm)
        self._stream: Streamed[Any] = Streamed(wire_events.NDJSON, self._responses)

    async def _responses(self) -> AsyncIterator[Any]:
        async for response in await self._llm.astream_chat(MESSAGES):
            yield response

    def feed(self, chunk: Chunk) -> Delta:
        return _shown(self._stream.send(wire_events.ollama_line(chunk)))

    def finish(self) -> Delta:
        return _shown(self._stream.end(wire_events.ollama_end()))

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        llm = self._llm
        response = local().whole(
            wire_events.JSON,
            wire_events.ollama_whole(content, reasoning),
            lambda: llm.achat(MESSAGES),
        )
        blocks = response.message.blocks
        return delta(
            "".join(b.text for b in blocks if isinstance(b, TextBlock)),
            "".join(b.content or "" for b in blocks if isinstance(b, ThinkingBlock)),
        )
