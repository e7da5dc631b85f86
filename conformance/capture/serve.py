"""`conformance serve`: answer HTTP requests on 127.0.0.1 from recorded responses.

Each cassette has a base URL, `http://127.0.0.1:PORT/<cassette path without .yaml>`; a client
configured with it sends its usual request (`POST <base>/v1/chat/completions`) and gets the
recorded response, as chunked HTTP. How the body is cut into HTTP chunks is the `split`:

- `frames`: one chunk per SSE event, or per line of NDJSON and JSON (the default);
- `adversarial`: frames, and also cuts inside every delimiter (`<think>`, `</think>`... as
  text or as JSON escapes such as `\\u003cthink\\u003e`), inside every multi-byte UTF-8
  character and between CR and LF, so a client's own SSE and UTF-8 handling is fuzzed along
  with its normalizer;
- `bytes`: one byte per chunk;
- `none`: the whole body at once.

Clients in any language are checked by posting what they showed to `/_verdict/<CASE ID>`;
`GET /` lists the cassettes, their base URLs and the cases that use them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.cassettes._decode import decode_interaction
from conformance.cassettes._load import Cassette, iter_cassette_files, load_cassette
from conformance.cassettes._model import CassetteError, Interaction
from conformance.corpus.cases import Case
from conformance.model.grammar import PRESETS
from conformance.model.judge import compare
from conformance.model.options import Options, OptionsError

SPLITS = ("frames", "adversarial", "bytes", "none")
#: Headers that describe the recorded transfer, not the one the server makes.
_HOP_BY_HOP = {
    "content-length",
    "transfer-encoding",
    "content-encoding",
    "connection",
    "keep-alive",
}
#: Connections waiting to be accepted: hundreds of clients may connect at once, and with
#: socketserver's default of 5 the kernel drops their connection attempts (each retried
#: only after a second or more).
BACKLOG = 1024
#: The longest `delay` between HTTP chunks, in seconds.
MAX_DELAY = 60.0
#: What a client's going away looks like when the server writes to it.
_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


def _delimiter_patterns() -> tuple[bytes, ...]:
    """Every delimiter of every named grammar, as text and as it looks JSON-escaped."""
    found: set[bytes] = set()
    for pairs in PRESETS.values():
        for delimiter in (d for pair in pairs for d in pair):
            found.add(delimiter.encode())
            found.add(json.dumps(delimiter)[1:-1].encode())  # non-ASCII as \uXXXX
            go_style = delimiter.replace("<", "\\u003c").replace(">", "\\u003e")
            found.add(go_style.encode())
    return tuple(sorted(found, key=len, reverse=True))


_DELIMITERS = _delimiter_patterns()


def frame_ends(body: bytes, form: str) -> list[int]:
    """Offsets just after each SSE event (its blank line), or after each line otherwise."""
    ends = []
    for match in _LINE.finditer(body):
        line = match.group()
        if form != "sse" or not line.strip(b"\r\n"):
            ends.append(match.end())
    return ends


def adversarial_cuts(body: bytes) -> list[int]:
    """Offsets inside delimiters, inside multi-byte UTF-8 characters and inside CRLF."""
    cuts: set[int] = set()
    for pattern in _DELIMITERS:
        start = body.find(pattern)
        while start != -1:
            cuts.update(range(start + 1, start + len(pattern)))
            start = body.find(pattern, start + 1)
    # Before each continuation byte, that is inside a multi-byte character.
    cuts.update(match.start() for match in _CONTINUATION.finditer(body))
    start = body.find(b"\r\n")
    while start != -1:
        cuts.add(start + 1)
        start = body.find(b"\r\n", start + 1)
    return sorted(cuts)


def cut_points(body: bytes, form: str, split: str) -> list[int]:
    """Where the body is cut into HTTP chunks, in order, excluding 0 and len(body)."""
    if split == "none":
        points: Iterable[int] = ()
    elif split == "bytes":
        points = range(1, len(body))
    elif split == "frames":
        points = frame_ends(body, form)
    elif split == "adversarial":
        points = set(frame_ends(body, form)) | set(adversarial_cuts(body))
    else:
        raise ValueError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
    return sorted(p for p in set(points) if 0 < p < len(body))


def pieces(body: bytes, points: Sequence[int]) -> list[bytes]:
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


@dataclass(slots=True)
class Served:
    """One cassette the server answers from."""

    name: str
    cassette: Cassette
    cases: list[Case] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    families: list[str] = field(default_factory=list)

    def manifest(self, base: str) -> dict[str, Any]:
        return {
            "cassette": self.name,
            "base_url": f"{base}/{self.name}",
            "requests": [
                {
                    "method": i.method,
                    "path": i.path,
                    "family": self.families[i.index],
                    "form": self.forms[i.index],
                }
                for i in self.cassette.interactions
            ],
            "cases": [
                {"id": c.id, "slug": c.slug, "pending": c.pending, "expected": _expected(c)}
                for c in self.cases
            ],
        }


def _expected(case: Case) -> dict[str, Any] | str:
    expectation = case.expectation(Options())
    if isinstance(expectation, str):
        return expectation
    return {"stream": expectation.stream.to_json(), "whole": expectation.whole.to_json()}


def load_served(directory: Path, cases: Iterable[Case] = ()) -> tuple[list[Served], list[str]]:
    """Every cassette under `directory`, with the cases that use it; problems as messages."""
    served: list[Served] = []
    problems: list[str] = []
    by_path: dict[Path, list[Case]] = {}
    for case in cases:
        if case.cassette is not None:
            by_path.setdefault(case.cassette.path.resolve(), []).append(case)
    for path in iter_cassette_files(directory):
        try:
            cassette = load_cassette(path)
        except CassetteError as error:
            problems.append(str(error))
            continue
        name = path.relative_to(directory).with_suffix("").as_posix()
        entry = Served(name, cassette, by_path.get(path.resolve(), []))
        for interaction in cassette.interactions:
            family, form = _describe(interaction)
            entry.families.append(family)
            entry.forms.append(form)
        served.append(entry)
    return served, problems


def _describe(interaction: Interaction) -> tuple[str, str]:
    try:
        decoded = decode_interaction(interaction)
    except CassetteError:
        # Served all the same: a client may be meant to fail on it.
        return "unknown", "sse" if interaction.content_type == "text/event-stream" else "json"
    return decoded.family, decoded.form


class BadRequest(Exception):
    """A request the server cannot read (its body framing); answered 400."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = BACKLOG
    daemon_threads = True
    log: Callable[[str], None] = staticmethod(_stderr)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # One line per failed connection, never a traceback: a client may do anything.
        error = sys.exc_info()[1]
        peer = _peer(client_address)
        if isinstance(error, _GONE):
            self.log(f"serve: {peer}: client went away ({type(error).__name__})")
        else:
            self.log(f"serve: {peer}: connection failed: {type(error).__name__}: {error}")


