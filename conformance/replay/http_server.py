"""`conformance serve`: answer HTTP requests on 127.0.0.1 from recorded responses.

Each cassette has a base URL, `http://127.0.0.1:PORT/<cassette path without .yaml>`; a client
configured with it sends its usual request (`POST <base>/v1/chat/completions`) and gets the
recorded response, as chunked HTTP, cut as the `split` says (`splits`). The HTTP side is
`http_handler`, the cassettes and their cases `catalog`; this module is the server: its
lifecycle and its answers.

Clients in any language are checked by posting what they showed to `/_verdict/<CASE ID>`;
`GET /` lists the cassettes, their base URLs and the cases that use them.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from conformance._local_http import LocalHTTPServer
from conformance.cassettes._model import Interaction
from conformance.model.cases import CaseIdentity
from conformance.model.judge import compare
from conformance.model.options import Options, OptionsError
from conformance.replay.catalog import Served, load_served
from conformance.replay.http_handler import handler_class
from conformance.replay.splits import SPLITS, cut_points, pieces

#: Connections waiting to be accepted: hundreds of clients may connect at once, and with
#: socketserver's default of 5 the kernel drops their connection attempts (each retried
#: only after a second or more).
BACKLOG = 1024


#: The longest `delay` between HTTP chunks, in seconds.
MAX_DELAY = 60.0


class _HTTPServer(LocalHTTPServer):
    request_queue_size = BACKLOG
    name = "serve"
    log_gone = True


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
        cases: Iterable[CaseIdentity] = (),
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
        self.httpd = _HTTPServer((host, port), handler_class(self))
        if log is not None:
            self.httpd.log = log
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        if not isinstance(host, str):  # typeshed allows bytes; a TCP server's host is str
            host = host.decode()
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

    def log(self, line: str) -> None:
        self.httpd.log(line)

    def chunks_of(self, entry: Served, interaction: Interaction) -> list[bytes]:
        """The recorded response body, cut into HTTP chunks as the split says."""
        body = interaction.body
        return pieces(body, cut_points(body, entry.forms[interaction.index], self.split))

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
        assistant, thinking = reply.get("assistant"), reply.get("thinking")
        if not isinstance(assistant, str) or not isinstance(thinking, str):
            return 400, {"error": 'post {"assistant": str, "thinking": str}'}
        actual = {"assistant": assistant, "thinking": thinking}
        try:
            options = Options.from_mapping(reply.get("options") or {})
        except OptionsError as error:
            return 400, {"error": f"options: {error}"}
        expectation = case.expectation(options)
        result: dict[str, Any]
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
