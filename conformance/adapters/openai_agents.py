"""OpenAI Agents SDK: its Chat Completions model, streamed and whole, through real HTTP.

    conformance run --impl openai-agents=python:conformance.adapters.openai_agents:ChatCompletions

`OpenAIChatCompletionsModel` is the model the SDK runs an agent on against any
OpenAI-compatible server (and the base of its LiteLLM path's conversions). Streams go
through `stream_response`, whose `ChatCmplStreamHandler.handle_stream` turns each chunk into
Responses API events: a native `reasoning_content` (DeepSeek's field, PR #1098) becomes a
reasoning item's summary text (`response.reasoning_summary_text.delta`), a `reasoning` field
its reasoning text (`response.reasoning_text.delta`), and content an output text delta
(`response.output_text.delta`). Whole messages go through `get_response`, whose
`Converter.message_to_output_items` makes the same items. The model talks to a loopback
server (`event_loop_http`) that sends the case's chunks as server-sent events, one per `feed`.

Checked against the installed SDK (`agents/models/chatcmpl_stream_handler.py`,
`chatcmpl_converter.py`): no code looks for tags in the content, so it keeps native reasoning
and shows every tag; the thinking shown is what a UI rendering these events would show.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from agents import ModelSettings, OpenAIChatCompletionsModel, set_tracing_disabled
from agents.models.interface import ModelTracing
from openai import AsyncOpenAI
from openai.types.responses import (
    ResponseOutputMessage,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseTextDeltaEvent,
)

from ..interface import Chunk, Delta, implementation
from . import wire_events
from .common import delta, installed_version
from .event_loop_http import Streamed, local

#: What the agent is asked: any input will do, the answer is the case's.
PROMPT = "hi"

# Traces would be exported to OpenAI; splitting reasoning needs none.
set_tracing_disabled(True)


def _model(url: str) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=f"{url}/v1", api_key="-", max_retries=0)
    return OpenAIChatCompletionsModel(model=wire_events.MODEL, openai_client=client)


def _arguments() -> dict[str, Any]:
    return {
        "system_instructions": None,
        "input": PROMPT,
        "model_settings": ModelSettings(),
        "tools": [],
        "output_schema": None,
        "handoffs": [],
        "tracing": ModelTracing.DISABLED,
    }


def _shown(events: Iterable[Any]) -> Delta:
    assistant, thinking = [], []
    for event in events:
        if isinstance(event, ResponseTextDeltaEvent):
            assistant.append(event.delta)
        elif isinstance(
            event, ResponseReasoningSummaryTextDeltaEvent | ResponseReasoningTextDeltaEvent
        ):
            thinking.append(event.delta)
    return delta("".join(assistant), "".join(thinking))


@implementation(
    name="openai-agents (chat completions)",
    version=installed_version("openai-agents"),
    options={"native_with_tags": "native_only"},
)
class ChatCompletions:
    """One streamed response of the SDK's Chat Completions model."""

    def __init__(self) -> None:
        self._model: OpenAIChatCompletionsModel = local().client("openai-agents", _model)
        self._stream: Streamed[Any] = Streamed(wire_events.SSE, self._start)

    def _start(self) -> AsyncIterator[Any]:
        return self._model.stream_response(**_arguments())

    def feed(self, chunk: Chunk) -> Delta:
        return _shown(self._stream.send(wire_events.openai_event(chunk)))

    def finish(self) -> Delta:
        return _shown(self._stream.end(wire_events.openai_end()))

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        model = self._model
        response = local().whole(
            wire_events.JSON,
            wire_events.openai_whole(content, reasoning),
            lambda: model.get_response(**_arguments()),
        )
        assistant: list[str] = []
        thinking: list[str] = []
        for item in response.output:
            if isinstance(item, ResponseOutputMessage):
                assistant.extend(getattr(part, "text", "") for part in item.content)
            elif isinstance(item, ResponseReasoningItem):
                thinking.extend(part.text for part in item.summary)
                thinking.extend(part.text for part in item.content or ())
        return delta("".join(assistant), "".join(thinking))
