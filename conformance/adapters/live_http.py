"""A provider on 127.0.0.1 that answers a client one chunk at a time, for adapters of clients.

An adapter of an HTTP client (LangChain's chat models) starts one `LiveServer` per process and
opens a `Channel` per stream. The client sends its usual request with the channel's name as
the model (`"model": "conformance-7"`); the server answers it from the channel: each chunk the
adapter `send`s is written at once as one wire event (an OpenAI-compatible
`chat.completion.chunk` SSE event, or an Ollama `/api/chat` NDJSON line), each event as one
HTTP chunk, and `end()` writes the closing event and ends the body. A request that does not
stream (`"stream": false`) is answered once the channel has ended, with one message holding
everything sent. The wire forms are what `conformance.cassettes` decodes (the tests check that
the two agree).

The server never blocks for ever: a channel that is not fed for `IDLE` seconds, or a request
for an unknown model, is answered with an error the client raises.
"""

from __future__ import annotations

import itertools
import json
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from conformance._local_http import LocalHTTPServer, stderr_line

from ..interface import Chunk

#: Seconds the server waits for the adapter's next chunk before it gives the stream up.
IDLE = 60.0
#: The wire forms: where the client posts, and the content type of a streamed answer.
WIRES = {
    "openai": ("/v1/chat/completions", "text/event-stream"),
    "ollama": ("/api/chat", "application/x-ndjson"),
}
_END = None
_CREATED = "2026-01-01T00:00:00Z"


@dataclass
class Channel:
    """One stream's answer: the chunks the adapter sends, in order, then its end."""

    name: str
    _chunks: queue.Queue[Chunk | None] = field(default_factory=queue.Queue)
    #: The request the client made (its JSON body), once it has made it.
    request: dict[str, Any] | None = None

    def send(self, chunk: Chunk) -> None:
        self._chunks.put(dict(chunk))

    def end(self) -> None:
        self._chunks.put(_END)

    def chunks(self, idle: float) -> Iterator[Chunk]:
        """The chunks as they are sent, until the end (TimeoutError after `idle` seconds
        without one)."""
        while True:
            try:
                chunk = self._chunks.get(timeout=idle)
            except queue.Empty:
                raise TimeoutError(f"no chunk was sent to {self.name} for {idle:g} s") from None
            if chunk is _END:
                return
            yield chunk


# -- the wire forms --------------------------------------------------------------------------


def openai_event(model: str, chunk: Chunk, *, first: bool) -> bytes:
    """One `chat.completion.chunk` event: content in `delta.content`, native reasoning in
    `delta.reasoning_content` (DeepSeek's field)."""
    delta: dict[str, Any] = {"role": "assistant"} if first else {}
    delta["content"] = chunk.get("content")
    if chunk.get("reasoning") is not None:
        delta["reasoning_content"] = chunk["reasoning"]
    return _sse(_openai_chunk(model, {"index": 0, "delta": delta, "finish_reason": None}))


def openai_end(model: str) -> bytes:
    stop = {"index": 0, "delta": {}, "finish_reason": "stop"}
    return _sse(_openai_chunk(model, stop)) + b"data: [DONE]\n\n"


