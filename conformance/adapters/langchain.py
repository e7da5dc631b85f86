"""LangChain's chat models, driven through real HTTP as they run in production.

    conformance run --impl langchain-openai=python:conformance.adapters.langchain:OpenAI
    conformance run --impl langchain-deepseek=python:conformance.adapters.langchain:DeepSeek
    conformance run --impl langchain-ollama=python:conformance.adapters.langchain:Ollama
    conformance run --impl \
        langchain-ollama-reasoning=python:conformance.adapters.langchain:OllamaReasoning

Each process starts one `LiveServer` on 127.0.0.1 and one chat model pointed at it. A stream
is one `model.stream(...)` call, consumed in a thread: `feed` has the server write the chunk
as one wire event (OpenAI-compatible SSE for ChatOpenAI and ChatDeepSeek, Ollama's `/api/chat`
NDJSON for ChatOllama) and returns the message chunk the model yields for it; `finish` has
the server close the stream and returns whatever the model yields after that. The models
yield one message chunk per event (BaseChatOpenAI._stream and ChatOllama._iterate_over_stream
convert every event with a choice, or every line, to one chunk), so each delta is what the
client showed for that chunk; a model that yields nothing within `WAIT` seconds raises. The
whole form is `model.invoke(...)`: ChatOpenAI and ChatDeepSeek send `"stream": false` and get
one message; ChatOllama's invoke streams and aggregates (`_chat_stream_with_aggregation`).

What the client yields is read as LangChain's users read it: a message chunk's text content
(and text blocks) is the answer, `additional_kwargs["reasoning_content"]` (and reasoning or
thinking content blocks) the reasoning.

Checked against the installed packages (langchain-openai, langchain-deepseek,
langchain-ollama): none of them parses `<think>` tags, in content or anywhere; content is
passed through as it arrives. ChatOpenAI drops native reasoning fields (its module docstring:
"Non-standard response fields ... (e.g., `reasoning_content` ...) are not extracted");
ChatDeepSeek copies `delta.reasoning_content` (or `reasoning`) to `reasoning_content`;
ChatOllama copies `message.thinking` only when `reasoning` is truthy, and drops it under the
default (`reasoning=None`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_deepseek import ChatDeepSeek
from langchain_ollama import ChatOllama
from langchain_openai import ChatOpenAI

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version
from .live_http import Channel, LiveServer

#: Seconds to wait for the model's message chunk after an event is written.
WAIT = 30.0
PROMPT = "Say hello."
_DONE = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


@cache
def server() -> LiveServer:
    """The process's one server, shared by every stream."""
    return LiveServer()


def message_delta(message: BaseMessage) -> Delta:
    """What a message (chunk) shows: its text as the answer, its reasoning as thinking."""
    assistant: list[str] = []
    thinking: list[str] = []
    content = message.content
    if isinstance(content, str):
        assistant.append(content)
    else:
        for block in content:
            if isinstance(block, str):
                assistant.append(block)
            elif block.get("type") == "text":
                assistant.append(block.get("text") or "")
            elif block.get("type") in ("reasoning", "thinking"):
                thinking.append(block.get("reasoning") or block.get("thinking") or "")
    reasoning = message.additional_kwargs.get("reasoning_content")
    if isinstance(reasoning, str) and not thinking:
        thinking.append(reasoning)
    return delta("".join(assistant), "".join(thinking))


def _sum(deltas: list[Delta]) -> Delta:
    return delta("".join(d["assistant"] for d in deltas), "".join(d["thinking"] for d in deltas))


