"""Throughput of the implementation protocol through `cmd:` (conformance/transport/subprocess.py).

    python benchmarks/bench_protocol.py [--seconds S]

Prints stream requests per second, for several batch sizes, with:

- the reference normalizer as the subprocess (`python -m conformance.server`), streams of
  5 small chunks as a case's checks send them;
- a trivial protocol server that answers every stream with empty deltas, so the figure is the
  cost of the protocol itself (JSON both ways, pipes, reply checks) without a normalizer;
- the raw round trip of a line-echo process driven without the harness (no JSON at all), the
  ceiling any pipe-based protocol has on this machine.

It prints figures and asserts nothing: the brief's target for the first line is 20,000 stream
requests per second.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import threading
import time

from conformance.model.chunks import Chunk
from conformance.model.requests import StreamRequest
from conformance.transport.spec import ImplementationSpec
from conformance.transport.subprocess import SubprocessConnection

CHUNKS = (
    Chunk("Hello <thi"),
    Chunk("nk>let me think about"),
    Chunk(" this</th"),
    Chunk("ink>The answer"),
    Chunk(" is 42."),
)
BATCHES = (1, 10, 100, 1000)

TRIVIAL_SERVER = """
from conformance.transport.protocol_server import serve_handler

EMPTY = {"assistant": "", "thinking": ""}
HELLO = {"protocol": 1, "implementation": {"name": "trivial", "version": "0", "language": "python"}}

def handle(request):
    op = request["op"]
    if op == "hello":
        return HELLO
    if op == "bye":
        return None
    return {"id": request["id"], "deltas": [EMPTY] * (len(request["chunks"]) + 1)}

serve_handler(handle)
"""

LINE_ECHO = """
import os
while data := os.read(0, 1 << 16):
    os.write(1, data)
"""


def requests_per_second(argv: list[str], batch: int, seconds: float) -> float:
    spec = ImplementationSpec("bench", "cmd:bench")
    requests = [StreamRequest(CHUNKS)] * batch
    with SubprocessConnection(argv, spec) as connection:
        connection.send(requests)  # warm up
        done = 0
        started = time.perf_counter()
        while (elapsed := time.perf_counter() - started) < seconds:
            replies = connection.send(requests)
            assert replies[-1].deltas is not None, replies[-1]
            done += batch
    return done / elapsed


def raw_lines_per_second(batch: int, seconds: float) -> float:
    """Pipelined lines through a process that echoes its input: write a batch, read it back."""
    line = b'{"op":"stream","id":"1","chunks":[' + b'{"content":"Hello <thi"},' * 4 + b"{}]}\n"
    payload = line * batch
    process = subprocess.Popen(
        [sys.executable, "-c", LINE_ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    assert process.stdin and process.stdout
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    done = 0
    started = time.perf_counter()
    # A thread only when the batch might not fit in the pipe, as the harness does.
    threaded = len(payload) > 1 << 14
    while (elapsed := time.perf_counter() - started) < seconds:
        if threaded:
            writer = threading.Thread(target=os.write, args=(stdin, payload))
            writer.start()
        else:
            os.write(stdin, payload)
        remaining = len(payload)
        while remaining:
            remaining -= len(os.read(stdout, 1 << 16))
        if threaded:
            writer.join()
        done += batch
    process.stdin.close()
    process.wait()
    return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per figure (default 2)")
    seconds = parser.parse_args().seconds
    print(
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}"
    )
    print(f"stream requests of {len(CHUNKS)} chunks, per second, by batch size (pipelined)\n")
    rows = [
        (
            "reference (cmd:)",
            lambda b: requests_per_second([sys.executable, "-m", "conformance.server"], b, seconds),
        ),
        (
            "trivial server (cmd:)",
            lambda b: requests_per_second([sys.executable, "-c", TRIVIAL_SERVER], b, seconds),
        ),
        ("raw line echo", lambda b: raw_lines_per_second(b, seconds)),
    ]
    print(f"{'':24}" + "".join(f"{f'batch {b}':>14}" for b in BATCHES))
    for name, measure in rows:
        figures = [measure(batch) for batch in BATCHES]
        print(f"{name:24}" + "".join(f"{figure:>14,.0f}" for figure in figures), flush=True)


if __name__ == "__main__":
    main()