def _peer(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def check_settings(port: int, delay: float) -> None:
    """ValueError for a port or delay the server cannot use."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"the port (--port) must be from 0 to 65535, not {port!r}")
    if not isinstance(delay, int | float) or not math.isfinite(delay):
        raise ValueError(f"the delay (--delay) must be a finite number of seconds, not {delay!r}")
    if not 0 <= delay <= MAX_DELAY:
        raise ValueError(f"the delay (--delay) must be from 0 to {MAX_DELAY:g} s, not {delay!r}")


class ReplayServer:
    """A threaded HTTP server over a directory of cassettes.

    Each connection is handled in its own thread; whatever a client does (a body the server
    cannot read, leaving in the middle of a stream) costs one line to `log` (standard error
    by default) and never the server."""

    def __init__(
        self,
        directory: Path,
        *,
        cases: Iterable[Case] = (),
        split: str = "frames",
        delay: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
        check_settings(port, delay)
        self.directory = directory
        self.split = split
        self.delay = delay
        self.served, self.problems = load_served(directory, cases)
        self.cases = {case.id: case for entry in self.served for case in entry.cases}
        self._counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()
        self.verdicts: list[dict[str, Any]] = []
        self.httpd = _HTTPServer((host, port), _handler(self))
        if log is not None:
            self.httpd.log = log
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def manifest(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "cassettes": [entry.manifest(self.url) for entry in self.served],
            "problems": self.problems,
        }

    def start(self) -> ReplayServer:
        """Serve in a background thread (for tests and benchmarks)."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- what the handler asks -------------------------------------------------------------

    def find(self, method: str, path: str) -> tuple[Served | None, Interaction | None, str]:
        """The cassette named by the path's prefix and its interaction for the rest."""
        best: Served | None = None
        for entry in self.served:
            prefix = "/" + entry.name
            if (path == prefix or path.startswith(prefix + "/")) and (
                best is None or len(entry.name) > len(best.name)
            ):
                best = entry
        if best is None:
            return None, None, "no cassette has this base URL; GET / lists them"
        rest = path[len(best.name) + 1 :] or "/"
        matches = [i for i in best.cassette.interactions if i.method == method and i.path == rest]
        if not matches:
            recorded = ", ".join(f"{i.method} {i.path}" for i in best.cassette.interactions)
            return best, None, f"{best.name} has no {method} {rest}; it recorded: {recorded}"
        with self._lock:
            key = (best.name, method, rest)
            chosen = matches[self._counts[key] % len(matches)]
            self._counts[key] += 1
        return best, chosen, ""

    def verdict(self, case_id: str, reply: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        case = self.cases.get(case_id)
        if case is None:
            return 404, {"error": f"no case {case_id!r} uses a served cassette"}
        actual = {name: reply.get(name) for name in ("assistant", "thinking")}
        if not all(isinstance(value, str) for value in actual.values()):
            return 400, {"error": 'post {"assistant": str, "thinking": str}'}
        try:
            options = Options.from_mapping(reply.get("options") or {})
        except OptionsError as error:
            return 400, {"error": f"options: {error}"}
        expectation = case.expectation(options)
        if isinstance(expectation, str):
            result = {"case": case.id, "verdict": "SKIP", "reason": expectation}
        else:
            form = reply.get("form", "stream")
            expected = expectation.whole if form == "whole" else expectation.stream
            judgement = compare(expected, actual, case.level)
            result = {
                "case": case.id,
                "verdict": judgement.verdict.value,
                "reason": judgement.reason,
                "expected": expected.to_json(),
            }
        with self._lock:
            self.verdicts.append(result)
        return 200, result


def _handler(server: ReplayServer) -> type[BaseHTTPRequestHandler]:
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
            server.httpd.log(f"serve: {_peer(self.client_address)}: {message}")

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except _GONE as error:
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
                self._json(400, {"error": f"bad request: {error}"})
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
                parts = []
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
            form = entry.forms[interaction.index]
            body = interaction.body
            for piece in pieces(body, cut_points(body, form, server.split)):
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