class _LangChain:
    """One stream through a LangChain chat model's `.stream`, one whole message through
    `.invoke`."""

    #: The chat model's maker (a key of _MAKERS), and its name in error messages.
    maker: ClassVar[str]
    label: ClassVar[str]

    def __init__(self) -> None:
        self._channel: Channel | None = None
        self._out: queue.Queue[Any] = queue.Queue()
        self._sent = 0

    @classmethod
    def model(cls) -> BaseChatModel:
        return _model(cls.maker, server().url)

    def _start(self) -> Channel:
        if self._channel is None:
            self._channel = server().open()
            threading.Thread(target=self._consume, args=(self._channel,), daemon=True).start()
        return self._channel

    def _consume(self, channel: Channel) -> None:
        try:
            for message in self.model().stream(PROMPT, model=channel.name):
                self._out.put(message)
        except BaseException as error:  # handed to the harness's thread
            self._out.put(_Failed(error))
        else:
            self._out.put(_DONE)

    def _abandon(self) -> None:
        """End the stream on the server: a client that failed is not waited for."""
        if self._channel is not None:
            self._channel.end()
            server().close(self._channel)

    def _next(self, after: str) -> Any:
        try:
            item = self._out.get(timeout=WAIT)
        except queue.Empty:
            self._abandon()
            raise TimeoutError(
                f"{self.label} yielded no message chunk within {WAIT:g} s after {after}"
            ) from None
        if isinstance(item, _Failed):
            self._abandon()
            raise RuntimeError(f"{self.label} raised after {after}: {item.error!r}") from (
                item.error
            )
        return item

    def feed(self, chunk: Chunk) -> Delta:
        self._start().send(chunk)
        self._sent += 1
        item = self._next(f"chunk {self._sent} was sent")
        if item is _DONE:
            self._abandon()
            raise RuntimeError(f"{self.label}'s stream ended before chunk {self._sent}'s event")
        return message_delta(item)

    def finish(self) -> Delta:
        channel = self._start()
        channel.end()
        deltas = []
        try:
            while (item := self._next("the stream was ended")) is not _DONE:
                deltas.append(message_delta(item))
        finally:
            server().close(channel)
        return _sum(deltas)

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        channel = server().open()
        channel.send({"content": content, "reasoning": reasoning})
        channel.end()
        try:
            return message_delta(self.model().invoke(PROMPT, model=channel.name))
        finally:
            server().close(channel)


@cache
def _model(maker: str, url: str) -> BaseChatModel:
    return _MAKERS[maker](url)


def _openai(url: str) -> BaseChatModel:
    return ChatOpenAI(model="conformance", base_url=f"{url}/v1", api_key="-", max_retries=0)


def _deepseek(url: str) -> BaseChatModel:
    return ChatDeepSeek(model="conformance", api_base=f"{url}/v1", api_key="-", max_retries=0)


def _ollama(url: str) -> BaseChatModel:
    return ChatOllama(model="conformance", base_url=url, client_kwargs={"timeout": WAIT})


def _ollama_reasoning(url: str) -> BaseChatModel:
    return ChatOllama(
        model="conformance", base_url=url, reasoning=True, client_kwargs={"timeout": WAIT}
    )


_MAKERS: dict[str, Callable[[str], BaseChatModel]] = {
    "openai": _openai,
    "deepseek": _deepseek,
    "ollama": _ollama,
    "ollama-reasoning": _ollama_reasoning,
}
_OPENAI_VERSION = installed_version("langchain-openai")
_OLLAMA_VERSION = installed_version("langchain-ollama")


@implementation(name="langchain-openai ChatOpenAI", version=_OPENAI_VERSION)
class OpenAI(_LangChain):
    label = "ChatOpenAI"
    maker = "openai"


@implementation(
    name="langchain-deepseek ChatDeepSeek", version=installed_version("langchain-deepseek")
)
class DeepSeek(_LangChain):
    label = "ChatDeepSeek"
    maker = "deepseek"


@implementation(name="langchain-ollama ChatOllama", version=_OLLAMA_VERSION)
class Ollama(_LangChain):
    label = "ChatOllama"
    maker = "ollama"


@implementation(name="langchain-ollama ChatOllama (reasoning=True)", version=_OLLAMA_VERSION)
class OllamaReasoning(_LangChain):
    label = "ChatOllama(reasoning=True)"
    maker = "ollama-reasoning"
