"""Hugging Face transformers' response parsing, with its bundled Qwen3 response template.

    conformance run --impl transformers-qwen3=python:conformance.adapters.transformers:Qwen3
    conformance run --impl transformers-qwen3.5=python:conformance.adapters.transformers:Qwen35

`transformers.utils.chat_parsing.ResponseParser(response_template, prefix=prompt)`: `feed`
per chunk and `finalize` at the end of the stream, whose `region_chunk` events say which
field (`reasoning_content` or `content`) each piece of text went to; the whole form is
`parse_response`, which returns the parsed message. The templates are the ones transformers'
own server (`transformers serve`) uses for the Qwen families when a tokenizer ships none; no
model or tokenizer is loaded. Checked against `transformers/cli/serving/utils.py` of the
installed transformers: the server builds `ResponseParser(template, prefix=<decoded prompt>,
tools=...)` (`build_response_parser`), turns its events into stream items with
`response_events_to_chunks` (which this adapter calls too, so dirty chunks of structured
fields are dropped as there), and parses a whole response with `tokenizer.parse_response(ids,
template, prefix=...)`, which decodes and calls the same `parse_response`.

The prefix is the prompt the chat template renders: for Qwen3 it ends with the assistant
turn's header, and the model writes `<think>` itself (start outside reasoning); for Qwen3.5
in thinking mode the template also writes `<think>\\n`, so the output starts inside
reasoning. Response parsing sees no native reasoning field: the adapter passes a chunk's
native reasoning straight to the thinking channel (merge).
"""

from __future__ import annotations

from typing import Any

from transformers.cli.serving.utils import (
    _RESPONSE_TEMPLATE_FALLBACKS,
    ReasoningText,
    response_events_to_chunks,
)
from transformers.utils.chat_parsing import ResponseParser, parse_response

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version, native

VERSION = installed_version("transformers")
PROMPT = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"


def _template(model_type: str) -> dict[str, Any]:
    return next(t for types, t in _RESPONSE_TEMPLATE_FALLBACKS.items() if model_type in types)


def _delta(events: list[dict[str, Any]], thinking: str = "") -> Delta:
    """The parser's events as the server streams them (`response_events_to_chunks`): plain
    text is content, `ReasoningText` reasoning; tool calls are in neither channel."""
    channels = {"assistant": "", "thinking": thinking}
    for item in response_events_to_chunks(events):
        if isinstance(item, ReasoningText):
            channels["thinking"] += item
        elif isinstance(item, str):
            channels["assistant"] += item
    return channels


class _ResponseParsing:
    model_type: str
    prefix: str

    def __init__(self) -> None:
        self._template = _template(self.model_type)
        # Events of the prefix (the prompt) are not output: `initial_events` is left alone.
        self._parser = ResponseParser(self._template, prefix=self.prefix)

    def feed(self, chunk: Chunk) -> Delta:
        events = self._parser.feed(chunk.get("content") or "")
        return _delta(events, native(chunk))

    def finish(self) -> Delta:
        _, events = self._parser.finalize()
        return _delta(events)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        message = parse_response(content or "", self._template, prefix=self.prefix)
        return delta(
            message.get("content"), (reasoning or "") + (message.get("reasoning_content") or "")
        )


@implementation(
    name="transformers (qwen3)",
    version=VERSION,
    options={"delimiters": "think_only", "native_with_tags": "merge"},
)
class Qwen3(_ResponseParsing):
    model_type = "qwen3"
    prefix = PROMPT


@implementation(
    name="transformers (qwen3.5, thinking)",
    version=VERSION,
    options={"delimiters": "think_only", "start_in_reasoning": True, "native_with_tags": "merge"},
)
class Qwen35(_ResponseParsing):
    model_type = "qwen3_5"
    prefix = PROMPT + "<think>\n"
