"""How long the harness takes, and how that compares with the implementation's own time.
Prints figures; asserts nothing.

    python benchmarks/bench_harness.py [--repeat N]

- the full default run (every case, every check, all four reports written) against the
  reference in process and through `cmd:`, as the `conformance run` command a user types:
  wall clock and CPU time (user + system) of the command, best of N;
- the same run inside one process, stage by stage (CPU and wall): loading the corpus,
  planning (building requests), sending (inside the connection's `send`), judging, writing
  the reports;
- the implementation's own time: the reference normalizer answering the identical requests
  directly, with no harness around it, plus its time in the growth check's streams (from
  results.json), and the ratio of the harness's time to it.

The machine is shared and timings are noisy: CPU time is the figure to compare; the load
average is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from conformance.contracts.normalizer._judging import NormalizerJudge
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.engine.runner import new_run, run_implementation
from conformance.model.requests import OpRequest, Reply, Request, StreamRequest, WholeRequest
from conformance.reports import write_reports
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

CMD_REFERENCE = f"cmd:{shlex.quote(sys.executable)} -m conformance.server"


class Clock:
    """Adds up wall and CPU time."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall += time.perf_counter() - self._wall
        self.cpu += time.process_time() - self._cpu

    def __str__(self) -> str:
        return f"{self.cpu:6.3f} {self.wall:6.3f}"


class Timed:
    """A connection that adds up the time spent inside it, and keeps the requests it sent."""

    def __init__(
        self, inner: Connection, keep: list[Request] | None = None, *, itself: bool = True
    ) -> None:
        self.inner = inner
        self.info = inner.info
        #: Whether the runner may know the replies are the reference's own (it then does not
        #: run the reference again to measure holdback).
        self.is_reference = itself and inner.is_reference
        self.clock = Clock()
        self.requests = 0
        self.keep = keep

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        with self.clock:
            replies = self.inner.send(requests)
        self.requests += len(requests)
        if self.keep is not None:
            self.keep += requests
        return replies

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        # A batch at a time: the time inside the connection is what is added up.
        yield from self.send(requests)

    def cpu_seconds(self) -> float | None:
        return self.inner.cpu_seconds()

    def close(self) -> None:
        self.inner.close()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(arguments: list[str]) -> tuple[float, float]:
    """(wall, CPU) of `python -m conformance ARGUMENTS`, the process and its children."""
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run([sys.executable, *arguments], check=True, capture_output=True)
    return time.perf_counter() - start, _children_cpu() - cpu


def best(repeat: int, measure: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    figures = [measure() for _ in range(repeat)]
    return min(w for w, _ in figures), min(c for _, c in figures)


def command_line(impl: str, repeat: int) -> tuple[float, float, float]:
    """(wall, CPU) of the command, best of `repeat`, and the implementation's own time in
    the growth check of the run with the least CPU (from results.json)."""
    figures = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as reports:
            wall, cpu = command(
                ["-m", "conformance", "run", "--impl", impl, "--report-dir", reports]
            )
            results = json.loads((Path(reports) / "results.json").read_text())
        growth = [r["growth"] for r in results["implementations"][0]["results"] if "growth" in r]
        figures.append((wall, cpu, growth[0]["measured_seconds"] if growth else 0.0))
    least = min(figures, key=lambda figure: figure[1])
    return min(w for w, _, _ in figures), least[1], least[2]


def _timed_judging(clock: Clock) -> Callable[[], None]:
    """Time every NormalizerJudge.add and .result (judging); returns the undo."""
    add, result = NormalizerJudge.add, NormalizerJudge.result

    def timed_add(self: Any, *args: Any) -> None:
        with clock:
            add(self, *args)

    def timed_result(self: Any) -> Any:
        with clock:
            return result(self)

    NormalizerJudge.add, NormalizerJudge.result = timed_add, timed_result  # type: ignore[method-assign]

    def undo() -> None:
        NormalizerJudge.add, NormalizerJudge.result = add, result  # type: ignore[method-assign]

    return undo


def own_time(requests: Sequence[Request], factory: Callable[[], Any], repeat: int) -> Clock:
    """The implementation answering `requests` directly: a fresh normalizer from `factory` per
    request, chunks as the mappings it takes, no harness around it (best of `repeat`, by CPU)."""
    work: list[tuple[str, Any]] = []
    for request in requests:
        if isinstance(request, StreamRequest):
            work.append(("feed", [c.to_json() for c in request.chunks]))
        elif isinstance(request, WholeRequest):
            # What a normalizer without `whole()` (the reference) is asked: one chunk.
            work.append(("feed", [{"content": request.content, "reasoning": request.reasoning}]))
        elif isinstance(request, OpRequest):
            work.append((request.method, request.payload))
    fastest: Clock | None = None
    for _ in range(repeat):
        with Clock() as clock:
            for kind, data in work:
                normalizer = factory()
                if kind == "feed":
                    feed = normalizer.feed
                    for chunk in data:
                        feed(chunk)
                    normalizer.finish()
                else:
                    getattr(normalizer, kind)(**data)
        if fastest is None or clock.cpu < fastest.cpu:
            fastest = clock
    assert fastest is not None
    return fastest


LOAD = """
import time
from conformance.corpus.cases import bundled_cases_dir, load_corpus
wall, cpu = time.perf_counter(), time.process_time()
load_corpus([bundled_cases_dir()])
print(time.process_time() - cpu, time.perf_counter() - wall)
"""


def load_time(repeat: int) -> Clock:
    """Loading the corpus in a fresh process (after its imports), best of `repeat` by CPU:
    in this process the decoded cassettes are already cached in memory."""
    fastest = Clock()
    fastest.cpu = float("inf")
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", LOAD], check=True, capture_output=True, text=True
        ).stdout
        cpu, wall = map(float, out.split())
        if cpu < fastest.cpu:
            fastest.cpu, fastest.wall = cpu, wall
    return fastest


