"""One implementation's matrix work (the corpus, its fingerprint, the growth check and the
benchmark), in this process or in a worker process.

Most adapters are `python:` implementations: their libraries run in the harness's process,
where threads would share one interpreter lock. `--jobs N` therefore runs each
implementation's whole work in a child process (spawned, so nothing of the parent's state
leaks in), which connects the implementation there exactly as `conformance matrix --jobs 1`
does here: the same code (`run_task`), so the same verdicts and the same kind of figures
(`in process` stays in process). The child sends back, over a pipe, the implementation's
`hello`, each raw result as it is judged, and at the end its fingerprint and measurements.

A worker process outlives its task: `WorkerPool` hands it the next one, preferring a worker
that already ran the same adapter module, so a library is imported once per worker rather
than once per implementation (vLLM's parsers take 13 s to import, and the matrix runs 17 of
them). Implementations then follow one another in a process as they do under `--jobs 1`.

Messages, in order, for each task: ("skipped", reason) or ("failed", message) or ("started",
info, start_seconds); then ("phase", name) and ("result", CaseResult) any number of times;
then ("done", Finish).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
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

    @property
    def module(self) -> str:
        """What a worker keeps imported once it ran the task: a `python:` spec's module (a
        library's adapter), else the spec itself."""
        kind, _, rest = self.spec.partition(":")
        return rest.partition(":")[0] if kind == "python" else self.spec


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


def serve(cases: Sequence[CaseIdentity], tasks: Pipe, pipe: Pipe) -> None:
    """The worker process: each task it is given, done, its messages sent down the pipe,
    until the parent closes `tasks` or asks it to stop (SIGTERM)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda number, frame: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    while not stop.is_set():
        try:
            task: Task = tasks.recv()
        except (EOFError, OSError):
            break
        _serve_task(task, cases, pipe, stop)
    # Every task closed its implementation; what is left is the libraries' own teardown of
    # their modules (3.5 s for vLLM's), which nothing needs.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _serve_task(
    task: Task, cases: Sequence[CaseIdentity], pipe: Pipe, stop: threading.Event
) -> None:
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


#: The messages after which a worker waits for its next task.
_LAST = frozenset({"skipped", "failed", "done"})


class Worker:
    """A worker process; `begin` gives it a task, and `receive` yields the task's messages
    as they come."""

    def __init__(self, cases: Sequence[CaseIdentity]) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe(duplex=False)
        tasks, self._tasks = context.Pipe(duplex=False)
        self._process = context.Process(
            target=serve, args=(cases, tasks, child), name="matrix-worker", daemon=True
        )
        self._process.start()
        child.close()
        tasks.close()
        #: The adapter modules of the tasks it ran (their libraries are imported).
        self.modules: set[str] = set()
        #: Whether it is between tasks: the last one sent its last message.
        self.idle = True

    def begin(self, task: Task) -> None:
        self.idle = False
        self.modules.add(task.module)
        self._tasks.send(task)

    def receive(self, stopping: Callable[[], bool], wait: float = 0.2) -> Message | None:
        """The next message; None when the worker ended without sending one, or when
        `stopping` says so (then the worker is stopped)."""
        while not stopping():
            if self._pipe.poll(wait):
                try:
                    message: Message = self._pipe.recv()
                except (EOFError, OSError):
                    break  # the process ended
                self.idle = message[0] in _LAST
                return message
            if not self._process.is_alive() and not self._pipe.poll():
                break
        else:
            self.close()
            return None
        self._process.join(GRACE)  # so that its exit status is known
        return None

    def close(self) -> None:
        """End the process: between tasks it ends when its task pipe closes; in a task it is
        asked to stop (SIGTERM: it closes its implementation), and killed after GRACE s."""
        process = self._process
        self._tasks.close()
        if process.is_alive() and not self.idle:
            process.terminate()
        process.join(GRACE)
        if process.is_alive():
            process.kill()
            process.join()
        self.idle = False
        self._pipe.close()

    @property
    def exitcode(self) -> int | None:
        return self._process.exitcode


class WorkerPool:
    """The matrix's worker processes, each given one task at a time and kept for the next
    while it is well (it ended its last task with that task's last message)."""

    def __init__(self, cases: Sequence[CaseIdentity]) -> None:
        self._cases = cases
        self._idle: list[Worker] = []
        self._lock = threading.Lock()

    def begin(self, task: Task) -> Worker:
        """A worker doing `task`: an idle one that ran its module before, else any idle
        one, else a new one. An idle one whose process ended while it waited is closed."""
        with self._lock:
            for dead in [worker for worker in self._idle if worker.exitcode is not None]:
                self._idle.remove(dead)
                dead.close()
            worker = min(self._idle, key=lambda w: task.module not in w.modules, default=None)
            if worker is not None:
                self._idle.remove(worker)
        if worker is None:
            worker = Worker(self._cases)
        worker.begin(task)
        return worker

    def end(self, worker: Worker) -> None:
        """`worker` is done with its task: kept when it finished it, else stopped."""
        if worker.idle and worker.exitcode is None:
            with self._lock:
                self._idle.append(worker)
        else:
            worker.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()
