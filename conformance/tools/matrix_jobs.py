"""The matrix's session jobs: each implementation served from a stored entry (the cache, or
the results directories being merged), run here, or run in a worker process.

Whichever way, the job hands the session the same things: the implementation's `hello`,
its results with its expectation file applied (the entries keep raw verdicts), and its
fingerprint and measurements in its `Entry`. A job that ran stores what it made (the cache,
a results directory); one whose library is not installed stores why, and is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.adapters.adapter import Adapter
from conformance.corpus.expectations import ExpectedFailures
from conformance.errors import ImplementationStartError
from conformance.model.cases import CaseIdentity
from conformance.model.results import CaseResult, ImplementationInfo, ImplementationRun
from conformance.session.orchestrator import Context, Job, Opened, Skipped
from conformance.tools.bench import BenchResult
from conformance.tools.bench_figures import BenchSettings
from conformance.tools.fingerprint import Fingerprint
from conformance.tools.matrix_store import (
    Measured,
    Stored,
    bench_key,
    cache_path,
    results_path,
    write,
)
from conformance.tools.matrix_worker import (
    Finish,
    Message,
    Task,
    Unavailable,
    Worker,
    WorkerPool,
    open_task,
    run_task,
)
from conformance.transport.connections import Connection
from conformance.transport.spec import parse_impl


@dataclass(slots=True)
class Entry:
    """One implementation of the matrix."""

    run: ImplementationRun
    adapter: Adapter | None = None
    fingerprint: Fingerprint | None = None
    bench: BenchResult | None = None
    #: The growth check, measured before the benchmark (which it can rule out).
    growth: CaseResult | None = None


@dataclass(slots=True)
class Plan:
    """What the matrix's jobs share."""

    cases: Sequence[CaseIdentity]
    timeout: float
    bench: BenchSettings | None
    #: The worker processes that run the implementations (None: this process runs them).
    workers: WorkerPool | None
    cache_dir: Path | None
    results_out: Path | None
    #: Each job's `Entry`, by label, filled as the jobs run.
    entries: dict[str, Entry]
    #: Told of each implementation's phase (`corpus`, `fingerprint`, ...; `cached`, `done`).
    phase: Callable[[str, str], None] = lambda label, name: None
    #: Adapters found unavailable while running, label -> reason.
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Served:
    """An implementation standing for itself from a stored entry."""

    info: ImplementationInfo
    start_seconds: float | None

    def close(self) -> None:
        pass


@dataclass(slots=True)
class Live:
    """An implementation running here or in a worker process."""

    info: ImplementationInfo
    start_seconds: float
    connection: Connection | None = None
    worker: Worker | None = None
    workers: WorkerPool | None = None

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        if self.worker is not None and self.workers is not None:
            self.workers.end(self.worker)


def complete(stored: Stored | None, bench: BenchSettings | None) -> bool:
    """Whether `stored` has everything this matrix shows (the measurements asked for)."""
    if stored is None:
        return False
    if stored.skipped is not None:
        return True
    return stored.info is not None and (bench is None or bench_key(bench) in stored.measured)


