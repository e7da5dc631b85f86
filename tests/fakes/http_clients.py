"""Python clients of recorded provider streams, right and wrong on purpose, for the replay
tests (tests/test_cassettes_replay.py).

- Event readers for `conformance serve`'s streams: `sse_events`, which reads SSE as it must
  (UTF-8 characters and lines cut anywhere between network reads), and `naive_events`, which
  decodes each read on its own as if reads and events lined up, as many hand-written clients
  do;
- clients that make their own requests, for `conformance replay` (vcrpy answers them):
  `chat_client` and `anthropic_client` are right, and so are `think_only_client`,
  `vllm_profile_client` and `bracket_client` under the profiles they declare;
  `doubling_client` shows the reasoning twice, `wrong_path_client` asks for a path the
  capture does not have, `lazy_client` sends nothing. Usable as
  `python:tests.fakes.http_clients:chat_client`.
"""

from __future__ import annotations

import codecs
import functools
import json
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import httpx

from conformance.interface import HttpCall, implementation
from conformance.reference import Normalizer


def sse_events(pieces: Iterable[bytes]) -> Iterator[str]:
    """An incremental SSE reader: UTF-8 and lines may be cut anywhere between pieces."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    buffer, data = "", []
    for piece in pieces:
        buffer += decoder.decode(piece)
        *lines, buffer = buffer.replace("\r\n", "\n").split("\n")
        for line in lines:
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif not line and data:
                yield "\n".join(data)
                data = []


def normalize_chat(
    events: Iterable[str], options: Mapping[str, Any] | None = None
) -> list[dict[str, str]]:
    """Chat Completions events through the reference normalizer (under `options`)."""
    normalizer, deltas = Normalizer(options), []
    for event in events:
        if event.strip() == "[DONE]":
            continue
        for choice in json.loads(event).get("choices") or ():
            delta = choice.get("delta") or {}
            details = "".join(
                d.get("text") or d.get("summary") or ""
                for d in delta.get("reasoning_details") or ()
            )
            reasoning = delta.get("reasoning_content") or delta.get("reasoning") or details
            content = delta.get("content")
            if isinstance(content, list):  # Mistral's content chunks
                reasoning += "".join(
                    t["text"] for c in content if c["type"] == "thinking" for t in c["thinking"]
                )
                content = "".join(c["text"] for c in content if c["type"] == "text")
            if "content" in delta or reasoning:
                deltas.append(normalizer.feed({"content": content, "reasoning": reasoning}))
    deltas.append(normalizer.finish())
    return deltas


def naive_events(pieces: Iterable[bytes]) -> Iterator[str]:
    """What many hand-written clients do: decode each network read on its own and split it
    into events, as if reads and events lined up."""
    for piece in pieces:
        for part in piece.decode("utf-8", errors="replace").split("\n\n"):
            if part.startswith("data: "):
                yield part[6:]


def joined(deltas: Iterable[dict[str, str]]) -> dict[str, str]:
    return {k: "".join(d[k] for d in deltas) for k in ("assistant", "thinking")}


@functools.cache
def _http() -> httpx.Client:
    """The clients' one httpx client, made on first use and kept, as an application keeps
    one (each new client loads the system's certificates again)."""
    return httpx.Client()


@implementation(name="chat-client", version="1.0", capabilities=["http"])
def chat_client(call: HttpCall) -> list[dict[str, str]]:
    """An httpx client for Chat Completions, with its own SSE parsing."""
    return _chat(call, None)


def _chat(call: HttpCall, options: Mapping[str, Any] | None) -> list[dict[str, str]]:
    if call.family != "openai-chat":
        raise NotImplementedError(f"speaks openai-chat, not {call.family}")
    with _http().stream("POST", call.url, content=call.body) as response:
        if call.stream:
            return normalize_chat(sse_events(response.iter_bytes()), options)
        message = json.loads(response.read())["choices"][0]["message"]
        event = json.dumps({"choices": [{"delta": message}]})
        return normalize_chat([event], options)


def _chat_under(name: str, options: Mapping[str, Any]) -> Callable[[HttpCall], Any]:
    """`chat_client` under another profile, declared."""

    @implementation(name=name, version="1.0", capabilities=["http"], options=dict(options))
    def client(call: HttpCall) -> list[dict[str, str]]:
        return _chat(call, options)

    return client


#: Chat Completions clients following other profiles: `<think>` alone (as vLLM's parsers),
#: that with the stream starting in reasoning and native reasoning merged with tag bodies
#: (vLLM's whole profile), and the bracket grammar.
think_only_client = _chat_under("chat-think-only", {"delimiters": "think_only"})
vllm_profile_client = _chat_under(
    "chat-vllm-profile",
    {"delimiters": "think_only", "start_in_reasoning": True, "native_with_tags": "merge"},
)
bracket_client = _chat_under("chat-bracket", {"delimiters": "bracket"})


@implementation(name="anthropic-urllib", capabilities=["http"])
def anthropic_client(call: HttpCall) -> dict[str, str]:
    """A standard-library client for Anthropic streams."""
    if call.family != "anthropic" or not call.stream:
        raise NotImplementedError("anthropic streams only")
    request = urllib.request.Request(call.url, data=call.body, method="POST")
    with urllib.request.urlopen(request) as response:
        body = response.read()
    normalizer, deltas = Normalizer(), []
    for event in sse_events([body]):
        delta = json.loads(event).get("delta") or {}
        if delta.get("type") == "text_delta":
            deltas.append(normalizer.feed({"content": delta["text"]}))
        elif delta.get("type") == "thinking_delta":
            deltas.append(normalizer.feed({"reasoning": delta["thinking"]}))
    deltas.append(normalizer.finish())
    return joined(deltas)


@implementation(name="doubles-reasoning", capabilities=["http"])
def doubling_client(call: HttpCall) -> dict[str, str]:
    shown = joined(chat_client(call))
    return {"assistant": shown["assistant"], "thinking": shown["thinking"] * 2}


@implementation(name="wrong-path", capabilities=["http"])
def wrong_path_client(call: HttpCall) -> dict[str, str]:
    _http().post(call.base_url + "/v1/elsewhere", content=call.body)
    return {"assistant": "", "thinking": ""}


@implementation(name="lazy", capabilities=["http"])
def lazy_client(call: HttpCall) -> dict[str, str]:
    return {"assistant": "", "thinking": ""}


_answered: list[HttpCall] = []


@implementation(name="answers-one", capabilities=["http"])
def answers_one_client(call: HttpCall) -> list[dict[str, str]]:
    """Answers its first Chat Completions stream (rightly) and says it does not speak the
    family for every later one: declining after answering (once per process)."""
    if call.family == "openai-chat" and _answered:
        raise NotImplementedError("speaks openai-chat, not this one")
    answer = chat_client(call)  # other families: NotImplementedError, as a whole
    _answered.append(call)
    return answer
