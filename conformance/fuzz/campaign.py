"""Fuzzing campaigns beyond one process: the properties on several cores, as plain Hypothesis
tests for HypoFuzz and Atheris, and example databases shared between machines.

Every route ends in the same place: a counterexample becomes a ready-to-commit case file
(`conformance.fuzz.found`). docs/fuzzing.md has the commands.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from types import FrameType
from typing import Any

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from conformance.contracts import property_owner
from conformance.contracts._fuzzing import PropertyFailure
from conformance.errors import UsageError
from conformance.fuzz.found import record_found
from conformance.fuzz.properties import fuzz_property
from conformance.fuzz.signatures import distinct, size
from conformance.fuzz.target import Target
from conformance.model.options import Options
from conformance.model.results import FuzzResult, ImplementationInfo, Verdict
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import ImplementationSpec, parse_impl

#: What `hypothesis fuzz` and the Atheris entry point read, as `--impl` and `--options` would.
IMPL_VARIABLE = "CONFORMANCE_IMPL"
OPTIONS_VARIABLE = "CONFORMANCE_OPTIONS"
#: Where those two write the smallest counterexample of each property as a case file.
FOUND_VARIABLE = "CONFORMANCE_FOUND_DIR"


def open_database(location: str | None) -> ExampleDatabase | None:
    """The example database at `location`: a directory, `redis://host:port/db` (shared by
    several machines; needs the `redis` extra), or None / `none` for no database."""
    if location is None or location.lower() == "none":
        return None
    if location.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise UsageError(
                f"--database {location}: a Redis database needs the redis client: "
                "pip install 'reasoning-conformance[redis]'"
            ) from None
        return RedisExampleDatabase(redis.Redis.from_url(location))
    return DirectoryBasedExampleDatabase(location)


# --- several processes --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FuzzJob:
    """One property against one implementation, in a worker process of its own."""

    spec: ImplementationSpec
    prop: str
    max_examples: int
    seed: int
    database: str | None
    #: Its share of the time budget, or None to run `max_examples`.
    seconds: float | None
    timeout: float


#: In a worker: the connection of the job it runs, for `_exit_on_signal` to close.
_open: list[Connection] = []


def _run_job(job: FuzzJob) -> tuple[FuzzJob, list[FuzzResult]]:
    connection = connect(job.spec, timeout=job.timeout)
    _open.append(connection)
    try:
        target = Target(connection, Options.from_mapping(connection.info.options))
        deadline = time.monotonic() + job.seconds if job.seconds is not None else None
        results = fuzz_property(
            job.prop,
            target,
            max_examples=job.max_examples,
            seed=job.seed,
            database=open_database(job.database),
            key=f"{job.spec.label}/{job.prop}".encode(),
            deadline=deadline,
        )
    finally:
        _open.remove(connection)
        connection.close()
    return job, results


def _exit_on_signal(parent: int) -> None:
    """In a worker: SIGTERM (the parent ending the pool) and SIGINT (Ctrl-C reaches the
    whole process group) close the job's connection, so no implementation process outlives
    the worker, and exit at once. Not by an exception: Hypothesis, in the middle of a
    property, may take one for the property's failure and go on shrinking."""

    def leave(signum: int, frame: FrameType | None) -> None:
        for connection in _open:
            connection.close()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)
    # A parent killed outright (SIGKILL) sends no signal: a worker that finds itself
    # orphaned leaves too, rather than fuzzing on at full speed for nobody. (The parent's
    # PID comes from the parent: it may have died while this worker was starting.)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        leave(signal.SIGTERM, None)

    threading.Thread(target=watch, name="conformance-orphan-watch", daemon=True).start()


def run_jobs(jobs: list[FuzzJob], workers: int) -> Iterator[tuple[FuzzJob, list[FuzzResult]]]:
    """Run the jobs on `workers` processes, yielding each as it finishes, so that what
    finished is kept when the caller stops early (an interrupt, the budget): the workers
    are then ended. Processes are spawned, not forked: a fork would copy the parent's pipes
    to its implementations."""
    pool = get_context("spawn").Pool(workers, initializer=_exit_on_signal, initargs=(os.getpid(),))
    try:
        yield from pool.imap_unordered(_run_job, jobs)
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    pool.join()


