"""The one session orchestrator: connect each implementation, let a job run on it, emit
events, and own every run-level concern in one place.

`run`, `fuzz`, `matrix` and `replay` are configurations of it: each supplies jobs (how to
connect, what to do with the connection, how many results it will give) and handlers (the
terminal summary, progress, report writers). The session decides, once for all of them:

- start failures become the implementation's failed run, not an exception;
- SIGINT and SIGTERM stop sending, close the connections (a `cmd:` implementation's process
  group is killed), keep every result judged so far and mark the run interrupted (exit 130 or
  143); `budget` seconds do the same with exit status 1, and so does the `maxfail`-th
  failing result;
- an implementation that judged less than `min_judged` percent of the checks that applied
  to it, or nothing at all, fails the run (engine/coverage.py, the one definition);
- the exit status: 130/143 interrupted, 2 a usage or case-file problem or an implementation
  that could not start, 1 a failure, an unjudged implementation or an exhausted budget, else 0.

Jobs run one after the other, or `jobs` at a time on threads (the matrix's wait there on
worker processes), the costliest first so that no long job runs alone at the end; the runs
keep the jobs' order. Handlers get one event at a time, each only the events it listens to.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import FrameType
from typing import Any, Generic, Protocol, TypeVar

from conformance.engine.coverage import DEFAULT_MIN_JUDGED, unjudged_problem
from conformance.engine.runner import new_run
from conformance.errors import ImplementationStartError
from conformance.model.results import (
    CaseResult,
    FuzzResult,
    ImplementationInfo,
    ImplementationRun,
)
from conformance.session.events import (
    Finished,
    Handler,
    ImplementationStarted,
    Progress,
    ResultEvent,
    Started,
    listeners,
)
from conformance.transport.spec import ImplementationSpec

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: The shell's convention: 128 + the signal number.
EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Stop(KeyboardInterrupt):
    """Raised in the main thread to end a session early (a signal, the budget); a
    KeyboardInterrupt, which what lets Ctrl-C through (Hypothesis, request loops) lets by."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class Skipped(Exception):
    """From a job's `connect`: the job does not apply here (its library is not installed)."""


class Opened(Protocol):
    """What a job connects to: a `Connection`, or what stands for the implementation (a
    worker process, a cache entry); `start_seconds` if it has it, else `connect` is timed."""

    @property
    def info(self) -> ImplementationInfo: ...

    def close(self) -> None: ...


C = TypeVar("C", bound=Opened)


@dataclass(slots=True)
class Job(Generic[C]):
    """One implementation's part of a session."""

    spec: ImplementationSpec
    #: How many results (checks, or fuzzing properties) the work will give.
    total: int
    #: Runs on the live connection and hands each result to `context.emit`.
    work: Callable[[C, Context], None]
    connect: Callable[[], C]
    #: The total once connected, where the implementation's declared options choose cases.
    recount: Callable[[C], int] | None = None
    #: How long the work should take, relative to the other jobs (the module docstring).
    cost: float = 1.0


@dataclass(slots=True)
class SessionSettings:
    #: Recorded in the run as what was selected.
    selection: Mapping[str, Any] = field(default_factory=dict)
    #: Seconds for the whole session; what is not run by then is reported as not run.
    budget: float | None = None
    #: The share of its applicable checks, in percent, each implementation must judge.
    min_judged: float = DEFAULT_MIN_JUDGED
    #: Stop after this many failing results over the whole session (`--maxfail`); what is
    #: not run by then is reported as not run.
    maxfail: int | None = None
    #: Problems found before running (case files that failed to load): exit status 2.
    problems: Sequence[str] = ()
    #: Handle SIGINT and SIGTERM (only possible in the main thread).
    signals: bool = True
    jobs: int = 1  # run at once, each on a thread of its own


class Context:
    """What a job sees of its session: where results go, and whether to stop."""

    def __init__(self, session: Session, run: ImplementationRun, total: int) -> None:
        self._session = session
        self.run = run
        self.total = total
        self.done = 0

    @property
    def deadline(self) -> float | None:
        """`time.monotonic()` by which the session's budget runs out, if it has one."""
        return self._session.deadline

    def stopping(self) -> bool:
        return self._session.stopping()

    def expect(self, more: int) -> None:
        """`more` results than the job planned (a fuzzing property that found several
        bugs reports each), so that progress never passes its total."""
        self.total += more
        self._session.total += more

    def emit(self, result: CaseResult | FuzzResult) -> None:
        if self.stopping():
            # Judged after the stop began: its reply may be the interruption's own doing.
            return
        if isinstance(result, FuzzResult):
            self.run.fuzz.append(result)
        else:
            self.run.results.append(result)
        self.done += 1
        self._session.count(self, result)


