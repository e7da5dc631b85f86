"""Runs that stop when told and keep what was answered (issue 21, items 2 and 3): a `python:`
implementation on a thread of its own, replies judged as they come, quarantine by class,
fuzzing workers that keep what they finished. Signals and budgets are real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from conformance.engine.runner import run_implementation
from conformance.model.chunks import Chunk
from conformance.model.requests import Ok, Reply, Request, StreamRequest, Timeout
from conformance.model.results import CaseResult, ImplementationInfo, Verdict
from conformance.reports import load_results
from conformance.session.events import Progress, Started
from conformance.session.handlers import ProgressDisplay
from conformance.transport.connections import Connection
from conformance.transport.impls import connect
from conformance.transport.inprocess import AHEAD, InProcessConnection
from conformance.transport.quarantine import Quarantine, markers
from conformance.transport.spec import ImplementationSpec, parse_impl
from conformance.transport.subprocess import SubprocessConnection

from .helpers import ROOT, NotATerminal, bundled_corpus, cli, conformance_popen

FAKE = ROOT / "tests" / "fakes" / "fake_impl.py"
HOSTILE = "tests.fakes.hostile_impls"


def stream(*contents: str) -> StreamRequest:
    return StreamRequest(tuple(Chunk(content) for content in contents))


# --- python: starts or fails to start, whatever it raises ----------------------------------


@pytest.mark.parametrize(
    ("target", "raised"),
    [
        ("tests.fakes.exits_at_import:Normalizer", "SystemExit: 0"),
        (f"{HOSTILE}:exits_in_factory", "raised SystemExit: 0"),
        (f"{HOSTILE}:interrupts_in_factory", "raised KeyboardInterrupt"),
    ],
)
def test_exiting_at_import_or_in_the_factory_is_a_start_failure_with_reports(
    tmp_path: Path, target: str, raised: str
) -> None:
    """Was: `conformance run` exited 0 with no output and no reports."""
    done = cli("run", "--impl", f"python:{target}", "--report-dir", str(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert raised in done.stderr
    run = load_results(tmp_path / "results.json")
    assert run.implementations[0].failure and raised in run.implementations[0].failure


def test_a_hang_in_a_loop_that_swallows_everything_is_a_timeout() -> None:
    """Was: the watchdog's exception was swallowed at every tick; nothing ended the request
    (a process of its own, so that the old behaviour hangs it and not the tests)."""
    code = (
        "from conformance.transport.impls import connect\n"
        "from conformance.transport.spec import parse_impl\n"
        "from conformance.model.chunks import Chunk\n"
        "from conformance.model.requests import StreamRequest\n"
        f"c = connect(parse_impl('python:{HOSTILE}:HangsOnThink'), timeout=0.3)\n"
        "rs = c.send([StreamRequest((Chunk(t),)) for t in ('a', 'x<think>y', 'b')])\n"
        "print(*(type(r).__name__ for r in rs))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.stdout.split() == ["Ok", "Timeout", "Ok"], done.stderr


# --- hangs are bounded by class ------------------------------------------------------------


def test_requests_sharing_a_delimiter_are_quarantined_after_three_timeouts() -> None:
    """Was: quarantine needed one chunk content in all three; a normalizer hanging on every
    `<think>`, each time in another chunk, was never quarantined."""
    quarantine = Quarantine(markers({}))
    quarantine.answered(stream("plain"))
    for request in (stream("a<th", "ink>b"), stream("<think>c"), stream("x", "<THINK>", "y")):
        assert quarantine.check(request) is None
        quarantine.timed_out(request)
    blocked = quarantine.check(stream("z <think> z"))
    assert isinstance(blocked, Timeout) and "containing '<think>'" in blocked.message
    assert quarantine.check(stream("plain", "text")) is None


def test_a_delimiter_answered_since_is_not_quarantined() -> None:
    quarantine = Quarantine(markers({}))
    quarantine.timed_out(stream("a<think>"))
    quarantine.answered(stream("b<think>"))
    quarantine.timed_out(stream("c<think>"))
    quarantine.timed_out(stream("d<think>"))
    assert quarantine.check(stream("e<think>")) is None


# --- replies are judged as they come -------------------------------------------------------


class _StopsAfter:
    """The reference, interrupted (as by Ctrl-C) after answering `count` requests."""

    def __init__(self, count: int) -> None:
        self.inner = connect(parse_impl("reference"))
        self.info = self.inner.info
        self.is_reference = True
        self.left = count

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        for request in requests:
            if not self.left:
                raise KeyboardInterrupt
            self.left -= 1
            yield self.inner.send([request])[0]

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        return list(self.answers(requests))

    def close(self) -> None:
        pass


def test_an_interrupt_keeps_what_was_answered_before_it() -> None:
    """Was: replies were judged when the whole batch of 2,000 requests returned; a stop
    after 700 answered requests kept none."""
    results: list[CaseResult] = []
    connection: Connection = _StopsAfter(700)
    with pytest.raises(KeyboardInterrupt):
        run_implementation(connection, bundled_corpus().cases, on_result=results.append)
    assert len(results) > 50
    assert all(result.verdict == Verdict.PASS for result in results)


def test_a_cmd_implementation_lets_each_reply_out_as_it_comes() -> None:
    spec = ImplementationSpec("fake", "cmd:fake_impl.py")
    connection = SubprocessConnection([sys.executable, str(FAKE), "slow", "0.2"], spec)
    try:
        started = time.monotonic()
        first = next(connection.answers([stream(str(i)) for i in range(10)]))
        assert isinstance(first, Ok)
        assert time.monotonic() - started < 1.5  # the batch takes 2 s
    finally:
        connection.close()


#: What `_Records` normalizers were fed, on whichever thread.
FED: list[str] = []


class _Records:
    """Answers each stream with its text, recording what it was fed."""

    def feed(self, chunk: dict) -> dict[str, str]:
        FED.append(chunk["content"])
        return {"assistant": chunk["content"], "thinking": ""}

    def finish(self) -> dict[str, str]:
        return {"assistant": "", "thinking": ""}


def test_a_python_implementation_left_mid_batch_answers_the_next_request_itself() -> None:
    """Its worker is handed requests ahead of the reply waited for (AHEAD); a caller that
    stops taking replies (a stop, an error) leaves those unrun, and their replies do not
    come in place of the next request's."""
    FED.clear()
    info = ImplementationInfo("rec", "rec", "1", "python", {}, "python:rec")
    connection = InProcessConnection(_Records, info, timeout=5)
    replies = connection.answers([stream(str(i)) for i in range(200)])
    first = next(replies)
    assert isinstance(first, Ok) and first.deltas and first.deltas[0]["assistant"] == "0"
    replies.close()
    [again] = connection.send([stream("x")])
    assert isinstance(again, Ok) and again.deltas and again.deltas[0]["assistant"] == "x"
    numbers = [text for text in FED if text != "x"]
    assert numbers == [str(i) for i in range(len(numbers))] and len(numbers) <= AHEAD + 1
    connection.close()


