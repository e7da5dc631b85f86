"""The HTTP servers on 127.0.0.1 (the replay server, the adapters' servers) tell a failed
connection in one line, and a client that goes away in one line or none, never with
socketserver's traceback."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

from conformance._local_http import LocalHTTPServer


def failing(server: LocalHTTPServer, error: BaseException) -> None:
    try:
        raise error
    except BaseException:
        server.handle_error(None, ("127.0.0.1", 5000))


def test_a_client_going_away_is_one_line_or_none(capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[str] = []
    server = LocalHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.log = lines.append  # type: ignore[method-assign]
    try:
        failing(server, BrokenPipeError(32, "Broken pipe"))
        assert lines == []
        server.log_gone = True
        failing(server, ConnectionResetError(104, "reset"))
        assert lines == ["server: 127.0.0.1:5000: client went away (ConnectionResetError)"]
        failing(server, ValueError("bad"))
        assert lines[-1] == "server: 127.0.0.1:5000: connection failed: ValueError: bad"
    finally:
        server.server_close()
    assert capsys.readouterr().err == ""
