"""The loopback server the HTTP adapters drive their libraries through
(conformance/adapters/event_loop_http.py), with a real HTTP client, and the wire forms it sends
(wire_events.py), read back by the project's own cassette decoders."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from conformance.adapters import wire_events
from conformance.adapters.event_loop_http import Streamed, local
from conformance.cassettes import _ollama, _openai_chat
from conformance.cassettes._sse import parse_sse


def _lines(url: str, *, every: int = 1) -> AsyncIterator[str]:
    """A client that yields the body's lines, `every` lines at a time (holding the rest)."""

    async def lines() -> AsyncIterator[str]:
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", f"{url}/v1/chat", json={"q": 1}) as response,
        ):
            held: list[str] = []
            async for line in response.aiter_lines():
                held.append(line)
                if len(held) == every:
                    yield "|".join(held)
                    held = []
            if held:
                yield "|".join(held)

    return lines()


def test_each_piece_reaches_the_client_before_the_next_is_sent() -> None:
    stream: Streamed[str] = Streamed("text/plain", lambda: _lines(local().server.url))
    assert stream.send(b"a\n") == ["a"]
    assert stream.send(b"b") == []  # half a line: the client waits for the rest
    assert stream.send(b"c\n") == ["bc"]
    assert stream.end() == []
    assert stream.ended
    assert json.loads(stream.request_body()) == {"q": 1}


def test_what_a_client_holds_back_is_seen_as_held_back() -> None:
    stream: Streamed[str] = Streamed("text/plain", lambda: _lines(local().server.url, every=2))
    assert stream.send(b"a\n") == []
    assert stream.send(b"b\n") == ["a|b"]
    assert stream.end(b"c\n") == ["c"]


def test_a_whole_call_gets_the_whole_body_even_after_an_unused_stream() -> None:
    here = local()
    Streamed("text/plain", lambda: _lines(here.server.url))  # never fed: sends no request

    async def call() -> bytes:
        async with httpx.AsyncClient() as client:
            return (await client.post(f"{here.server.url}/v1/chat", json={})).content

    assert here.whole("application/json", b'{"ok": true}', call) == b'{"ok": true}'


CHUNKS: list[dict[str, str | None]] = [
    {"content": None, "reasoning": "plan"},
    {"content": "<think>a</th", "reasoning": None},
    {"content": "ink>b", "reasoning": ""},
]


def test_openai_events_decode_to_the_chunks_sent() -> None:
    body = b"".join(wire_events.openai_event(chunk) for chunk in CHUNKS) + wire_events.openai_end()
    decoded = _openai_chat.decode_sse(parse_sse(body.decode()))
    assert [
        (c.content or None, c.reasoning or None) for c in decoded if c.content or c.reasoning
    ] == [
        (None, "plan"),
        ("<think>a</th", None),
        ("ink>b", None),
    ]


def test_ollama_lines_decode_to_the_chunks_sent() -> None:
    lines = [wire_events.ollama_line(chunk) for chunk in CHUNKS] + [wire_events.ollama_end()]
    decoded = _ollama.decode_objects((json.loads(line), n) for n, line in enumerate(lines, 1))
    assert [(c.content, c.reasoning) for c in decoded][:3] == [
        ("", "plan"),
        ("<think>a</th", None),
        ("ink>b", ""),
    ]


@pytest.mark.parametrize(
    ("content", "reasoning"), [("x<think>y</think>", None), (None, "r"), ("a", "b")]
)
def test_whole_bodies_carry_content_and_native_reasoning(
    content: str | None, reasoning: str | None
) -> None:
    message = json.loads(wire_events.openai_whole(content, reasoning))["choices"][0]["message"]
    assert (message["content"], message.get("reasoning_content")) == (content, reasoning)
    ollama = json.loads(wire_events.ollama_whole(content, reasoning))["message"]
    assert (ollama["content"], ollama.get("thinking")) == (content or "", reasoning)


EXITING = """
import httpx
from conformance.adapters.event_loop_http import Streamed, local

client = httpx.AsyncClient()  # kept, as an adapter keeps its library's client


async def lines():
    async with client.stream("POST", f"{local().server.url}/v1/chat") as response:
        async for line in response.aiter_lines():
            yield line


done = Streamed("text/plain", lines)
assert done.send(b"a\\n") == ["a"] and done.end() == []
left = Streamed("text/plain", lines)  # a stream left waiting for more, as after a timeout
assert left.send(b"b\\n") == ["b"]
"""


def test_a_process_exits_with_nothing_pending_reported(tmp_path: Path) -> None:
    """The loop's kept-alive connections and a stream left unfinished are ended at exit,
    not left for the collector to report on standard error."""
    script = tmp_path / "exiting.py"
    script.write_text(EXITING)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
