"""Real HTTP on 127.0.0.1 for adapters that drive a library's public client: a server that
answers each request with the pieces an adapter hands it, one at a time, and a client
transport that says when the library has taken in everything sent so far.

    server = loopback()
    stream = server.open("application/x-ndjson", "/api/generate")
    # the library is pointed at stream.base_url and reads through server.transport()
    stream.send(b'{"response": "a", "done": false}\\n')  # returns once the library read it all

A response is chunked HTTP: each piece is one HTTP chunk, written when `send` is called.
`send` returns when the client, having received every byte sent so far, asks its connection
for more: the library has then handled those bytes (and whatever it yields for them has been
yielded), so an adapter can say which output each piece caused. A library that never reads
on (it failed, or it waits for something else) is waited for at most `wait` seconds.
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx

from conformance._local_http import LocalHTTPServer

#: How long a request waits for its next piece, and `send` for the client to read it.
WAIT = 60.0
_END = b""


@dataclass(slots=True)
class _Progress:
    """What the client has read of one response, under a condition."""

    condition: threading.Condition = field(default_factory=threading.Condition)
    received: int = 0
    asking: bool = False
    over: bool = False

    def update(self, change: Callable[[_Progress], None]) -> None:
        with self.condition:
            change(self)
            self.condition.notify_all()


def _asking(progress: _Progress) -> None:
    progress.asking = True


def _over(progress: _Progress) -> None:
    progress.over = True


class Stream:
    """One response: its base URL, and `send` / `end` to write it piece by piece."""

    def __init__(self, server: Loopback, token: str, content_type: str, path: str) -> None:
        self._server = server
        self.token = token
        self.content_type = content_type
        self.base_url = f"{server.url}/{token}"
        #: The one request this stream answers: `path` under `base_url`.
        self.path = f"/{token}{path}"
        self.claimed = False
        self.pieces: queue.Queue[bytes] = queue.Queue()
        self.progress = _Progress()
        self._sent = 0

    def send(self, piece: bytes, *, wait: float = WAIT) -> bool:
        """Write `piece` as one HTTP chunk and `settle`. An empty piece is not written (it
        would end the response)."""
        if piece:
            self._sent += len(piece)
            self.pieces.put(piece)
        return self.settle(wait=wait)

    def settle(self, *, wait: float = WAIT) -> bool:
        """Wait until the client has everything sent so far and asks for more (True); False
        when it stopped reading or did not ask within `wait` seconds."""
        progress = self.progress
        with progress.condition:
            ready = progress.condition.wait_for(
                lambda: progress.over or (progress.asking and progress.received >= self._sent),
                timeout=wait,
            )
            return ready and not progress.over

    def reply(self, body: bytes) -> None:
        """The whole response at once (nothing is waited for)."""
        self.pieces.put(body)
        self.end()

    def stop(self) -> None:
        """The client stopped reading (its caller saw it fail): nobody waits any longer."""
        self.progress.update(_over)

    def end(self) -> None:
        """End the response (the last HTTP chunk)."""
        self.pieces.put(_END)

    def close(self) -> None:
        self.end()
        self._server.forget(self.token)


class _Watched(httpx.SyncByteStream):
    """A response body that reports to `progress` what the client has read."""

    def __init__(self, inner: httpx.SyncByteStream, progress: _Progress) -> None:
        self._inner = inner
        self._progress = progress

    def __iter__(self) -> Iterator[bytes]:
        pieces = iter(self._inner)
        try:
            while True:
                self._progress.update(_asking)
                try:
                    piece = next(pieces)
                except StopIteration:
                    return
                size = len(piece)

                def got(progress: _Progress, size: int = size) -> None:
                    progress.asking = False
                    progress.received += size

                self._progress.update(got)
                yield piece
        finally:
            self._progress.update(_over)

    def close(self) -> None:
        self._inner.close()
        self._progress.update(_over)


class WatchingTransport(httpx.BaseTransport):
    """httpx's own HTTP transport, with the bodies of the loopback's responses watched."""

    def __init__(self, server: Loopback) -> None:
        self._server = server
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        stream = self._server.stream_for(request.url.path)
        if stream is not None and isinstance(response.stream, httpx.SyncByteStream):
            response.stream = _Watched(response.stream, stream.progress)
        return response

    def close(self) -> None:
        self._inner.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # the adapter reports what matters; nothing goes to standard error

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        stream = self.server.loopback.claim(self.path)
        if stream is None:
            body = b'{"error": "nothing is served at this path"}'
            self.send_response(404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("content-type", stream.content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        while True:
            try:
                piece = stream.pieces.get(timeout=WAIT)
            except queue.Empty:
                piece = _END
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            if piece == _END:
                return

    do_POST = _answer
    do_GET = _answer


class _Server(LocalHTTPServer):
    name = "loopback server"
    loopback: Loopback


class Loopback:
    """The server, in a background thread, with the streams it has open."""

    def __init__(self) -> None:
        self._streams: dict[str, Stream] = {}
        self._lock = threading.RLock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.loopback = self
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self._transport = WatchingTransport(self)

    def open(self, content_type: str, path: str) -> Stream:
        """A stream that answers the first request for `path` under its base URL; any other
        request (a library asking for model information, say) gets 404."""
        stream = Stream(self, uuid.uuid4().hex, content_type, path)
        with self._lock:
            self._streams[stream.token] = stream
        return stream

    def forget(self, token: str) -> None:
        with self._lock:
            self._streams.pop(token, None)

    def stream_for(self, path: str) -> Stream | None:
        token = path.lstrip("/").partition("/")[0]
        with self._lock:
            stream = self._streams.get(token)
        return stream if stream is not None and stream.path == path else None

    def claim(self, path: str) -> Stream | None:
        """The stream that answers a request for `path`, if it has not answered one yet."""
        with self._lock:
            stream = self.stream_for(path)
            if stream is None or stream.claimed:
                return None
            stream.claimed = True
            return stream

    def client(self) -> httpx.Client:
        """An httpx client whose requests to this server are watched (shareable)."""
        return httpx.Client(transport=self._transport, timeout=WAIT)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@cache
def loopback() -> Loopback:
    """The process's loopback server, started on first use."""
    return Loopback()
