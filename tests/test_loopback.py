"""The loopback server the LiteLLM adapters drive `litellm.completion` against: each piece is
written when it is sent, `send` returns once the client has read it and asks for more, and a
client that stops reading is not waited for. Then the adapters built on it: what LiteLLM
yields is reported for the chunk that caused it, not at the end of the stream."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from conformance.adapters.loopback import Loopback


@pytest.fixture(scope="module")
def server() -> Iterator[Loopback]:
    loopback = Loopback()
    yield loopback
    loopback.close()


class Reader:
    """A client reading one streamed response line by line, in a thread."""

    def __init__(self, client: httpx.Client, url: str, *, stop_after: int | None = None) -> None:
        self.lines: list[str] = []
        self.status = 0
        self._client = client
        self._url = url
        self._stop_after = stop_after
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with self._client.stream("POST", self._url, content=b"{}") as response:
            self.status = response.status_code
            for line in response.iter_lines():
                self.lines.append(line)
                if self._stop_after is not None and len(self.lines) >= self._stop_after:
                    return


def test_send_returns_once_the_client_has_read_the_piece(server: Loopback) -> None:
    stream = server.open("application/x-ndjson", "/api/generate")
    reader = Reader(server.client(), stream.base_url + "/api/generate")
    try:
        for number in range(5):
            assert stream.send(f"line {number}\n".encode(), wait=10)
            # Read, and the client is waiting for more: nothing is still in flight.
            assert reader.lines == [f"line {n}" for n in range(number + 1)]
        stream.end()
        reader.thread.join(timeout=10)
        assert reader.status == 200 and not reader.thread.is_alive()
    finally:
        stream.close()


def test_a_piece_cut_across_reads_is_waited_for_whole(server: Loopback) -> None:
    stream = server.open("application/x-ndjson", "/api/generate")
    reader = Reader(server.client(), stream.base_url + "/api/generate")
    try:
        assert stream.send(b"a" * 200_000 + b"\n", wait=10)
        assert reader.lines == ["a" * 200_000]
    finally:
        stream.close()


def test_a_client_that_stops_reading_is_not_waited_for(server: Loopback) -> None:
    stream = server.open("application/x-ndjson", "/api/generate")
    reader = Reader(server.client(), stream.base_url + "/api/generate", stop_after=1)
    try:
        # The client reads the line and closes the response: no more is ever asked for.
        assert not stream.send(b"first\n", wait=10)
        reader.thread.join(timeout=10)
        assert reader.lines == ["first"]
        started = time.monotonic()
        assert not stream.send(b"second\n", wait=10)
        assert time.monotonic() - started < 5
    finally:
        stream.close()


def test_send_gives_up_after_the_wait_when_nobody_reads(server: Loopback) -> None:
    stream = server.open("application/x-ndjson", "/api/generate")
    try:
        assert not stream.send(b"unread\n", wait=0.2)
    finally:
        stream.close()


def test_a_stream_answers_one_request_for_its_path(server: Loopback) -> None:
    stream = server.open("application/json", "/api/generate")
    try:
        stream.reply(b'{"response": "x"}')
        with server.client() as client:
            # Another path under the stream's base URL (model information, say): 404.
            assert client.post(stream.base_url + "/api/show").status_code == 404
            assert client.post(stream.base_url + "/api/generate").json() == {"response": "x"}
            # A stream answers one request; an unknown base URL nothing.
            assert client.post(stream.base_url + "/api/generate").status_code == 404
            assert client.post(server.url + "/nobody/api/generate").status_code == 404
    finally:
        stream.close()


def _per_chunk(factory: type, chunks: list[str | tuple[str, str]]) -> list[tuple[str, str]]:
    """Each chunk's delta, then the last one; a pair is (content, native reasoning)."""
    normalizer = factory()
    deltas = []
    for chunk in chunks:
        content, reasoning = chunk if isinstance(chunk, tuple) else (chunk, None)
        deltas.append(normalizer.feed({"content": content, "reasoning": reasoning}))
    deltas.append(normalizer.finish())
    return [(d["assistant"], d["thinking"]) for d in deltas]


@pytest.mark.slow
def test_litellm_output_is_reported_for_the_chunk_that_caused_it() -> None:
    litellm_http = pytest.importorskip("conformance.adapters.litellm_http")
    chunks = ["<think>ab", "c</think>Fin", "al"]
    # The OpenAI-compatible stream passes content through, chunk by chunk.
    assert _per_chunk(litellm_http.OpenAIStream, chunks) == [
        ("<think>ab", ""),
        ("c</think>Fin", ""),
        ("al", ""),
        ("", ""),
    ]
    # /api/generate: the chunk with the close tag goes to the content whole.
    assert _per_chunk(litellm_http.OllamaGenerate, chunks) == [
        ("", "ab"),
        ("cFin", ""),
        ("al", ""),
        ("", ""),
    ]


@pytest.mark.parametrize(
    "chunks",
    [
        ["<think>a</think>b", "c"],
        ["x", "<think>y", "z</think>w", "<think>v"],
        [("", "plan"), "<think>a", "</think>b"],
        ['{"a": 1', "}"],
    ],
)
@pytest.mark.slow
def test_the_generate_adapter_streams_as_litellm_completion_does(chunks: list[str]) -> None:
    """litellm-ollama-generate runs /api/generate's stream parser in process (a request per
    stream would be too slow for the corpus): chunk by chunk, it shows what
    `litellm.completion(model="ollama/...", stream=True)` shows over HTTP."""
    litellm_http = pytest.importorskip("conformance.adapters.litellm_http")
    from conformance.adapters.litellm import OllamaGenerate

    assert _per_chunk(OllamaGenerate, chunks) == _per_chunk(litellm_http.OllamaGenerate, chunks)


@pytest.mark.slow
def test_the_responses_bridge_keeps_the_chat_completions_channels() -> None:
    """litellm.responses bridged to chat completions: content becomes output_text deltas and
    reasoning_content reasoning summary deltas, chunk by chunk; whole, message and reasoning
    output items."""
    litellm_http = pytest.importorskip("conformance.adapters.litellm_http")
    chunks: list[str | tuple[str, str]] = [("", "plan"), "<think>a", "</think>b", "c"]
    assert _per_chunk(litellm_http.ResponsesBridge, chunks) == [
        ("", "plan"),
        ("<think>a", ""),
        ("</think>b", ""),
        ("c", ""),
        ("", ""),
    ]
    bridge = litellm_http.ResponsesBridge()
    assert bridge.whole("<think>a</think>b", None) == {"assistant": "b", "thinking": "a"}
    assert bridge.whole("<think>a</think>b", "R") == {
        "assistant": "<think>a</think>b",
        "thinking": "R",
    }
