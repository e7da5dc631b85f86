"""HTTP servers on 127.0.0.1 in a background thread: `conformance serve`'s replay server and
the adapters' servers that feed a library's HTTP client. What they share is how a failed
connection is told: one line, never socketserver's traceback on standard error."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

#: What a client's going away looks like when the server writes to it.
GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


_WRITING = threading.Lock()


def stderr_line(line: str) -> None:
    # One write under a lock: request threads log at once, and print() writes the line and
    # its newline apart, so two lines could run together.
    with _WRITING:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def peer(address: Any) -> str:
    """A client's address as `host:port`, for log lines."""
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


class LocalHTTPServer(ThreadingHTTPServer):
    """A threading server whose request threads never outlive the process."""

    daemon_threads = True
    #: The name its log lines start with.
    name = "server"
    log: Callable[[str], None] = staticmethod(stderr_line)
    #: Whether a client that goes away gets a line: a replayed stream cut short is news; a
    #: library closing a kept-alive connection is how HTTP clients end.
    log_gone = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        who = peer(client_address)
        if not isinstance(error, GONE):
            self.log(f"{self.name}: {who}: connection failed: {type(error).__name__}: {error}")
        elif self.log_gone:
            self.log(f"{self.name}: {who}: client went away ({type(error).__name__})")