# --- signals and the budget end a run within 2 s, keeping what was answered ---------------


def _fake(*modes: str) -> str:
    return f"cmd:{sys.executable} {FAKE} {' '.join(modes)}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "how"),
    [
        (f"python:{HOSTILE}:Slow", signal.SIGTERM),
        (f"python:{HOSTILE}:Slow", signal.SIGINT),
        (f"python:{HOSTILE}:Slow", "budget"),
        (f"python:{HOSTILE}:RetriesForever", signal.SIGTERM),
        (f"python:{HOSTILE}:RetriesForever", "budget"),
        (_fake("slow", "0.003"), signal.SIGTERM),
    ],
    ids=["python-TERM", "python-INT", "python-budget", "swallows-TERM", "swallows-budget", "cmd"],
)
def test_a_stop_ends_the_run_within_2_s_keeping_what_was_answered(
    tmp_path: Path, spec: str, how: signal.Signals | str
) -> None:
    """Was: Ctrl-C printed "Aborted!" with no report; SIGTERM took 104 s and the budget
    118 s against a slow `python:` implementation, an exception-swallowing one was
    unkillable, and every stop lost the batch being answered (0 results)."""
    budget = 6.0
    extra = ["--budget", str(budget)] if how == "budget" else []
    process = conformance_popen(
        "run", "--impl", spec, "--report-dir", tmp_path, *extra,
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    started = time.monotonic()
    try:
        if isinstance(how, signal.Signals):
            time.sleep(6)
            process.send_signal(how)
            sent = time.monotonic()
            status = 128 + how
        else:
            sent = started + budget
            status = 1
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    # The budget starts after the interpreter and the corpus are loaded: a second or so.
    allowed = 2.0 if isinstance(how, signal.Signals) else 3.5
    assert time.monotonic() - sent < allowed
    assert process.returncode == status, err
    impl = load_results(tmp_path / "results.json").implementations[0]
    assert len(impl.results) > 0 and impl.not_run > 0


@pytest.mark.slow
def test_an_implementation_hanging_on_every_think_ends_with_most_judged(tmp_path: Path) -> None:
    """Was: with --timeout 1, nothing judged and no progress line after 900 s."""
    started = time.monotonic()
    process = conformance_popen(
        "run", "--impl", f"python:{HOSTILE}:HangsOnThink", "--timeout", "1",
        "--report-dir", tmp_path, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert time.monotonic() - started < 120
    assert process.returncode == 1, err
    results = load_results(tmp_path / "results.json").implementations[0].results
    passed = [r for r in results if r.verdict == Verdict.PASS]
    assert len(passed) > len(results) / 3
    assert any("containing '<think>'" in r.reason for r in results)


def fuzz_on_two_workers(report_dir: Path) -> subprocess.Popen[str]:
    """`fuzz --workers 2` of a broken normalizer, one property a worker, with a budget no
    run gets to the end of: the other property is still running when the first is done."""
    return conformance_popen(
        "fuzz", "--impl", "python:tests.fakes.broken_impls:NoCarry",
        "--property", "differential", "--property", "idempotence", "--workers", "2",
        "--max-examples", "1000000", "--seed", "7", "--database", "none",
        "--report-dir", report_dir, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


@pytest.mark.slow
def test_an_interrupted_fuzz_with_workers_keeps_what_the_workers_finished(
    tmp_path: Path,
) -> None:
    """Was: `fuzz --workers 2` interrupted lost every result and found case."""
    process = fuzz_on_two_workers(tmp_path)
    assert process.stdout is not None
    # Reading blocks while no line comes: the guard ends a run that never writes one.
    guard = threading.Timer(90, process.kill)
    guard.start()
    try:
        for line in process.stdout:
            if "minimal case written to" in line:
                break
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    finally:
        guard.cancel()
        process.kill()
    assert process.returncode == 143
    results = load_results(tmp_path / "results.json").implementations[0].fuzz
    # The finished property, with each bug it found; the other was still running.
    assert {r.property for r in results} == {"differential"}
    assert all(r.verdict == Verdict.FAIL for r in results)
    written = [Path(r.case_file) for r in results if r.case_file]
    assert written and all(path.exists() for path in written)
    assert json.loads((tmp_path / "results.json").read_text())["stopped"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_fuzz_workers_end_when_the_run_is_killed_outright(tmp_path: Path) -> None:
    """Was: `fuzz --workers 2` killed with SIGKILL (no signal to pass on) left its two
    worker processes fuzzing at full speed for nobody, for minutes."""
    process = fuzz_on_two_workers(tmp_path)
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [int(pid) for pid in children.read_text().split() if _pool_worker(pid)]
        assert len(workers) == 2, "the pool's workers did not start"
    finally:
        process.kill()
    # Not before they are gone: the workers hold the pipes of the killed process open.
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    process.communicate(timeout=30)
    assert not left, f"workers outlived the run: {left}"


# --- nothing outlives the run --------------------------------------------------------------


@pytest.mark.parametrize("bye", [True, False], ids=["exits-on-bye", "killed"])
def test_a_daemon_the_implementation_started_is_ended_with_it(tmp_path: Path, bye: bool) -> None:
    """Was: a `setsid` daemon forked by an implementation survived the run."""
    pidfile = tmp_path / "daemon"
    modes = ["daemon", str(pidfile)] + ([] if bye else ["ignore-bye"])
    spec = ImplementationSpec("fake", "cmd:fake_impl.py")
    connection = SubprocessConnection([sys.executable, str(FAKE), *modes], spec)
    deadline = time.monotonic() + 10
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    daemon = int(pidfile.read_text())
    connection.close()
    for _ in range(100):
        if not _alive(daemon):
            break
        time.sleep(0.02)
    else:
        os.kill(daemon, signal.SIGKILL)
        pytest.fail(f"the daemon (pid {daemon}) outlived its implementation")


def _pool_worker(pid: str) -> bool:
    """Whether `pid` is a worker of a spawned multiprocessing pool (not its resource tracker)."""
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False


def _alive(pid: int) -> bool:
    """Running, neither gone nor a zombie waiting for init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- progress, whatever happens ------------------------------------------------------------


def test_a_stalled_run_still_writes_progress() -> None:
    """Was: no progress line at all while nothing was judged (900 s of timeouts)."""
    log = NotATerminal()
    display = ProgressDisplay(log, heartbeat=0.2)  # type: ignore[arg-type]
    display.started(Started(["impl"], 10))
    display.progress(Progress("impl", 1, 10, 1, 10))
    time.sleep(0.9)
    display.finished(None)  # type: ignore[arg-type]
    lines = log.text.splitlines()
    assert len(lines) >= 2, lines
    assert lines[-1].startswith("progress: impl: 1/10 checks, no new result for")
    time.sleep(0.3)
    assert log.text.splitlines() == lines  # and nothing once the session finished