class Session:
    def __init__(
        self,
        jobs: Sequence[Job[Any]],
        settings: SessionSettings,
        handlers: Sequence[Handler],
        *,
        echo: Callable[..., None] = print,
    ) -> None:
        self.jobs = list(jobs)
        self.settings = settings
        self.handlers = list(handlers)
        self.echo = echo
        self.total = sum(job.total for job in self.jobs)
        self.done = 0
        #: Failing results so far (not `Verdict.ok`: FAIL, ERROR, TIMEOUT, XPASS).
        self.failures = 0
        self.deadline: float | None = None
        self.stop: Stop | None = None
        self._armed = False
        #: Held while counting and emitting, so handlers see one event at a time.
        self._lock = threading.RLock()
        self._listeners = listeners(self.handlers)

    # events

    def _emit(self, name: str, event: Any) -> None:
        for listener in self._listeners[name]:
            listener(event)

    def count(self, context: Context, result: CaseResult | FuzzResult) -> None:
        with self._lock:
            self._count(context, result)

    def _count(self, context: Context, result: CaseResult | FuzzResult) -> None:
        self.done += 1
        label = context.run.info.label
        self._emit("result", ResultEvent(label, result))
        progress = Progress(label, context.done, context.total, self.done, self.total)
        self._emit("progress", progress)
        maxfail = self.settings.maxfail
        if maxfail is not None and not result.verdict.ok:
            self.failures += 1
            if self.failures >= maxfail and self.stop is None:
                self.stop = Stop(_maxfail_reason(maxfail), EXIT_FAILED)

    # stopping

    def stopping(self) -> bool:
        if self.stop is None and self.deadline is not None and time.monotonic() >= self.deadline:
            self.stop = Stop(_budget_reason(self.settings.budget), EXIT_FAILED)
        return self.stop is not None

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        if number == signal.SIGALRM:
            stop = Stop(_budget_reason(self.settings.budget), EXIT_FAILED)
        else:
            stop = Stop(f"interrupted by {name}", EXIT_SIGNAL[signal.Signals(number)])
        if self.stop is None:
            self.stop = stop
        if self._armed:
            # Raised once: cleaning up (closing connections, writing reports) must not be cut.
            self._armed = False
            raise self.stop

    @contextmanager
    def _stoppable(self) -> Iterator[None]:
        if self.settings.budget is not None:
            self.deadline = time.monotonic() + self.settings.budget
        if not self.settings.signals or threading.current_thread() is not threading.main_thread():
            yield
            return
        watched = [signal.SIGINT, signal.SIGTERM]
        if self.settings.budget is not None:
            watched.append(signal.SIGALRM)
        previous = {number: signal.signal(number, self._on_signal) for number in watched}
        if self.settings.budget is not None:
            # The alarm ends a request that never returns (a hung `python:` implementation).
            signal.setitimer(signal.ITIMER_REAL, self.settings.budget)
        self._armed = True
        try:
            yield
        finally:
            self._armed = False
            if self.settings.budget is not None:
                signal.setitimer(signal.ITIMER_REAL, 0)
            for number, handler in previous.items():
                signal.signal(number, handler)

    # running

    def run(self) -> Finished:
        started = datetime.now(UTC)
        clock = time.perf_counter()
        self._emit("started", Started([job.spec.label for job in self.jobs], self.total))
        with self._stoppable():
            runs = self._run_jobs()
        run = new_run(runs, dict(self.settings.selection), started=started)
        run.duration = time.perf_counter() - clock
        run.problems = [*self.settings.problems, *self._unjudged(runs)]
        if self.stop is not None:
            run.stopped = self.stop.reason
            self.echo(f"{self.stop.reason}: reporting what finished", err=True)
        finished = Finished(run, self._status(run))
        self._emit("finished", finished)
        return finished

    def _run_jobs(self) -> list[ImplementationRun]:
        if self.settings.jobs <= 1 or len(self.jobs) <= 1:
            return [run for job in self.jobs if (run := self._run_job(job)) is not None]
        runs: dict[int, ImplementationRun | None] = {}
        errors: list[BaseException] = []
        order = iter(sorted(range(len(self.jobs)), key=lambda index: -self.jobs[index].cost))
        taking = threading.Lock()

        def worker() -> None:
            while not errors:
                with taking:
                    index = next(order, None)
                if index is None:
                    return
                try:
                    runs[index] = self._run_job(self.jobs[index])
                except BaseException as error:  # a bug: raised in the main thread below
                    errors.append(error)

        threads = [
            threading.Thread(target=worker, name=f"conformance-job-{number}", daemon=True)
            for number in range(min(self.settings.jobs, len(self.jobs)))
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.1)
        except Stop as stop:
            # The jobs see `stopping()` and end within a request; wait for them.
            if self.stop is None:
                self.stop = stop
            for thread in threads:
                thread.join()
        if errors:
            raise errors[0]
        return [
            run
            for index, job in enumerate(self.jobs)
            if (run := runs.get(index, _not_run(job))) is not None
        ]

    def _run_job(self, job: Job[Any]) -> ImplementationRun | None:
        info = _unknown(job.spec)
        if self.stopping():
            return ImplementationRun(info, not_run=job.total)
        connection: Opened | None = None
        context: Context | None = None
        try:
            launched = time.perf_counter()
            try:
                connection = job.connect()
            except Skipped as reason:
                self.echo(f"skipped {job.spec.label}: {reason}", err=True)
                with self._lock:
                    self.total -= job.total
                return None
            except ImplementationStartError as error:
                self.echo(f"error: {error}", err=True)
                return ImplementationRun(info, failure=str(error))
            seconds = getattr(connection, "start_seconds", None)
            started = ImplementationRun(
                connection.info,
                start_seconds=time.perf_counter() - launched if seconds is None else seconds,
            )
            total = job.total if job.recount is None else job.recount(connection)
            context = Context(self, started, total)
            with self._lock:
                self.total += total - job.total
                self._emit("implementation_started", ImplementationStarted(connection.info, total))
            job.work(connection, context)
        except Stop as stop:
            if self.stop is None:
                self.stop = stop
        finally:
            if connection is not None:
                connection.close()
        if context is None:
            return ImplementationRun(info, not_run=job.total)
        if self.stop is not None:
            context.run.not_run = max(context.total - context.done, 0)
        return context.run

    def _unjudged(self, runs: list[ImplementationRun]) -> list[str]:
        """Mark each implementation that judged too little, and say so as run problems.
        A stopped run already says it is incomplete, and fails for that."""
        if self.stop is not None:
            return []
        for impl in runs:
            impl.unjudged = unjudged_problem(impl, self.settings.min_judged)
        return [impl.unjudged for impl in runs if impl.unjudged is not None]

    def _status(self, run: Any) -> int:
        if self.stop is not None:
            return self.stop.status
        if self.settings.problems or any(impl.failure for impl in run.implementations):
            return EXIT_USAGE
        return EXIT_OK if run.ok else EXIT_FAILED


