"""The matrix's worker processes outlive their tasks: the pool hands a worker its next task,
preferring one that ran the same adapter module (its library is imported), and never hands
one whose last task did not end well. A worker that dies mid-task costs that implementation
its run, not the others theirs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

import conformance.tools.matrix_worker as worker_module
from conformance.adapters.adapter import Adapter
from conformance.tools.matrix import run_matrix
from conformance.tools.matrix_worker import Task, WorkerPool

from .test_matrix_scale import (
    LEAKS,
    NO_FLUSH,
    comparable,
    quiet,
    settings,
    use_adapters,
    without_clocks,
)

EXITS = Adapter(
    "exits",
    "python:tests.fakes.broken_impls:ExitsItsProcess",
    "a library that ends its process mid-run",
    "nothing to install",
    module="tests.fakes.broken_impls",
)


def task(spec: str) -> Task:
    return Task(spec.rpartition(":")[2], spec, None, 5.0, None)


def begin(pool: WorkerPool, spec: str) -> FakeWorker:
    return cast(FakeWorker, pool.begin(task(spec)))


@dataclass
class FakeWorker:
    """A worker without a process: what the pool asks of it, recorded."""

    cases: Any
    modules: set[str] = field(default_factory=set)
    idle: bool = True
    exitcode: int | None = None
    tasks: list[str] = field(default_factory=list)
    closed: bool = False

    def begin(self, task: Task) -> None:
        self.idle = False
        self.modules.add(task.module)
        self.tasks.append(task.label)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> WorkerPool:
    """A pool whose workers are FakeWorkers."""
    monkeypatch.setattr(worker_module, "Worker", FakeWorker)
    return WorkerPool(())


def test_a_task_goes_to_the_idle_worker_that_ran_its_module(pool: WorkerPool) -> None:
    vllm = begin(pool, "python:conformance.adapters.vllm:QWEN3")
    sglang = begin(pool, "python:conformance.adapters.sglang:QWEN3")
    assert vllm is not sglang
    for each in (vllm, sglang):
        each.idle = True  # it sent its task's last message
        pool.end(cast(Any, each))
    assert begin(pool, "python:conformance.adapters.sglang:KIMI") is sglang
    assert begin(pool, "python:conformance.adapters.vllm:GLM45") is vllm
    # None idle: a new one.
    assert begin(pool, "reference") not in (vllm, sglang)


def test_a_worker_that_did_not_end_its_task_is_closed_not_kept(pool: WorkerPool) -> None:
    stopped = begin(pool, "python:a:A")
    pool.end(cast(Any, stopped))  # mid-task: stopped, or its process ended
    assert stopped.closed
    dead = begin(pool, "python:a:A")
    assert dead is not stopped
    dead.idle, dead.exitcode = True, 3
    pool.end(cast(Any, dead))
    assert dead.closed
    kept = begin(pool, "python:a:A")
    assert kept is not dead
    kept.idle = True
    pool.end(cast(Any, kept))
    pool.close()
    assert kept.closed


def test_an_idle_worker_whose_process_ended_gets_no_task(pool: WorkerPool) -> None:
    ended = begin(pool, "python:a:A")
    ended.idle = True
    pool.end(cast(Any, ended))
    ended.exitcode = -9  # killed while it waited
    assert begin(pool, "python:a:A") is not ended
    assert ended.closed


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    use_adapters(monkeypatch, (EXITS, NO_FLUSH, LEAKS))
    yield


@pytest.mark.slow
def test_workers_serve_several_tasks_and_a_dead_one_is_replaced(
    registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = run_matrix(
        settings(tmp_path, cache_dir=None, jobs=1, only=["no-flush", "leaks"]), echo=quiet
    )
    spawned: list[object] = []

    class Counted(worker_module.Worker):
        def __init__(self, cases: Any) -> None:
            spawned.append(self)
            super().__init__(cases)

    monkeypatch.setattr(worker_module, "Worker", Counted)
    lines: list[str] = []
    parallel = run_matrix(
        settings(tmp_path, cache_dir=None, jobs=2),
        echo=lambda text="", **k: lines.append(str(text)),
    )
    labels = [entry.run.info.label for entry in parallel.entries]
    assert labels == ["reference", "exits", "no-flush", "leaks"]
    # Four tasks, two workers at a time, one of which died: three processes.
    assert len(spawned) == 3
    exits = parallel.entries[1].run
    assert exits.failure is not None and "exit status 3" in exits.failure
    assert exits.results and not exits.ok
    # The implementations after it, in the worker that replaced it or in the one that went on,
    # judged as they are one after the other in one process.
    expected = without_clocks(comparable(serial)["run"])["implementations"]
    got = without_clocks(comparable(parallel)["run"])["implementations"]
    assert [got[0], *got[2:]] == expected
