"""How long the harness takes. Prints figures; asserts nothing.

    python benchmarks/bench_harness.py

- the full default run (every case, every check, all four reports written) against the
  reference in process and through `cmd:`, as the `conformance run` command a user types;
- the same run inside one process, split into the time spent in the implementation (inside
  the connection's `send`) and in the harness (planning, re-chunking, judging against the
  reference, reports).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.engine.runner import new_run, run_implementation
from conformance.reports import write_reports
from conformance.transport.connections import Connection, Reply, Request
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

CMD_REFERENCE = f"cmd:{shlex.quote(sys.executable)} -m conformance.reference"


class Timed:
    """A connection that adds up the time spent inside the implementation."""

    def __init__(self, inner: Connection) -> None:
        self.inner = inner
        self.info = inner.info
        self.seconds = 0.0
        self.requests = 0

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        start = time.perf_counter()
        replies = self.inner.send(requests)
        self.seconds += time.perf_counter() - start
        self.requests += len(requests)
        return replies

    def close(self) -> None:
        self.inner.close()


def command_line(impl: str) -> float:
    with tempfile.TemporaryDirectory() as reports:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--impl", impl, "--report-dir", reports],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - start


def split(impl: str) -> None:
    cases = load_corpus([bundled_cases_dir()]).cases
    connection = Timed(connect(parse_impl(impl)))
    start = time.perf_counter()
    run = run_implementation(connection, cases)
    judged = time.perf_counter()
    with tempfile.TemporaryDirectory() as reports:
        write_reports(new_run([run], {}), Path(reports))
    done = time.perf_counter()
    connection.close()
    harness = (judged - start) - connection.seconds
    print(
        f"  {impl[:40]:<40} {len(run.results):5} results, {connection.requests:6} requests: "
        f"implementation {connection.seconds:.2f} s, harness {harness:.2f} s "
        f"({harness / connection.seconds:.1f} x), reports {done - judged:.2f} s"
    )


def main() -> None:
    cases = load_corpus([bundled_cases_dir()]).cases
    print(f"{len(cases)} cases x 4 checks\n")
    print("full default run, `conformance run` with reports (wall clock, best of 3):")
    for impl in ("reference", CMD_REFERENCE):
        best = min(command_line(impl) for _ in range(3))
        print(f"  {impl[:40]:<40} {best:.2f} s")
    print("\nwhere the time goes (one process):")
    for impl in ("reference", CMD_REFERENCE):
        split(impl)


if __name__ == "__main__":
    main()