def _budget_reason(budget: float | None) -> str:
    return f"the time budget of {budget:g} s ran out"


def _maxfail_reason(maxfail: int) -> str:
    failures = "failure" if maxfail == 1 else "failures"
    return f"stopped after {maxfail} {failures} (--maxfail {maxfail})"


def _not_run(job: Job[Any]) -> ImplementationRun:
    return ImplementationRun(_unknown(job.spec), not_run=job.total)


def _unknown(spec: ImplementationSpec) -> ImplementationInfo:
    """What is known of an implementation that never answered hello."""
    return ImplementationInfo(
        spec.label, spec.label, "unknown", "unknown", dict(spec.options or {}), spec.spec
    )


def finish_elsewhere(
    runs: list[ImplementationRun],
    selection: Mapping[str, Any],
    handlers: Sequence[Handler],
    *,
    started: datetime | None = None,
    min_judged: float = DEFAULT_MIN_JUDGED,
) -> Finished:
    """The end of a session whose results were judged elsewhere (the pytest plugin runs each
    check as a test item): the same run-level decisions, and `finished` to the handlers."""
    session = Session([], SessionSettings(selection, min_judged=min_judged), handlers)
    run = new_run(runs, dict(selection), started=started)
    run.problems = session._unjudged(runs)
    finished = Finished(run, session._status(run))
    session._emit("finished", finished)
    return finished