def engine_once(
    impl: str, cases: Sequence[Any], sent: list[Request] | None, *, itself: bool = True
) -> dict[str, Any]:
    connection = Timed(connect(parse_impl(impl)), sent, itself=itself)
    judge = Clock()
    undo = _timed_judging(judge)
    try:
        with Clock() as engine:
            run = run_implementation(connection, cases)
    finally:
        undo()
    with Clock() as reports, tempfile.TemporaryDirectory() as directory:
        write_reports(new_run([run], {}), Path(directory))
    connection.close()
    send = connection.clock
    plan = Clock()
    plan.wall = engine.wall - send.wall - judge.wall
    plan.cpu = engine.cpu - send.cpu - judge.cpu
    return {
        "run": run,
        "connection": connection,
        "engine": engine,
        "stages": {"plan": plan, "send": send, "judge": judge, "reports": reports},
    }


def bare_engine(impl: str, cases: Sequence[Any], repeat: int) -> Clock:
    """The engine alone, without the timing of stages (which costs time of its own), best
    of `repeat` by CPU."""
    fastest: Clock | None = None
    for _ in range(repeat):
        connection = connect(parse_impl(impl))
        with Clock() as clock:
            run_implementation(connection, cases)
        connection.close()
        if fastest is None or clock.cpu < fastest.cpu:
            fastest = clock
    assert fastest is not None
    return fastest


def stages(impl: str, repeat: int, command: tuple[float, float] | None = None) -> None:
    """The run stage by stage; for the reference, its ratios to the implementation's own
    time (`command`: the whole command's CPU and its growth check's implementation time)."""
    load = load_time(repeat)
    cases = load_corpus([bundled_cases_dir()]).cases
    bare = bare_engine(impl, cases, repeat)
    sent: list[Request] = []
    runs = [engine_once(impl, cases, sent if not sent else None) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["engine"].cpu + r["stages"]["reports"].cpu)
    engine, reports = best["engine"], best["stages"]["reports"]
    print(
        f"  {impl[:60]}: {len(best['run'].results)} results, "
        f"{best['connection'].requests} requests (best of {repeat} by CPU)"
    )
    print("    stage                CPU s  wall s")
    print(f"    {'load the corpus':<18} {load}")
    for name, clock in best["stages"].items():
        print(f"    {name:<18} {clock}")
    total = load.cpu + engine.cpu + reports.cpu
    print(f"    {'total':<18} {total:6.3f} {load.wall + engine.wall + reports.wall:6.3f}")
    print(
        f"    (timing the stages adds {engine.cpu - bare.cpu:.3f} s CPU: plan, send and judge "
        f"take {bare} without it)"
    )
    overhead = engine.cpu - bare.cpu
    engine = bare
    total = load.cpu + engine.cpu + reports.cpu
    if impl != "reference":
        return
    # The identical requests, each the same object the harness sent.
    own = own_time(sent, best["connection"].inner.factory, repeat)
    harness = engine.cpu - own.cpu
    print(
        f"    implementation's own time on the identical requests (CPU, best of {repeat}): "
        f"{own.cpu:.3f} s"
    )
    print(
        f"    harness time / implementation time: engine (plan, send, judge) "
        f"{harness / own.cpu:.1f} x; with loading and reports "
        f"{(total - own.cpu) / own.cpu:.1f} x"
    )
    # Any other implementation's holdback is measured against a run of the reference.
    other = min(
        (engine_once(impl, cases, None, itself=False) for _ in range(repeat)),
        key=lambda r: r["engine"].cpu,
    )
    # Less what timing the stages costs, as measured above.
    judge, engine_cpu = other["stages"]["judge"].cpu, other["engine"].cpu - overhead
    print(
        f"    judged as any other implementation is (holdback against the reference): "
        f"judge {judge:.3f} s, engine {engine_cpu:.3f} s CPU, "
        f"{(engine_cpu - own.cpu) / own.cpu:.1f} x"
    )
    if command is not None:
        command_cpu, growth = command
        # The growth check's streams are the implementation's work too (SPEC.md 14).
        mine = own.cpu + growth
        print(
            f"    the whole `conformance run` command (startup and the growth check included)"
            f" / implementation time ({own.cpu:.3f} s on the requests + {growth:.3f} s in the"
            f" growth check): {(command_cpu - mine) / mine:.1f} x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-cmd", action="store_true", help="skip the cmd: implementation")
    arguments = parser.parse_args()
    impls = ["reference"] if arguments.no_cmd else ["reference", CMD_REFERENCE]
    cases = load_corpus([bundled_cases_dir()]).cases
    print(f"{len(cases)} cases; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(f"startup, `python -c 'import conformance.cli.main'` (best of {arguments.repeat}):")
    wall, cpu = best(arguments.repeat, lambda: command(["-c", "import conformance.cli.main"]))
    print(f"  CPU {cpu:.3f} s, wall {wall:.3f} s\n")
    print(f"full default run, `conformance run` with reports (best of {arguments.repeat}):")
    commands = {}
    for impl in impls:
        wall, cpu, growth = command_line(impl, arguments.repeat)
        commands[impl] = (cpu, growth)
        print(f"  {impl[:60]:<60} CPU {cpu:.3f} s, wall {wall:.3f} s")
    print("\nwhere the time goes (one process, after startup):")
    for impl in impls:
        stages(impl, arguments.repeat, commands[impl])
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
