"""The HTTP side of `conformance serve`: one handler per connection, routing a request to
the server's manifest, its verdicts or a recorded response, sent as chunked HTTP."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import urlsplit

from conformance._local_http import GONE, peer
from conformance.cassettes._model import Interaction
from conformance.errors import UsageError
from conformance.replay.catalog import Served

#: Headers that describe the recorded transfer, not the one the server makes.
_HOP_BY_HOP = {
    "content-length",
    "transfer-encoding",
    "content-encoding",
    "connection",
    "keep-alive",
}


class BadRequest(UsageError):
    """A request the server cannot read (its body framing); answered 400, and the server
    goes on (the client's input error: exit status 2, were it to end a command)."""

    status = 400


class TooLarge(BadRequest):
    """A request body over MAX_BODY bytes: answered 413 before any of it is read, and the
    server goes on (exit status 2, were it to end a command)."""

    status = 413


#: The largest request body the server reads. A recorded request, or the channels a client
#: posts for a verdict, are far smaller; a declared length is never allocated beyond it.
MAX_BODY = 32 << 20


class Backend(Protocol):
    """What the handler asks of the server it answers for."""

    delay: float

    def log(self, line: str) -> None: ...

    def manifest(self) -> dict[str, Any]: ...

    def verdict(self, case_id: str, reply: Mapping[str, Any]) -> tuple[int, dict[str, Any]]: ...

    def find(self, method: str, path: str) -> tuple[Served | None, Interaction | None, str]: ...

    def chunks_of(self, entry: Served, interaction: Interaction) -> list[bytes]: ...


def handler_class(server: Backend) -> type[BaseHTTPRequestHandler]:
    """A request handler class answering for `server`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "conformance-replay"
        #: Seconds a connection may sit idle (or not read) before its thread is freed.
        timeout = 300

        def setup(self) -> None:
            super().setup()
            # Each HTTP chunk leaves at once, so the cut points reach the client.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: a client fuzzing the server would flood the terminal

        def log_error(self, format: str, *args: Any) -> None:
            # http.server's own refusals (a malformed request line, a header too long).
            self._log(f"bad request: {format % args}")

        def _log(self, message: str) -> None:
            server.log(f"serve: {peer(self.client_address)}: {message}")

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except GONE as error:
                what = f"{self.command} {self.path}: " if getattr(self, "command", None) else ""
                self._log(f"{what}client went away ({type(error).__name__})")
                self.close_connection = True

        def do_GET(self) -> None:
            self._route()

        def do_POST(self) -> None:
            self._route()

        def do_PUT(self) -> None:
            self._route()

        def _route(self) -> None:
            try:
                body = self._read_body()
            except BadRequest as error:
                self._log(f"bad request: {self.command} {self.path}: {error}")
                self.close_connection = True
                self._json(error.status, {"error": f"bad request: {error}"})
                return
            path = urlsplit(self.path).path
            if self.command == "GET" and path in ("/", "/_cassettes"):
                self._json(200, server.manifest())
            elif self.command == "POST" and path.startswith("/_verdict/"):
                try:
                    reply = json.loads(body or b"{}")
                except ValueError as error:
                    self._json(400, {"error": f"the body is not JSON: {error}"})
                    return
                self._json(*server.verdict(path.removeprefix("/_verdict/"), reply))
            else:
                self._replay(path)

        def _read_body(self) -> bytes:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                parts: list[bytes] = []
                received = 0
                while True:
                    line = self.rfile.readline(1024)
                    text = line.split(b";")[0].strip()
                    try:
                        size = int(text, 16)
                    except ValueError:
                        shown = text[:20].decode("ascii", "replace")
                        raise BadRequest(f"chunk size {shown!r} is not hexadecimal") from None
                    if size < 0:
                        raise BadRequest(f"negative chunk size {size}")
                    received += size
                    if received > MAX_BODY:
                        raise TooLarge(f"the body is over {MAX_BODY} bytes")
                    if size == 0:
                        self.rfile.readline(1024)
                        return b"".join(parts)
                    part = self.rfile.read(size)
                    if len(part) < size:
                        raise BadRequest("the body ends inside a chunk")
                    parts.append(part)
                    self.rfile.readline(1024)
            value = self.headers.get("content-length") or "0"
            try:
                length = int(value)
            except ValueError:
                raise BadRequest(f"content-length {value[:20]!r} is not a number") from None
            if length < 0:
                raise BadRequest(f"negative content-length {length}")
            if length > MAX_BODY:
                raise TooLarge(f"content-length {length} is over {MAX_BODY} bytes")
            body = self.rfile.read(length) if length else b""
            if len(body) < length:
                raise BadRequest(f"the body ends after {len(body)} of {length} bytes")
            return body

        def _replay(self, path: str) -> None:
            entry, interaction, problem = server.find(self.command, path)
            if entry is None or interaction is None:
                self._json(404, {"error": problem})
                return
            self.send_response(interaction.status, interaction.reason or None)
            for name, values in interaction.response_headers.items():
                if name not in _HOP_BY_HOP:
                    for value in values:
                        self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in server.chunks_of(entry, interaction):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                if server.delay:
                    time.sleep(server.delay)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _json(self, status: int, value: Any) -> None:
            data = json.dumps(value, ensure_ascii=False, indent=1).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
