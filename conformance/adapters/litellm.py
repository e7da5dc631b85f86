"""LiteLLM: its two reasoning splitters, the response conversion and the Ollama stream parser.

    conformance run --impl litellm=python:conformance.adapters.litellm:ChatCompletion
    conformance run --impl litellm-ollama=python:conformance.adapters.litellm:OllamaChat
    conformance run --impl \
        litellm-ollama-generate=python:conformance.adapters.litellm:OllamaGenerate

`ChatCompletion` is the conversion every non-streamed OpenAI-compatible response goes through
(`convert_to_model_response_object`): a `reasoning_content` (or `reasoning`) key is taken as
the reasoning and the content left alone; without one, a block at the very start of the
content is split off by a regular expression, and after it nothing is a delimiter (declared
`sections: one`, as `conformance fingerprint` finds). LiteLLM's OpenAI-compatible streaming
passes content through without looking at tags, so this variant has no streaming path of its
own: a stream is converted once it ends, and every stream check reports what that holds back
(`litellm-stream` in `litellm_http.py` drives the streaming path itself).

`OllamaChat` is `OllamaChatCompletionResponseIterator.chunk_parser`, the parser LiteLLM runs
on each chunk of an Ollama `/api/chat` stream: native reasoning arrives in Ollama's `thinking`
field, and content is routed by whether the chunk contains `<think>` or `</think>`. Its whole
form is LiteLLM's non-streaming path: `litellm.completion(model="ollama_chat/...")` against a
server on 127.0.0.1 (`loopback.py`) answering one `/api/chat` response, which
`OllamaChatConfig.transform_response` converts (`thinking` when present, otherwise
`parse_content_for_reasoning`).

`OllamaGenerate` is the same for Ollama's `/api/generate`:
`OllamaTextCompletionResponseIterator.chunk_parser` on each line (text in `response`, native
reasoning in `thinking`), and `OllamaConfig.transform_response` through
`litellm.completion(model="ollama/...")` for whole responses. `litellm_http.OllamaGenerate`
drives the stream through `litellm.completion` too (tests/test_loopback.py checks that both
give the same output, chunk by chunk); a request and a thread per stream make that too slow
for the corpus's tens of thousands of streams.

Checked against the installed LiteLLM: `parse_content_for_reasoning` (re-exported as
`_parse_content_for_reasoning` by `prompt_templates/common_utils.py`) is reached from the
response conversion (`convert_dict_to_response.py`, through `extract_reasoning_content`), the
Ollama chat and `/api/generate` `transform_response` and two Bedrock transformations, not from
the OpenAI-compatible streaming handler; the Ollama chat stream iterator calls
`chunk_parser` on each decoded line, as this adapter does.
"""

from __future__ import annotations

import os
from typing import Any

# LiteLLM fetches its model price list from the network on import unless told to use the copy
# it ships; splitting reasoning needs neither.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
    convert_to_model_response_object,
)
from litellm.llms.ollama.chat.transformation import (
    OllamaChatCompletionResponseIterator,
)
from litellm.llms.ollama.completion.transformation import OllamaTextCompletionResponseIterator
from litellm.types.utils import ModelResponse

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version
from .litellm_http import MESSAGES, MODEL, OLLAMA_DONE, ollama_whole

VERSION = installed_version("litellm")


def _convert(content: str | None, reasoning: str | None) -> Delta:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    response = convert_to_model_response_object(
        response_object={
            "id": "conformance",
            "object": "chat.completion",
            "created": 0,
            "model": "conformance",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        },
        model_response_object=ModelResponse(),
    )
    converted = response.choices[0].message
    return delta(converted.content, getattr(converted, "reasoning_content", None))


@implementation(
    name="litellm",
    version=VERSION,
    options={"native_with_tags": "native_only", "sections": "one"},
)
class ChatCompletion:
    """One message through LiteLLM's non-streaming response conversion."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []

    def feed(self, chunk: Chunk) -> Delta:
        # Nothing is split before the message is complete (see the module's docstring).
        if chunk.get("content"):
            self._content.append(chunk["content"])
        if chunk.get("reasoning"):
            self._reasoning.append(chunk["reasoning"])
        return delta()

    def finish(self) -> Delta:
        content = "".join(self._content) if self._content else None
        return _convert(content, "".join(self._reasoning) or None)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        return _convert(content, reasoning)


@implementation(
    name="litellm (ollama_chat stream)", version=VERSION, options={"native_with_tags": "merge"}
)
class OllamaChat:
    """One stream through LiteLLM's Ollama chat stream parser."""

    def __init__(self) -> None:
        self._parser = OllamaChatCompletionResponseIterator(
            streaming_response=iter(()), sync_stream=True
        )

    def _parse(self, content: str | None, reasoning: str | None, *, done: bool) -> Delta:
        message: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if reasoning is not None:
            message["thinking"] = reasoning
        parsed = self._parser.chunk_parser(
            {"model": "conformance", "message": message, "done": done}
        )
        choice = parsed.choices[0].delta
        return delta(choice.content, getattr(choice, "reasoning_content", None))

    def feed(self, chunk: Chunk) -> Delta:
        return self._parse(chunk.get("content"), chunk.get("reasoning"), done=False)

    def finish(self) -> Delta:
        # Ollama ends a stream with an empty message marked done.
        return self._parse(None, None, done=True)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        message: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if reasoning is not None:
            message["thinking"] = reasoning
        body = {"model": MODEL, "message": message}
        arguments = {"model": f"ollama_chat/{MODEL}", "messages": MESSAGES}
        return ollama_whole(arguments, "/api/chat", body)


@implementation(
    name="litellm (ollama /api/generate)",
    version=VERSION,
    options={"delimiters": "think_only", "native_with_tags": "merge"},
)
class OllamaGenerate:
    """One stream through LiteLLM's Ollama /api/generate stream parser; whole responses
    through `litellm.completion(model="ollama/...")` against a local server."""

    def __init__(self) -> None:
        self._parser = OllamaTextCompletionResponseIterator(
            streaming_response=iter(()), sync_stream=True
        )

    def _parse(self, line: dict[str, Any]) -> Delta:
        parsed = self._parser.chunk_parser(line)
        if isinstance(parsed, dict):  # GenericStreamingChunk: the last line, held text
            return delta(parsed.get("text"), None)
        choice = parsed.choices[0].delta
        return delta(choice.content, getattr(choice, "reasoning_content", None))

    def feed(self, chunk: Chunk) -> Delta:
        line: dict[str, Any] = {"model": MODEL, "response": chunk.get("content") or ""}
        if chunk.get("reasoning") is not None:
            line["thinking"] = chunk["reasoning"]
        return self._parse({**line, "done": False})

    def finish(self) -> Delta:
        return self._parse({"model": MODEL, "response": "", **OLLAMA_DONE})

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        body: dict[str, Any] = {"model": MODEL, "response": content or ""}
        if reasoning is not None:
            body["thinking"] = reasoning
        arguments = {"model": f"ollama/{MODEL}", "messages": MESSAGES}
        return ollama_whole(arguments, "/api/generate", body)
