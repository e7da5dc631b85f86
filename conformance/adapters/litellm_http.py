"""LiteLLM through its public entries, `litellm.completion` and `litellm.responses`, against
a server on 127.0.0.1.

    conformance run --impl litellm-stream=python:conformance.adapters.litellm_http:OpenAIStream
    conformance run --impl \
        litellm-ollama-generate=python:conformance.adapters.litellm_http:OllamaGenerate
    conformance run --impl \
        litellm-responses=python:conformance.adapters.litellm_http:ResponsesBridge

Each stream is one `litellm.completion(..., stream=True)` call whose `api_base` is the
loopback server (`loopback.py`): the server writes each chunk as one HTTP chunk when it is fed,
and the adapter reports what LiteLLM's stream (`CustomStreamWrapper`) yielded once LiteLLM has
read the chunk and asks for more. A whole message is one `stream=False` call. Nothing is
reimplemented: LiteLLM makes the request, reads the body and runs its provider's
transformation as it does against a real server.

`OpenAIStream` is an OpenAI-compatible server (`model="openai/..."`): server-sent events of
chat.completion.chunk objects, native reasoning in DeepSeek's `reasoning_content` field. The
streaming handler maps `reasoning_content` to the reasoning and passes content through without
looking at tags; the non-streaming path converts the response with
`convert_to_model_response_object`, which splits a block at the very start of the content
(`parse_content_for_reasoning`) when no reasoning field is present.

`OllamaGenerate` is Ollama's `/api/generate` (`model="ollama/..."`): newline-delimited JSON
with the text in `response` and native reasoning in `thinking`, parsed per line by
`OllamaTextCompletionResponseIterator.chunk_parser`; a whole response goes through
`OllamaConfig.transform_response`, which uses `thinking` when present and otherwise
`parse_content_for_reasoning`.

`ResponsesBridge` is `litellm.responses(..., use_chat_completions_api=True)` over the same
OpenAI-compatible server: LiteLLM's bridge from the Responses API to chat completions
(`responses/litellm_completion_transformation`), which makes the chat completions call above
and turns its stream into Responses events (`LiteLLMCompletionStreamingIterator`:
`response.output_text.delta` for content, `response.reasoning_summary_text.delta` for
`reasoning_content`) and a whole response into `message` and `reasoning` output items. This is
the path of every provider LiteLLM has no Responses API configuration for.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from litellm.llms.custom_httpx.http_handler import HTTPHandler
from openai import OpenAI

from ..interface import Chunk, Delta, implementation
from .common import delta, installed_version
from .loopback import Stream, loopback

VERSION = installed_version("litellm")
MODEL = "conformance"
MESSAGES = [{"role": "user", "content": "Hello"}]
#: Custom pricing (documented arguments of litellm.completion) for the made-up model: without
#: it LiteLLM looks the model up in its cost map at the end of every call, in vain, and that
#: lookup was most of a stream's time.
FREE = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0}
#: What Ollama sends with its last line (usage counts spare LiteLLM a tokenizer).
OLLAMA_DONE = {"done": True, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1}


@cache
def _http_handler() -> HTTPHandler:
    return HTTPHandler(client=loopback().client())


def _openai_client(base_url: str) -> OpenAI:
    return OpenAI(base_url=base_url, api_key="-", http_client=loopback().client(), max_retries=0)


def _reply_delta(item: Any) -> Delta:
    """What one streamed item, or a whole response, holds for each channel."""
    if not item.choices:
        return delta()
    choice = item.choices[0]
    message = getattr(choice, "delta", None) or getattr(choice, "message", None)
    return delta(getattr(message, "content", None), getattr(message, "reasoning_content", None))


def ollama_whole(arguments: dict[str, Any], path: str, body: dict[str, Any]) -> Delta:
    """One `litellm.completion(stream=False)` whose request for `path` the loopback server
    answers with Ollama's `body` (and its last line's fields)."""
    stream = loopback().open("application/json", path)
    try:
        stream.reply(json.dumps({**body, **OLLAMA_DONE}).encode())
        response = litellm.completion(
            **arguments, api_base=stream.base_url, client=_http_handler(), stream=False
        )
        return _reply_delta(response)
    finally:
        stream.close()


class _Call:
    """One streamed call running in a thread, what it yields collected as deltas."""

    def __init__(
        self, stream: Stream, start: Callable[[], Iterable[Any]], to_delta: Callable[[Any], Delta]
    ) -> None:
        self._stream = stream
        self._deltas: list[Delta] = []
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(start, to_delta), daemon=True)
        self._thread.start()

    def _run(self, start: Callable[[], Iterable[Any]], to_delta: Callable[[Any], Delta]) -> None:
        try:
            for item in start():
                with self._lock:
                    self._deltas.append(to_delta(item))
        except BaseException as error:  # reported by the next take()
            self._error = error
        finally:
            self._stream.stop()

    def take(self) -> Delta:
        with self._lock:
            deltas, self._deltas = self._deltas, []
        if self._error is not None:
            raise RuntimeError(f"LiteLLM failed: {self._error!r}") from self._error
        return delta(
            "".join(d["assistant"] for d in deltas), "".join(d["thinking"] for d in deltas)
        )

    def join(self) -> None:
        self._thread.join(timeout=60)


class _HttpVariant:
    """A stream as one `litellm.completion(stream=True)`; the wire format is the subclass's."""

    content_type: str
    #: The request LiteLLM makes, under the base URL it is given.
    path: str

    def _arguments(self, base_url: str) -> dict[str, Any]:
        raise NotImplementedError

    def _piece(self, content: str | None, reasoning: str | None) -> bytes:
        raise NotImplementedError

    def _last(self) -> bytes:
        raise NotImplementedError

    def _whole_body(self, content: str | None, reasoning: str | None) -> bytes:
        raise NotImplementedError

    def _call(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        """The public call: a stream of items, or the whole response."""
        return litellm.completion(**arguments, stream=stream)

    def _delta(self, item: Any) -> Delta:
        """What a streamed item holds for each channel."""
        return _reply_delta(item)

    def _whole_delta(self, response: Any) -> Delta:
        """What the whole response holds for each channel."""
        return _reply_delta(response)

    def __init__(self) -> None:
        self._stream: Stream | None = None
        self._running: _Call | None = None

    def _started(self) -> tuple[Stream, _Call]:
        if self._stream is None or self._running is None:
            self._stream = loopback().open(self.content_type, self.path)
            arguments = self._arguments(self._stream.base_url)
            self._running = _Call(
                self._stream, lambda: self._call(arguments, stream=True), self._delta
            )
        return self._stream, self._running

    def feed(self, chunk: Chunk) -> Delta:
        stream, call = self._started()
        stream.send(self._piece(chunk.get("content"), chunk.get("reasoning")))
        return call.take()

    def finish(self) -> Delta:
        stream, call = self._started()
        try:
            stream.send(self._last())
            stream.end()
            call.join()
            return call.take()
        finally:
            stream.close()

    def whole(self, content: str | None, reasoning: str | None) -> Delta:
        stream = loopback().open("application/json", self.path)
        try:
            stream.reply(self._whole_body(content, reasoning))
            response = self._call(self._arguments(stream.base_url), stream=False)
            return self._whole_delta(response)
        finally:
            stream.close()


def _event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


def _chunk(delta_fields: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {
        "id": "conformance",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta_fields, "finish_reason": finish_reason}],
    }