def openai_message(model: str, content: str | None, reasoning: str | None) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return _json(
        {
            "id": "chatcmpl-conformance",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def ollama_line(model: str, chunk: Chunk) -> bytes:
    """One `/api/chat` object: content in `message.content`, native reasoning in
    `message.thinking`."""
    message: dict[str, Any] = {"role": "assistant", "content": chunk.get("content") or ""}
    if chunk.get("reasoning") is not None:
        message["thinking"] = chunk["reasoning"]
    return _json({"model": model, "created_at": _CREATED, "message": message, "done": False})


def ollama_end(model: str, content: str = "", reasoning: str | None = None) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["thinking"] = reasoning
    done = {"done": True, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1}
    return _json({"model": model, "created_at": _CREATED, "message": message, **done})


def _openai_chunk(model: str, choice: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-conformance",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [choice],
    }


def _dumps(value: Any) -> bytes:
    # UTF-8, with U+2028 and U+2029 escaped as Go's encoder (Ollama's) escapes them: line
    # readers that split as str.splitlines does (httpx's) would break a line at them.
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def _sse(value: Any) -> bytes:
    return b"data: " + _dumps(value) + b"\n\n"


def _json(value: Any) -> bytes:
    return _dumps(value) + b"\n"


def _joined(chunks: list[Chunk], key: str) -> str | None:
    pieces = [chunk[key] for chunk in chunks if chunk.get(key) is not None]
    return "".join(pieces) if pieces else None


# -- the server ------------------------------------------------------------------------------


class LiveServer:
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port) answering from channels."""

    def __init__(self, *, idle: float = IDLE, log: Callable[[str], None] | None = None) -> None:
        self.idle = idle
        self.log = log or stderr_line
        self._channels: dict[str, Channel] = {}
        self._names = itertools.count(1)
        self._lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.log = self.log
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def open(self) -> Channel:
        with self._lock:
            channel = Channel(f"conformance-{next(self._names)}")
            self._channels[channel.name] = channel
        return channel

    def close(self, channel: Channel) -> None:
        with self._lock:
            self._channels.pop(channel.name, None)

    def channel(self, name: Any) -> Channel | None:
        with self._lock:
            return self._channels.get(name) if isinstance(name, str) else None

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


class _Server(LocalHTTPServer):
    name = "live server"


def _handler(server: LiveServer) -> type[BaseHTTPRequestHandler]:
    routes = {path: wire for wire, (path, _) in WIRES.items()}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Each event leaves at once, as its own HTTP chunk.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                request = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                request = None
            wire = routes.get(self.path.split("?")[0])
            if wire is None or not isinstance(request, dict):
                self._error(404, f"POST {self.path}: this server answers only {sorted(routes)}")
                return
            channel = server.channel(request.get("model"))
            if channel is None:
                self._error(404, f"no stream is open for the model {request.get('model')!r}")
                return
            channel.request = request
            # OpenAI's default is one message; Ollama's, a stream.
            if request.get("stream", wire == "ollama"):
                self._stream(wire, channel)
            else:
                self._whole(wire, channel)

        def _stream(self, wire: str, channel: Channel) -> None:
            self.send_response(200)
            self.send_header("content-type", WIRES[wire][1])
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            model = channel.name
            try:
                for number, chunk in enumerate(channel.chunks(server.idle)):
                    if wire == "openai":
                        self._chunk(openai_event(model, chunk, first=number == 0))
                    else:
                        self._chunk(ollama_line(model, chunk))
            except TimeoutError as error:
                server.log(f"live server: {error}; the response is cut off")
                self.close_connection = True
                return
            # The closing event and the end of the body leave together: a client that stops
            # reading at the closing event still finds the body complete, and keeps the
            # connection.
            self._chunk((openai_end(model) if wire == "openai" else ollama_end(model)), last=True)

        def _whole(self, wire: str, channel: Channel) -> None:
            try:
                chunks = list(channel.chunks(server.idle))
            except TimeoutError as error:
                self._error(504, str(error))
                return
            content, reasoning = _joined(chunks, "content"), _joined(chunks, "reasoning")
            if wire == "openai":
                body = openai_message(channel.name, content, reasoning)
            else:
                body = ollama_end(channel.name, content or "", reasoning)
            self._body(200, body)

        def _chunk(self, data: bytes, *, last: bool = False) -> None:
            end = b"0\r\n\r\n" if last else b""
            self.wfile.write(b"%x\r\n%s\r\n%s" % (len(data), data, end))
            self.wfile.flush()

        def _error(self, status: int, message: str) -> None:
            server.log(f"live server: {message}")
            self._body(status, _json({"error": {"message": message}}))

        def _body(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    return Handler
