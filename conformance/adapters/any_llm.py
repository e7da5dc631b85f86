"""any-llm (mozilla-ai): its XML reasoning path, streamed and whole, through real HTTP.

    conformance run --impl any-llm=python:conformance.adapters.any_llm:XmlReasoning

any-llm's OpenAI-compatible providers whose upstreams write reasoning in tags (SambaNova,
MiniMax, Portkey, llamafile, Hugging Face) derive from `XMLReasoningOpenAIProvider`. Streams
go through `wrap_chunks_with_xml_reasoning`, i.e. `utils/reasoning.py`'s
`process_streaming_reasoning_chunks`, which moves tag bodies into `delta.reasoning` as the
chunks arrive; whole messages through `convert_chat_completion_with_xml_reasoning`
(`normalize_reasoning_from_provider_fields_and_xml_tags`). This adapter uses the SambaNova
provider (`AnyLLM.create("sambanova", api_base=...)`) against a loopback server
(`event_loop_http`) that sends the case's chunks as server-sent events, one per `feed`; native
reasoning is sent as `reasoning_content`, which the provider's conversion reads too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from any_llm import AnyLLM

from ..interface import Chunk, Delta, implementation
from . import wire_events
from .common import delta, installed_version
from .event_loop_http import Streamed, local

PROVIDER = "sambanova"
MESSAGES = [{"role": "user", "content": "hi"}]


def _llm(url: str) -> AnyLLM:
    return AnyLLM.create(PROVIDER, api_key="-", api_base=f"{url}/v1", max_retries=0)


def _reasoning(message: Any) -> str:
    reasoning = getattr(message, "reasoning", None)
    return (getattr(reasoning, "content", None) or "") if reasoning is not None else ""


def _shown(chunks: Iterable[Any]) -> Delta:
    assistant, thinking = [], []
    for chunk in chunks:
        for choice in chunk.choices[:1]:
            assistant.append(choice.delta.content or "")
            thinking.append(_reasoning(choice.delta))
    return delta("".join(assistant), "".join(thinking))


@implementation(
    name="any-llm (XMLReasoningOpenAIProvider)",
    version=installed_version("any-llm-sdk"),
    options={},
)
class XmlReasoning:
    """One streamed completion of any-llm's SambaNova provider."""

    def __init__(self) -> None:
        self._llm: AnyLLM = local().client("any-llm", _llm)
        self._stream: Streamed[Any] = Streamed(wire_events.SSE, self._chunks)

    async def _chunks(self) -> AsyncIterator[Any]:
        stream = await self._llm.acompletion(
            model=wire_events.MODEL, messages=MESSAGES, stream=True
        )
        async for chunk in stream:
            yield chunk

    def feed(self, chunk: Chunk) -> Delta:
        return _shown(self._stream.send(wire_events.openai_event(chunk)))

    def finish(self) -> Delta:
        return _shown(self._stream.end(wire_events.openai_end()))

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        llm = self._llm
        completion = local().whole(
            wire_events.JSON,
            wire_events.openai_whole(content, reasoning),
            lambda: llm.acompletion(model=wire_events.MODEL, messages=MESSAGES),
        )
        message = completion.choices[0].message
        return delta(message.content, _reasoning(message))
