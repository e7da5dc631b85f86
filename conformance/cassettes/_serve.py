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
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._cases import Case
from .._grammar import PRESETS
from .._judge import compare
from .._options import Options, OptionsError
from ._decode import decode_interaction
from ._load import Cassette, iter_cassette_files, load_cassette
from ._model import CassetteError, Interaction

SPLITS = ("frames", "adversarial", "bytes", "none")
#: Headers that describe the recorded transfer, not the one the server makes.
_HOP_BY_HOP = {
    "content-length",
    "transfer-encoding",
    "content-encoding",
    "connection",
    "keep-alive",
}
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


class ReplayServer:
    """A threaded HTTP server over a directory of cassettes."""

    def __init__(
        self,
        directory: Path,
        *,
        cases: Iterable[Case] = (),
        split: str = "frames",
        delay: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
        self.directory = directory
        self.split = split
        self.delay = delay
        self.served, self.problems = load_served(directory, cases)
        self.cases = {case.id: case for entry in self.served for case in entry.cases}
        self._counts: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()
        self.verdicts: list[dict[str, Any]] = []
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
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

        def setup(self) -> None:
            super().setup()
            # Each HTTP chunk leaves at once, so the cut points reach the client.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: a client fuzzing the server would flood the terminal

        def do_GET(self) -> None:
            self._route()

        def do_POST(self) -> None:
            self._route()

        def do_PUT(self) -> None:
            self._route()

        def _route(self) -> None:
            body = self._read_body()
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
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("content-length") or 0)
            return self.rfile.read(length) if length else b""

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
