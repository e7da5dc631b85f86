"""One implementation's matrix work (the corpus, its fingerprint, the growth check and the
benchmark), in this process or in a worker process of its own.

Most adapters are `python:` implementations: their libraries run in the harness's process,
where threads would share one interpreter lock. `--jobs N` therefore runs each
implementation's whole work in a child process (spawned, so nothing of the parent's state
leaks in), which connects the implementation there exactly as `conformance matrix --jobs 1`
does here: the same code (`run_task`), so the same verdicts and the same kind of figures
(`in process` stays in process). The child sends back, over a pipe, the implementation's
`hello`, each raw result as it is judged, and at the end its fingerprint and measurements.

Messages, in order: ("skipped", reason) or ("failed", message) or ("started", info,
start_seconds); then ("phase", name) and ("result", CaseResult) any number of times; then
("done", Finish).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection as Pipe
from typing import Any

from conformance.adapters.adapter import Adapter
from conformance.engine.growth import growth_result
from conformance.engine.runner import run_implementation
from conformance.errors import ImplementationStartError
from conformance.model.cases import CaseIdentity
from conformance.model.results import CaseResult, Verdict
from conformance.tools.bench import bench
from conformance.tools.bench_figures import BenchResult, BenchSettings
from conformance.tools.fingerprint import Fingerprint, fingerprint
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

Message = tuple[Any, ...]
Send = Callable[[Message], None]
#: Seconds a worker has to close its implementation after being asked to stop.
GRACE = 3.0


@dataclass(frozen=True, slots=True)
class Task:
    label: str
    spec: str
    adapter: Adapter | None
    timeout: float
    bench: BenchSettings | None
    #: Run the corpus and the fingerprint (else only what `measure` asks).
    corpus: bool = True
    #: Run the growth check and, when it passes, the benchmark (needs `bench`).
    measure: bool = True


@dataclass(slots=True)
class Finish:
    fingerprint: Fingerprint | None = None
    growth: CaseResult | None = None
    bench: BenchResult | None = None
    #: Seconds per part: corpus, fingerprint, growth, bench.
    seconds: dict[str, float] = field(default_factory=dict)


class Unavailable(Exception):
    """The adapter's library is not installed here: the adapter is skipped."""


def open_task(task: Task) -> tuple[Connection, float]:
    """The started implementation and the seconds its start took."""
    if task.adapter is not None:
        reason = task.adapter.unavailable()
        if reason is not None:
            raise Unavailable(reason)
    launched = time.perf_counter()
    connection = connect(parse_impl(f"{task.label}={task.spec}"), timeout=task.timeout)
    return connection, time.perf_counter() - launched


def run_task(
    task: Task,
    connection: Connection,
    cases: Sequence[CaseIdentity],
    send: Send,
    stopping: Callable[[], bool],
) -> Finish:
    """The corpus (each raw result sent as it is judged), the fingerprint, the growth check
    and the benchmark, as the task asks."""
    finish = Finish()
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        finish.seconds[name] = now - clock
        clock = now

    if task.corpus:
        send(("phase", "corpus"))
        run_implementation(
            connection, cases, on_result=lambda result: send(("result", result)), stop=stopping
        )
        lap("corpus")
        if stopping():
            return finish
        send(("phase", "fingerprint"))
        finish.fingerprint = fingerprint(connection)
        lap("fingerprint")
    if task.measure and task.bench is not None and not stopping():
        send(("phase", "growth"))
        finish.growth = growth_result(connection, stop=stopping)
        lap("growth")
        if finish.growth.verdict is Verdict.PASS and not stopping():
            send(("phase", "bench"))
            finish.bench = bench(connection, task.bench)
            lap("bench")
    return finish


def serve(task: Task, cases: Sequence[CaseIdentity], pipe: Pipe) -> None:
    """The worker process: do the task, sending each message down the pipe."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda number, frame: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        connection, seconds = open_task(task)
    except Unavailable as reason:
        pipe.send(("skipped", str(reason)))
        return
    except ImplementationStartError as error:
        pipe.send(("failed", str(error)))
        return
    try:
        pipe.send(("started", connection.info, seconds))
        finish = run_task(task, connection, cases, pipe.send, stop.is_set)
    finally:
        connection.close()
    pipe.send(("done", finish))


class Worker:
    """A worker process doing one task; `receive` yields its messages as they come."""

    def __init__(self, task: Task, cases: Sequence[CaseIdentity]) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe(duplex=False)
        self._process = context.Process(
            target=serve, args=(task, cases, child), name=f"matrix-{task.label}", daemon=True
        )
        self._process.start()
        child.close()

    def receive(self, stopping: Callable[[], bool], wait: float = 0.2) -> Message | None:
        """The next message; None when the worker ended without sending one, or when
        `stopping` says so (then the worker is stopped)."""
        while not stopping():
            if self._pipe.poll(wait):
                try:
                    message: Message = self._pipe.recv()
                except (EOFError, OSError):
                    return None
                return message
            if not self._process.is_alive() and not self._pipe.poll():
                return None
        self.close()
        return None

    def close(self) -> None:
        process = self._process
        if process.is_alive():
            process.terminate()  # SIGTERM: the worker stops and closes its implementation
            process.join(GRACE)
        if process.is_alive():
            process.kill()
        process.join()
        self._pipe.close()

    @property
    def exitcode(self) -> int | None:
        return self._process.exitcode
