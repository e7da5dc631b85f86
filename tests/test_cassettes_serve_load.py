"""`conformance serve` under load and abuse: many clients at once, bad request bodies,
clients that leave mid-stream, and bad `--port` / `--delay` values. Every client here is a
real TCP client of a real `conformance serve` process on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.cassettes import bundled_cassettes_dir, load_cassette
from conformance.replay.http_handler import MAX_BODY
from conformance.replay.http_server import ReplayServer

from .helpers import cli, conformance_popen

# The clients of benchmarks/bench_serve.py, so the test measures what the benchmark does.
_spec = importlib.util.spec_from_file_location(
    "bench_serve", Path(__file__).parent.parent / "benchmarks" / "bench_serve.py"
)
assert _spec is not None and _spec.loader is not None
bench_serve = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_serve)
concurrent_replays, read_chunked = bench_serve.concurrent_replays, bench_serve.read_chunked

STREAM = "deepseek/reasoner-stream"


class Served:
    def __init__(self, *flags: str) -> None:
        self.process = conformance_popen(
            *("serve", bundled_cassettes_dir(), "--port", "0", *flags),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        self.url = first.split(" on ")[1].split(" ")[0]
        host, port = self.url.removeprefix("http://").split(":")
        self.address = (host, int(port))

    def stop(self) -> str:
        """Stop the server; its standard error."""
        self.process.terminate()
        _, stderr = self.process.communicate(timeout=10)
        return stderr


@pytest.fixture
def served() -> Iterator[Served]:
    server = Served()
    yield server
    if server.process.poll() is None:
        server.stop()


def exchange(address: tuple[str, int], raw: bytes) -> bytes:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def replay_ok(server: Served) -> bool:
    head = f"POST /{STREAM}/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
    with socket.create_connection(server.address, timeout=10) as sock:
        sock.sendall(head.encode() + b"Connection: close\r\n\r\n{}")
        with sock.makefile("rb") as sock_file:
            body = read_chunked(sock_file)
    return body == load_cassette(bundled_cassettes_dir() / f"{STREAM}.yaml").interactions[0].body


@pytest.mark.slow
def test_two_hundred_concurrent_replays_are_all_served_quickly(served: Served):
    # A listen backlog of 5 dropped connections: 200 clients took tens of seconds and many
    # timed out. benchmarks/bench_serve.py measures the real figure; this bound is generous.
    seconds, lost = concurrent_replays(served.url, 200, timeout=20)
    assert lost == 0
    assert seconds < 8, f"200 concurrent replays took {seconds:.1f} s"
    assert "Traceback" not in served.stop()


def test_a_bad_request_body_is_a_400_and_one_log_line(served: Served):
    bad_chunk = (
        b"POST /_verdict/8L8J HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\nhello\r\n0\r\n\r\n"
    )
    answer = exchange(served.address, bad_chunk)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"chunk size" in answer
    bad_length = b"POST /_verdict/8L8J HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n{}"
    assert exchange(served.address, bad_length).startswith(b"HTTP/1.1 400")
    assert replay_ok(served)  # still serving
    stderr = served.stop()
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 2 and all("bad request" in line for line in lines), stderr


def test_a_body_over_the_limit_is_a_413_before_it_is_read(served: Served):
    # A declared Content-Length of 2 GB was allocated as declared.
    huge = b"POST /_verdict/8L8J HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000000\r\n\r\n{}"
    assert exchange(served.address, huge).startswith(b"HTTP/1.1 413")
    chunk = b"%x\r\n" % (MAX_BODY + 1)
    chunked = b"POST /_verdict/8L8J HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert exchange(served.address, chunked + chunk).startswith(b"HTTP/1.1 413")
    assert replay_ok(served)  # still serving
    assert "Traceback" not in served.stop()


def test_a_client_that_leaves_mid_stream_is_one_log_line():
    server = Served("--split", "bytes", "--delay", "0.002")
    try:
        for _ in range(3):
            with socket.create_connection(server.address, timeout=10) as sock:
                head = f"POST /{STREAM}/chat/completions HTTP/1.1\r\nHost: x\r\n"
                sock.sendall(head.encode() + b"Content-Length: 2\r\n\r\n{}")
                assert sock.recv(100).startswith(b"HTTP/1.1 200")
                # Reset, not a polite close, so the server's next write fails at once.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        time.sleep(0.5)
        assert server.process.poll() is None
    finally:
        stderr = server.stop()
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 3 and all("client went away" in line for line in lines), stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "70000"], "--port"),
        (["--port", "-1"], "--port"),
        (["--delay", "-1"], "--delay"),
        (["--delay", "nan"], "--delay"),
        (["--delay", "inf"], "--delay"),
    ],
)
def test_out_of_range_port_and_delay_are_usage_errors(flags: list[str], message: str):
    # Refused by the option types before the command runs: no server is started here.
    result = cli("serve", bundled_cassettes_dir(), *flags)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("kwargs", [{"port": 65536}, {"delay": -0.5}, {"delay": float("nan")}])
def test_the_replay_server_refuses_bad_settings(kwargs: dict[str, float]):
    with pytest.raises(ValueError):
        ReplayServer(bundled_cassettes_dir(), **kwargs)