def job(
    plan: Plan,
    stored: Stored,
    adapter: Adapter | None,
    expected: ExpectedFailures | None,
    total: int,
    recount: Callable[[Any], int],
) -> Job[Any]:
    """The job of one implementation. `stored` is its entry so far: complete (served), with
    the corpus but not the measurements asked for, or only its key (`info` None)."""
    label = stored.label
    spec = parse_impl(f"{label}={stored.material['implementation']['spec']}")
    measured = bench_key(plan.bench)
    served = complete(stored, plan.bench)
    task = Task(
        label,
        spec.spec,
        adapter,
        plan.timeout,
        plan.bench,
        corpus=stored.info is None,
        measure=plan.bench is not None and measured not in stored.measured,
    )

    def emit(context: Context, result: CaseResult) -> None:
        context.emit(result if expected is None else expected.apply(result))

    def opened() -> Opened:
        if served:
            assert stored.info is not None
            plan.phase(label, "cached")
            return Served(stored.info, stored.start_seconds)
        try:
            live = _start(plan, task)
        except Unavailable as reason:
            stored.skipped = str(reason)
            _keep(plan, stored)
            plan.skipped[label] = str(reason)
            plan.phase(label, "skipped")
            raise Skipped(str(reason)) from None
        if stored.info is not None:  # measurements only: the rest is stored
            live.info, live.start_seconds = stored.info, stored.start_seconds or 0.0
        return live

    def work(handle: Opened, context: Context) -> None:
        entry = Entry(ImplementationRun(handle.info), adapter)
        plan.entries[label] = entry
        for result in stored.results:
            emit(context, result)
        if stored.info is not None:
            entry.fingerprint = stored.fingerprint
        if isinstance(handle, Live):
            finish = _drive(plan, task, handle, context, stored, emit)
            if finish is None or context.stopping():
                return
            stored.info = stored.info or handle.info
            stored.start_seconds = stored.start_seconds or handle.start_seconds
            if task.corpus:
                stored.fingerprint = finish.fingerprint
            if task.measure:
                stored.measured[measured] = Measured(finish.growth, finish.bench)
            stored.seconds.update(finish.seconds)
            entry.fingerprint = stored.fingerprint
            _keep(plan, stored)
        elif plan.results_out is not None:
            write(results_path(plan.results_out, label), stored)
        if plan.bench is not None:
            entry.growth = stored.measured[measured].growth
            entry.bench = stored.measured[measured].bench
        plan.phase(label, "done")

    # Served jobs cost next to nothing; a client driven through HTTP takes 10 to 100 times
    # as long as a parser in process (Adapter.over_http).
    cost = 0.0 if served else 10.0 if adapter is not None and adapter.over_http else 1.0
    return Job(spec, total, work, opened, recount, cost)


def _start(plan: Plan, task: Task) -> Live:
    if plan.workers is None:
        connection, seconds = open_task(task)
        return Live(connection.info, seconds, connection=connection)
    worker = plan.workers.begin(task)
    message = worker.receive(lambda: False)
    if message is not None and message[0] == "started":
        return Live(message[1], message[2], worker=worker, workers=plan.workers)
    plan.workers.end(worker)
    if message is not None and message[0] == "skipped":
        raise Unavailable(message[1])
    text = message[1] if message is not None else f"its worker ended ({worker.exitcode})"
    raise WorkerStartError(task.label, text)


def _drive(
    plan: Plan,
    task: Task,
    live: Live,
    context: Context,
    stored: Stored,
    emit: Callable[[Context, CaseResult], None],
) -> Finish | None:
    """Run the task, here or in the worker; each raw result kept and emitted."""
    label = task.label

    def receive(message: Message) -> None:
        if message[0] == "phase":
            plan.phase(label, message[1])
        elif message[0] == "result":
            stored.results.append(message[1])
            emit(context, message[1])

    if live.connection is not None:
        return run_task(task, live.connection, plan.cases, receive, context.stopping)
    assert live.worker is not None
    while (message := live.worker.receive(context.stopping)) is not None:
        if message[0] == "done":
            finish: Finish = message[1]
            return finish
        receive(message)
    if not context.stopping():
        context.run.failure = (
            f"implementation {label!r}: its matrix worker ended mid-run "
            f"(exit status {live.worker.exitcode})"
        )
    return None


def _keep(plan: Plan, stored: Stored) -> None:
    if plan.cache_dir is not None:
        write(cache_path(plan.cache_dir, stored.label, stored.key), stored)
    if plan.results_out is not None:
        write(results_path(plan.results_out, stored.label), stored)


class WorkerStartError(ImplementationStartError):
    """A worker's implementation could not start: its message as the worker wrote it (exit
    status 2)."""

    def __init__(self, label: str, text: str) -> None:
        self.label = label
        self.stderr = None
        Exception.__init__(self, text)
