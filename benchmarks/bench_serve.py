"""How `conformance serve` holds up under many clients at once. Prints figures; asserts nothing.

    python benchmarks/bench_serve.py [--clients 200] [--split frames] [--rounds 3]

`conformance serve` runs as its own process on 127.0.0.1 over the bundled cassettes; that
many clients, each in its own thread with its own TCP connection, start together on a
barrier and replay one streamed capture (POST, read the chunked body to the end, compare
it with the recorded bytes). Printed per round: the wall time from the barrier to the last
body, and how many replays were lost (a timeout, a reset, or a body that differs).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time

from conformance.cassettes import bundled_cassettes_dir, load_cassette

CASSETTE = "deepseek/reasoner-stream"


def start_server(split: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "conformance", "serve", str(bundled_cassettes_dir())),
            *("--port", "0", "--split", split),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    return process, first.split(" on ")[1].split(" ")[0]


def read_chunked(sock_file) -> bytes:  # type: ignore[no-untyped-def]
    """The body of a chunked HTTP/1.1 response, after its head."""
    while sock_file.readline() not in (b"\r\n", b"\n", b""):
        pass
    parts = []
    while True:
        size = int(sock_file.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return b"".join(parts)
        parts.append(sock_file.read(size))
        sock_file.readline()


def replay_once(host: str, port: int, path: str, timeout: float) -> bytes:
    import socket

    with socket.create_connection((host, port), timeout=timeout) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\nConnection: close\r\n"
        sock.sendall(head.encode() + b"\r\n{}")
        with sock.makefile("rb") as sock_file:
            return read_chunked(sock_file)


def concurrent_replays(url: str, clients: int, timeout: float) -> tuple[float, int]:
    """(seconds from the start to the last body, replays lost)."""
    host, port = url.removeprefix("http://").split(":")
    expected = load_cassette(bundled_cassettes_dir() / f"{CASSETTE}.yaml").interactions[0].body
    path = f"/{CASSETTE}/chat/completions"
    barrier = threading.Barrier(clients + 1)
    lost = [0]
    lock = threading.Lock()

    def client() -> None:
        barrier.wait()
        try:
            ok = replay_once(host, int(port), path, timeout) == expected
        except OSError:
            ok = False
        if not ok:
            with lock:
                lost[0] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, lost[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--split", default="frames")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=30.0, help="Per client, in seconds.")
    arguments = parser.parse_args()
    process, url = start_server(arguments.split)
    try:
        times = []
        for round_ in range(1, arguments.rounds + 1):
            seconds, lost = concurrent_replays(url, arguments.clients, arguments.timeout)
            times.append(seconds)
            print(
                f"round {round_}: {arguments.clients} concurrent replays of {CASSETTE} "
                f"(split {arguments.split}): {seconds:.2f} s, {lost} lost"
            )
        print(f"median: {statistics.median(times):.2f} s")
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
