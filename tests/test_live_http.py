"""The live provider the LangChain adapters talk to (conformance/adapters/live_http.py): real
HTTP on 127.0.0.1, one event written per chunk sent, wire forms the cassette decoders read
back as the chunks sent, and errors a client raises instead of hanging."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.adapters.live_http import WIRES, LiveServer
from conformance.cassettes._ollama import decode_json as decode_ollama_json
from conformance.cassettes._ollama import decode_objects
from conformance.cassettes._openai_chat import decode_json as decode_openai_json
from conformance.cassettes._openai_chat import decode_sse
from conformance.cassettes._sse import parse_sse
from conformance.model.chunks import Chunk

CHUNKS = (
    Chunk("<think>pl", None),
    Chunk(None, "native"),
    Chunk("an</think>", "more"),
    Chunk('Answer \u2028 "quoted" \u00e9', None),
    Chunk("", ""),
)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = LiveServer(idle=5, log=lambda line: None)
    yield live
    live.shutdown()


def post(server: LiveServer, wire: str, body: dict[str, Any]) -> http.client.HTTPResponse:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=10)
    connection.request(
        "POST", WIRES[wire][0], json.dumps(body), {"content-type": "application/json"}
    )
    return connection.getresponse()


def test_the_server_listens_on_the_loopback(server: LiveServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert int(server.url.rsplit(":", 1)[1]) > 0


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_stream_decodes_to_the_chunks_sent(server: LiveServer, wire: str) -> None:
    channel = server.open()
    for chunk in CHUNKS:
        channel.send(chunk.to_json())
    channel.end()
    response = post(server, wire, {"model": channel.name, "stream": True})
    assert response.status == 200
    assert response.getheader("content-type") == WIRES[wire][1]
    body = response.read().decode()
    if wire == "openai":
        got = decode_sse(parse_sse(body))
        assert got == list(CHUNKS)
        assert body.endswith("data: [DONE]\n\n")
    else:
        lines = [(json.loads(text), n) for n, text in enumerate(body.splitlines(), 1)]
        # Ollama's content is always a string; its closing object has none.
        assert decode_objects(lines) == [
            Chunk(chunk.content or "", chunk.reasoning) for chunk in CHUNKS
        ] + [Chunk("", None)]
    assert channel.request == {"model": channel.name, "stream": True}
    server.close(channel)


def test_each_chunk_is_written_when_it_is_sent(server: LiveServer) -> None:
    """The client reads the first event while the second is not yet sent: a stream is live,
    one event per chunk, not a recording written at once."""
    channel = server.open()
    channel.send({"content": "first", "reasoning": None})
    response = post(server, "ollama", {"model": channel.name})
    first = json.loads(response.readline().decode().strip() or response.readline())
    assert first["message"]["content"] == "first" and first["done"] is False
    channel.send({"content": "second", "reasoning": "r"})
    channel.end()
    rest = [json.loads(line) for line in response.read().decode().splitlines() if line]
    assert [item["message"].get("thinking") for item in rest] == ["r", None]
    assert rest[-1]["done"] is True
    server.close(channel)


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_request_that_does_not_stream_gets_one_message(server: LiveServer, wire: str) -> None:
    channel = server.open()
    for chunk in CHUNKS:
        channel.send(chunk.to_json())
    channel.end()
    response = post(server, wire, {"model": channel.name, "stream": False})
    assert response.status == 200
    value = json.loads(response.read())
    decode = decode_openai_json if wire == "openai" else decode_ollama_json
    content = "".join(chunk.content or "" for chunk in CHUNKS)
    reasoning = "".join(chunk.reasoning or "" for chunk in CHUNKS)
    assert decode(value, 1) == [Chunk(content, reasoning)]
    server.close(channel)


def test_a_model_with_no_open_stream_is_refused(server: LiveServer) -> None:
    response = post(server, "openai", {"model": "conformance-nope", "stream": True})
    assert response.status == 404
    assert "no stream is open" in json.loads(response.read())["error"]["message"]


def test_an_unknown_path_is_refused(server: LiveServer) -> None:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), port, timeout=10)
    connection.request("POST", "/v1/completions", "{}")
    response = connection.getresponse()
    assert response.status == 404
    assert "/v1/chat/completions" in json.loads(response.read())["error"]["message"]


def test_a_stream_never_fed_is_given_up_not_waited_for() -> None:
    lines: list[str] = []
    live = LiveServer(idle=0.2, log=lines.append)
    try:
        stalled = live.open()
        stalled.send({"content": "a", "reasoning": None})
        response = post(live, "openai", {"model": stalled.name, "stream": True})
        body = response.read() if response.status == 200 else b""
        assert b"[DONE]" not in body  # cut off: the client sees a truncated stream
        whole = live.open()
        response = post(live, "openai", {"model": whole.name, "stream": False})
        assert response.status == 504
    except http.client.IncompleteRead:
        pass  # the truncated body, as some reads report it
    finally:
        live.shutdown()
    assert any("no chunk was sent" in line for line in lines)