@implementation(
    name="litellm (openai-compatible, litellm.completion)",
    version=VERSION,
    options={"native_with_tags": "native_only"},
)
class OpenAIStream(_HttpVariant):
    """An OpenAI-compatible server's chat completions through `litellm.completion`."""

    content_type = "text/event-stream"
    path = "/v1/chat/completions"

    def _arguments(self, base_url: str) -> dict[str, Any]:
        return {
            "model": f"openai/{MODEL}",
            "messages": MESSAGES,
            "client": _openai_client(base_url + "/v1"),
            **FREE,
        }

    def _piece(self, content: str | None, reasoning: str | None) -> bytes:
        fields: dict[str, Any] = {"content": content}
        if reasoning is not None:
            fields["reasoning_content"] = reasoning
        return _event(_chunk(fields, None))

    def _last(self) -> bytes:
        return _event(_chunk({}, "stop")) + b"data: [DONE]\n\n"

    def _whole_body(self, content: str | None, reasoning: str | None) -> bytes:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        completion = {
            "id": "conformance",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        }
        return json.dumps(completion).encode()


def _ollama_line(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload) + "\n").encode()


@implementation(
    name="litellm (ollama /api/generate, litellm.completion)",
    version=VERSION,
    options={"native_with_tags": "merge"},
)
class OllamaGenerate(_HttpVariant):
    """Ollama's /api/generate through `litellm.completion(model="ollama/...")`."""

    content_type = "application/x-ndjson"
    path = "/api/generate"

    def _arguments(self, base_url: str) -> dict[str, Any]:
        return {
            "model": f"ollama/{MODEL}",
            "messages": MESSAGES,
            "api_base": base_url,
            "client": _http_handler(),
        }

    def _piece(self, content: str | None, reasoning: str | None) -> bytes:
        line: dict[str, Any] = {"model": MODEL, "response": content or "", "done": False}
        if reasoning is not None:
            line["thinking"] = reasoning
        return _ollama_line(line)

    def _last(self) -> bytes:
        return _ollama_line({"model": MODEL, "response": "", **OLLAMA_DONE})

    def _whole_body(self, content: str | None, reasoning: str | None) -> bytes:
        body: dict[str, Any] = {"model": MODEL, "response": content or "", **OLLAMA_DONE}
        if reasoning is not None:
            body["thinking"] = reasoning
        return json.dumps(body).encode()