def job_seconds(budget: float | None, jobs: int, workers: int) -> float | None:
    """Each job's share of a time budget: the workers run `workers` jobs at once."""
    if budget is None:
        return None
    return min(budget, budget * workers / max(jobs, 1))


# --- plain Hypothesis tests: HypoFuzz, Atheris ------------------------------------------


def property_test(
    name: str, target: Target, *, found: Callable[[PropertyFailure], None] | None = None
) -> Callable[..., None]:
    """The property called `name` as an ordinary `@given` test against `target`. It keeps
    Hypothesis' own settings (database included), so HypoFuzz and `fuzz_one_input` drive it
    as they drive any Hypothesis test; each bug signature fails with an exception of its own
    (so Hypothesis reports each distinct bug), and `found` sees each failure before it is
    raised."""
    owner = property_owner(name)
    check = owner.fuzz_check(name)

    @settings(deadline=None, suppress_health_check=list(HealthCheck))
    @hypothesis.given(value=owner.fuzz_inputs(target.options), data=st.data())
    def test(value: Any, data: st.DataObject) -> None:
        try:
            check(target, value, data)
            return
        except PropertyFailure as failure:
            caught = distinct(failure, target.options, name)
        if found is not None:
            found(caught)
        raise caught

    test.__name__ = test.__qualname__ = f"test_{name}"
    test.__doc__ = check.__doc__
    return test


@dataclass(slots=True)
class SmallestFound:
    """Keeps the smallest counterexample of each bug signature as a case file: shrinking
    ends on the minimal one, and a later, larger failure does not overwrite it. One for all
    the properties of an implementation, so a bug several of them find is written once."""

    spec: ImplementationSpec
    options: Options
    directory: Path
    #: Per signature: the size of the kept counterexample and its file.
    kept: dict[str, tuple[tuple[int, int, int], Path]] = field(default_factory=dict)

    def __call__(self, failure: PropertyFailure, prop: str) -> None:
        example = failure.example.to_json()
        bug = failure.signature or "?"
        old = self.kept.get(bug)
        if old is not None and size(example) >= old[0]:
            return
        if old is not None:
            old[1].unlink(missing_ok=True)
        result = FuzzResult(prop, Verdict.FAIL, 1, 0.0, 0, failure.example.reason, example, bug=bug)
        written = record_found(result, self.spec, self.options, set(), self.directory)
        assert written.case_file is not None
        self.kept[bug] = (size(example), Path(written.case_file))


@dataclass(frozen=True, slots=True)
class EnvironmentTarget:
    target: Target
    info: ImplementationInfo
    spec: ImplementationSpec
    found_dir: Path


def target_from_environment() -> EnvironmentTarget:
    """The implementation `CONFORMANCE_IMPL` names (`--impl` syntax), under the options of
    `CONFORMANCE_OPTIONS` (a JSON object), for the plain-test entry points."""
    text = os.environ.get(IMPL_VARIABLE)
    if not text:
        raise UsageError(f"set {IMPL_VARIABLE} to the implementation to fuzz (as for --impl)")
    options = json.loads(os.environ.get(OPTIONS_VARIABLE) or "{}")
    spec = parse_impl(text, options or None)
    connection = connect(spec)
    target = Target(connection, Options.from_mapping(connection.info.options))
    found_dir = Path(os.environ.get(FOUND_VARIABLE, "reports/fuzz/found"))
    return EnvironmentTarget(target, connection.info, spec, found_dir)


def environment_tests(names: list[str]) -> dict[str, Callable[..., None]]:
    """One plain test per property against the environment's implementation, each writing
    its smallest counterexample as a case file."""
    env = target_from_environment()
    record = SmallestFound(env.spec, env.target.options, env.found_dir)
    return {
        f"test_{name}": property_test(name, env.target, found=functools.partial(record, prop=name))
        for name in names
    }
