"""OpenAI Chat Completions and the servers that copy it (DeepSeek, OpenRouter, vLLM, SGLang,
llama.cpp, Ollama `/v1`, Groq, Together, LM Studio, DashScope...).

Streaming: one chunk per `chat.completion.chunk` whose first choice's delta has `content` or
a reasoning field (`delta: {}` and usage-only events with `choices` empty or null give none).
Non-streaming: one chunk from `choices[0].message`.

Native reasoning is the first non-empty of `reasoning_content` and `reasoning`, else the text
of `reasoning_details[]` (`reasoning.text` and `reasoning.summary` items): servers mirror one
text into several of these fields, so only one is read per delta.

Mistral (Magistral) sends `content` as an array of content chunks instead of a string:
`{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}` is native reasoning and
`{"type": "text", "text": ...}` content, in order (a thinking chunk after text starts a new
chunk, since a chunk's reasoning is processed before its content).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.model.chunks import Chunk

from ._common import CONTENT, REASONING, load_json, mapping, provider_error, runs, text_of
from ._model import DecodeProblem
from ._sse import SseEvent

FAMILY = "openai-chat"
FORMS = ("sse", "json")
_REASONING_KEYS = ("reasoning_content", "reasoning")
#: A delta with any of these keys is a chunk, even when their values are empty or null.
_TEXT_KEYS = frozenset(("content", *_REASONING_KEYS, "reasoning_details"))
#: reasoning_details item types and the key holding their text (encrypted items have none).
_DETAIL_TEXT = {
    "reasoning.text": "text",
    "reasoning.summary": "summary",
    "reasoning.encrypted": None,
}


def decode_sse(events: Iterable[SseEvent]) -> list[Chunk]:
    chunks: list[Chunk] = []
    finished = done = False
    last = 0
    for event in events:
        last = event.line
        if done:
            raise DecodeProblem("an event after `data: [DONE]`", event.line)
        if event.data.strip() == "[DONE]":
            done = True
            continue
        if event.name == "error":
            raise provider_error(
                {"error": load_json(event.data, event.line, "an error event")}, event.line
            )
        if event.name != "message":
            raise DecodeProblem(
                f"unknown event {event.name!r}: Chat Completions streams have no named events "
                "(if the provider added one, teach conformance/cassettes/_openai_chat.py)",
                event.line,
            )
        value = mapping(load_json(event.data, event.line, "a data line"), "a data line", event.line)
        if "error" in value:
            raise provider_error(value, event.line)
        choice = _first_choice(value.get("choices"), event.line)
        if choice is None:
            continue  # a usage-only event
        if choice.get("finish_reason"):
            finished = True
        delta = choice.get("delta")
        if delta is None:
            continue
        delta = mapping(delta, "choices[0].delta", event.line)
        if not _TEXT_KEYS.isdisjoint(delta):
            chunks.extend(_chunks(delta, "choices[0].delta", event.line))
    if not (done or finished):
        raise DecodeProblem(
            "truncated body: the stream ends with neither a finish_reason nor `data: [DONE]`",
            last or None,
        )
    return chunks


def decode_json(value: Any, line: int) -> list[Chunk]:
    value = mapping(value, "the response", line)
    if "error" in value:
        raise provider_error(value, line)
    choice = _first_choice(value.get("choices"), line)
    if choice is None:
        raise DecodeProblem("the response has no choices", line)
    message = mapping(choice.get("message"), "choices[0].message", line)
    return _chunks(message, "choices[0].message", line)


def _first_choice(choices: Any, line: int) -> Mapping[str, Any] | None:
    if choices is None or choices == []:
        return None
    if not isinstance(choices, list):
        raise DecodeProblem(f"`choices` must be an array, not {type(choices).__name__}", line)
    for choice in choices:
        choice = mapping(choice, "a choice", line)
        if choice.get("index", 0) == 0:
            return choice
    return None


def _chunks(message: Mapping[str, Any], what: str, line: int) -> list[Chunk]:
    reasoning = _reasoning(message, what, line)
    content = message.get("content")
    if not isinstance(content, list):
        return [Chunk(content=text_of(message, "content", what, line), reasoning=reasoning)]
    pieces = [(REASONING, reasoning)] if reasoning is not None else []
    pieces += _content_chunks(content, f"{what}.content", line)
    return runs(pieces) or [Chunk(content=None, reasoning=None)]


#: Mistral content chunk types that carry no text for either channel.
_NO_TEXT_CHUNKS = frozenset(
    ("reference", "image_url", "document_url", "input_audio", "file", "tool_file")
)


def _content_chunks(items: list[Any], what: str, line: int) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    for item in items:
        item = mapping(item, f"an item of {what}", line)
        kind = item.get("type")
        if kind == "text":
            pieces.append((CONTENT, text_of(item, "text", f"a text item of {what}", line) or ""))
        elif kind == "thinking":
            inner = item.get("thinking")
            if isinstance(inner, str):
                pieces.append((REASONING, inner))
                continue
            if not isinstance(inner, list):
                raise DecodeProblem(f"a thinking item of {what} must hold an array", line)
            for piece in _content_chunks(inner, f"{what}[].thinking", line):
                pieces.append((REASONING, piece[1]))
        elif kind not in _NO_TEXT_CHUNKS:
            raise DecodeProblem(
                f"unknown content chunk type {kind!r} in {what} (known: text, thinking, "
                f"{', '.join(sorted(_NO_TEXT_CHUNKS))})",
                line,
            )
    return pieces


def _reasoning(message: Mapping[str, Any], what: str, line: int) -> str | None:
    found: str | None = None
    for key in _REASONING_KEYS:
        text = text_of(message, key, what, line)
        if text:
            return text
        if text is not None:
            found = text
    details = message.get("reasoning_details")
    if details is None:
        return found
    if not isinstance(details, list):
        raise DecodeProblem(f"{what}.reasoning_details must be an array", line)
    texts = []
    for item in details:
        item = mapping(item, f"an item of {what}.reasoning_details", line)
        kind = item.get("type")
        if kind not in _DETAIL_TEXT:
            raise DecodeProblem(
                f"unknown reasoning_details type {kind!r} (known: {', '.join(_DETAIL_TEXT)})",
                line,
            )
        field = _DETAIL_TEXT[kind]
        if field is not None:
            text = text_of(item, field, f"{what}.reasoning_details[]", line)
            if text is not None:
                texts.append(text)
    return "".join(texts) if any(texts) else found