#: Responses stream events whose `delta` is reasoning, and the one whose `delta` is answer text.
_REASONING_EVENTS = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
_TEXT_EVENT = "response.output_text.delta"


def _event_delta(event: Any) -> Delta:
    kind = str(getattr(event.type, "value", event.type))
    text = getattr(event, "delta", None)
    if not isinstance(text, str):
        return delta()
    if kind == _TEXT_EVENT:
        return delta(text, "")
    return delta("", text) if kind in _REASONING_EVENTS else delta()


def _texts(parts: Any) -> str:
    return "".join(getattr(part, "text", None) or "" for part in parts or ())


def _response_delta(response: Any) -> Delta:
    """A Responses API response: `message` items are the answer, `reasoning` items (their
    content, or their summary when they have none) the reasoning."""
    assistant, thinking = [], []
    for item in response.output:
        if item.type == "message":
            assistant.append(_texts(getattr(item, "content", None)))
        elif item.type == "reasoning":
            content = getattr(item, "content", None)
            thinking.append(_texts(content) if content else _texts(getattr(item, "summary", None)))
    return delta("".join(assistant), "".join(thinking))


@implementation(
    name="litellm (responses bridge, litellm.responses)",
    version=VERSION,
    options={"native_with_tags": "native_only"},
)
class ResponsesBridge(OpenAIStream):
    """`litellm.responses` bridged to an OpenAI-compatible chat completions server."""

    def _call(self, arguments: dict[str, Any], *, stream: bool) -> Any:
        arguments = {k: v for k, v in arguments.items() if k != "messages"}
        return litellm.responses(
            **arguments, input="Hello", use_chat_completions_api=True, stream=stream
        )

    def _delta(self, item: Any) -> Delta:
        return _event_delta(item)

    def _whole_delta(self, response: Any) -> Delta:
        return _response_delta(response)
