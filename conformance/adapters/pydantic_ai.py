"""pydantic-ai: how its OpenAI-compatible chat model splits reasoning, streamed and whole.

    conformance run --impl pydantic-ai=python:conformance.adapters.pydantic_ai:PydanticAI

Streams go through `OpenAIStreamedResponse._map_part_delta`, the hook pydantic-ai's streamed
Chat Completions response runs on every chunk: a native reasoning field becomes a
ThinkingPart, and content goes to `ModelResponsePartsManager.handle_text_delta` with the
model profile's thinking tags, which recognises a tag only when it is a whole text delta.
Whole messages go through `OpenAIChatModel._process_response`, which splits the content with
`split_content_into_text_and_thinking`. Checked against the installed pydantic-ai
(`pydantic_ai/models/openai/_chat_streaming.py`): `_get_event_iterator` calls
`_map_part_delta(choice)` for every chunk's choice and, after the last chunk, flushes only
pending annotations (no held-back text), which is why `finish()` returns nothing. Native
reasoning is sent as `reasoning_content` (DeepSeek's field). No request leaves the process:
the model is given a provider URL on the loopback that is never called.

By design it recognises only `<think>` (the default profile's tags), keeps native reasoning
and tag bodies both (merge), starts outside reasoning, and streams an unclosed block as
thinking (the whole path shows it as text).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from openai.types.chat import ChatCompletion
from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta
from pydantic_ai.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIStreamedResponse
from pydantic_ai.providers.openai import OpenAIProvider

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version

MODEL_NAME = "deepseek-r1"
#: Never contacted: pydantic-ai needs a provider to build a model, not to split its output.
UNUSED_URL = "http://127.0.0.1:9/v1"


@cache
def _model() -> OpenAIChatModel:
    return OpenAIChatModel(MODEL_NAME, provider=OpenAIProvider(base_url=UNUSED_URL, api_key="-"))


def _message_fields(reasoning: str | None) -> dict[str, Any]:
    return {} if reasoning is None else {"reasoning_content": reasoning}


@implementation(
    name="pydantic-ai",
    version=installed_version("pydantic-ai-slim", "pydantic-ai"),
    options={"delimiters": "think_only", "native_with_tags": "merge"},
)
class PydanticAI:
    """One stream through pydantic-ai's streamed Chat Completions response."""

    def __init__(self) -> None:
        model = _model()
        self._response = OpenAIStreamedResponse(
            model_request_parameters=ModelRequestParameters(),
            _model_name=MODEL_NAME,
            _model_profile=model.profile,
            _response=None,  # chunks are handed to the mapping hook
            _provider_name="openai",
            _model_id_namespace="openai",
            _provider_url=UNUSED_URL,
        )

    def feed(self, chunk: Chunk) -> Delta:
        choice = Choice(
            index=0,
            delta=ChoiceDelta(
                content=chunk.get("content"), **_message_fields(chunk.get("reasoning"))
            ),
            finish_reason=None,
        )
        assistant, thinking = [], []
        for event in self._response._map_part_delta(choice):
            # What a UI rendering the event stream shows: new parts and appended deltas.
            if isinstance(event, PartStartEvent):
                if isinstance(event.part, TextPart):
                    assistant.append(event.part.content)
                elif isinstance(event.part, ThinkingPart):
                    thinking.append(event.part.content)
            elif isinstance(event, PartDeltaEvent):
                if isinstance(event.delta, TextPartDelta):
                    assistant.append(event.delta.content_delta)
                elif isinstance(event.delta, ThinkingPartDelta):
                    thinking.append(event.delta.content_delta or "")
        return delta("".join(assistant), "".join(thinking))

    def finish(self) -> Delta:
        # The parts manager holds nothing back: there is nothing to flush.
        return delta()

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        message = {"role": "assistant", "content": content, **_message_fields(reasoning)}
        completion = ChatCompletion.model_validate(
            {
                "id": "conformance",
                "object": "chat.completion",
                "created": 0,
                "model": MODEL_NAME,
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            }
        )
        parts = _model()._process_response(completion).parts
        return delta(
            "".join(p.content for p in parts if isinstance(p, TextPart)),
            "".join(p.content for p in parts if isinstance(p, ThinkingPart)),
        )
