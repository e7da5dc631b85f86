"""Run-level robustness of sessions (issues 10, 12 and 13), one test per defect, with real
`cmd:` implementations, and a real `conformance` process where the process is what is tested
(signals, memory)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conformance.contracts import all_checks
from conformance.corpus.select import Selection
from conformance.engine.plans import result_count
from conformance.reports import load_results, write_reports
from conformance.reports._json import load_results as load_json
from conformance.session.events import Handler, Progress, Started
from conformance.session.handlers import ProgressDisplay
from conformance.session.run import RunSettings, run_session

from .helpers import NotATerminal, bundled_corpus, cli

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fakes" / "fake_impl.py"


def fake(*modes: str) -> str:
    return f"cmd:{sys.executable} {FAKE} {' '.join(modes)}"


def settings(*impls: str, **overrides: object) -> RunSettings:
    base = dict(
        impls=impls or ("reference",),
        option_sets=(),
        case_dirs=(ROOT / "cases",),
        selection=Selection((), (), (), (), all_checks(), None),
        report_dir=None,
        expectations_dir=None,
        timeout=5.0,
        validate_protocol=False,
    )
    return RunSettings(**{**base, **overrides})  # type: ignore[arg-type]


# --- one orchestrator: events ---------------------------------------------------------------


class Recorder(Handler):
    def __init__(self) -> None:
        self.progress_events: list[Progress] = []

    def progress(self, event: Progress) -> None:
        self.progress_events.append(event)


def test_the_progress_total_is_the_number_of_results() -> None:
    """Was: 4,844 announced (cases x every check of every contract) for 2,587 results."""
    recorder = Recorder()
    starts: list[Started] = []

    class Starts(Handler):
        def started(self, event: Started) -> None:
            starts.append(event)

    # Every check of every contract, on the cases of one taxonomy of each.
    chosen = settings(selection=Selection(taxonomy=("FLUSH", "RENDER", "EGRESS")))
    finished = run_session(chosen, [recorder, Starts()], echo=lambda *a, **k: None)
    results = len(finished.run.implementations[0].results)
    assert {r.check for r in finished.run.implementations[0].results} >= set(all_checks())
    assert starts[0].total == results
    assert recorder.progress_events[-1].total == results
    assert recorder.progress_events[-1].done == results


@pytest.mark.slow
def test_run_started_records_the_start_time() -> None:
    """Was: `started` was taken when the run ended."""
    one_case = Selection((), (), ("DNTX",), (), all_checks(), None)
    finished = run_session(
        settings(fake("slow", "0.2"), selection=one_case), [], echo=lambda *a, **k: None
    )
    ended = datetime.now(UTC)
    assert finished.run.duration > 2
    started = datetime.fromisoformat(finished.run.started)
    assert started <= ended - timedelta(seconds=finished.run.duration) + timedelta(seconds=1)


# --- never green without judging --------------------------------------------------------------


@pytest.mark.slow
def test_an_implementation_that_judges_nothing_fails_the_run(tmp_path: Path) -> None:
    """Was: every request answered `unsupported` was shown as ok and exited 0."""
    args = ("run", "--impl", fake("unsupported"), "--id", "DNTX", "--report-dir", str(tmp_path))
    done = cli(*args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "judged nothing" in done.stderr
    assert "judged nothing" in (tmp_path / "report.md").read_text()
    allowed = cli(*args, "--allow-unjudged")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr


def test_case_files_that_fail_to_load_are_exit_2_and_reported(tmp_path: Path) -> None:
    """Was: "selection matches no case" and reports saying "Every check passed"."""
    broken = tmp_path / "cases" / "broken.yaml"
    broken.parent.mkdir()
    broken.write_text("category: x\ncases:\n  - id: DNTX\n    slug: [unclosed\n")
    done = cli("run", "--cases", str(broken.parent), "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "matches no case" not in done.stderr
    assert f"{broken}:" in done.stderr
    report = (tmp_path / "r" / "report.md").read_text()
    assert "Every check passed" not in report
    assert "broken.yaml" in report
    assert load_json(tmp_path / "r" / "results.json").problems


# --- interrupts keep what was judged -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_keeps_what_was_judged_and_kills_the_implementation(
    tmp_path: Path, signum: int, status: int
) -> None:
    """Was: SIGTERM exited 124 with no reports and an orphaned implementation; Ctrl-C said
    "Aborted!" and lost the finished implementations' results."""
    pidfile = tmp_path / "pid"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            "--impl",
            "ref=reference",
            "--impl",
            "slow=" + fake("slow", "0.05", "pidfile", str(pidfile)),
            "--report-dir",
            str(tmp_path / "r"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 120
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == status, out + err
    run = load_results(tmp_path / "r" / "results.json")
    assert run.stopped and signal.Signals(signum).name in run.stopped
    ref, slow = run.implementations
    # Every case and check, then the growth check (SPEC 14).
    total = result_count(bundled_corpus().cases, all_checks()) + 1
    assert len(ref.results) == total and ref.not_run == 0
    assert slow.not_run == total - len(slow.results) > 0
    assert "INCOMPLETE" in (tmp_path / "r" / "report.md").read_text()
    pid = int(pidfile.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the implementation (pid {pid}) outlived the harness")


# --- time is bounded -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_budget_ends_the_run_and_reports_what_did_not_run(tmp_path: Path) -> None:
    """Was: no overall budget (an implementation answering slowly took hours)."""
    started = time.monotonic()
    done = cli(
        "run", "--impl", fake("slow", "0.05"), "--budget", "3", "--report-dir", str(tmp_path)
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 1, done.stdout + done.stderr
    run = load_results(tmp_path / "results.json")
    assert run.stopped and "budget" in run.stopped
    assert run.implementations[0].not_run > 0


def test_progress_on_a_non_terminal_is_a_line_now_and_then() -> None:
    """Was: no progress at all when stderr is not a terminal (CI logs); then no estimate of
    what was left (a matrix of three adapters ran 11.5 minutes without one)."""

    now = [0.0]
    log = NotATerminal()
    display = ProgressDisplay(log, interval=10, minimum=5, clock=lambda: now[0])  # type: ignore[arg-type]
    for done in range(1, 1001):
        now[0] = done * 0.1  # 100 s in all
        display.progress(Progress("impl", done, 1000, done, 1000))
    lines = log.text.splitlines()
    assert 5 <= len(lines) <= 12, lines
    assert lines[0].startswith("progress: impl: ")
    assert "\r" not in log.text and "\033" not in log.text
    # What is left, at the pace so far (a check each 0.1 s): 50 s when half is done.
    assert "impl: 500/1000 checks (50% of the session, about 50 s left)" in log.text, lines
    assert "left" not in lines[-1]  # nothing is left at the end


# --- memory is bounded -----------------------------------------------------------------------


def peak_rss_mb(*args: str, cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run `conformance ARGS` in a child and return its peak resident memory."""
    code = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.stderr.write(done.stdout + done.stderr)\n"
        "sys.exit(done.returncode)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "conformance", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return int(done.stdout.split()[-1]) / 1024, done


@pytest.mark.slow
def test_splits_of_a_long_case_stay_within_bounded_memory(tmp_path: Path) -> None:
    """Was: every split request built at once; 20,000 characters took 1.2 GB."""
    half = 6_000
    case = {
        "category": "long",
        "cases": [
            {
                "id": "LQNG",
                "slug": "long-case",
                "title": "A long case",
                "taxonomy": "BLOCK.inline",
                "level": "must",
                "chunks": ["<think>" + "t" * half + "</think>" + "a" * half],
                "expected": {"assistant": "a" * half, "thinking": "t" * half},
                "provenance": [{"kind": "spec", "ref": "SPEC 7.1"}],
            }
        ],
    }
    (tmp_path / "long.yaml").write_text(json.dumps(case))
    peak, done = peak_rss_mb(
        "run", "--cases", "long.yaml", "--check", "splits", "--report-dir", "r", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert peak < 200, f"peak {peak:.0f} MB"


@pytest.mark.slow
def test_a_huge_reply_gives_small_reports(tmp_path: Path) -> None:
    """Was: reasons and reports embedded the whole divergent text (200 MB -> 830 MB)."""
    done = cli(
        "run",
        "--impl",
        "python:tests.fakes.broken_impls:HugeReply",
        "--id",
        "DNTX",
        "--check",
        "stream",
        "--check",
        "whole",
        "--report-dir",
        str(tmp_path),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    size = sum(path.stat().st_size for path in tmp_path.iterdir())
    assert size < 1_000_000, size
    result = load_results(tmp_path / "results.json").implementations[0].results[0]
    assert result.digests is not None
    digest = result.digests["actual.assistant"]
    assert digest["length"] == 2_000_000 + len("The answer is 4.")
    assert len(result.actual["assistant"]) < 10_000  # type: ignore[index]


# --- atomic reports --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_concurrent_reader_never_sees_a_partial_results_file(tmp_path: Path) -> None:
    """Was: reports written in place; a reader saw an empty results.json 64 times."""
    finished = run_session(settings(), [], echo=lambda *a, **k: None)
    write_reports(finished.run, tmp_path)
    seen: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            text = (tmp_path / "results.json").read_text()
            try:
                json.loads(text)
            except ValueError:
                seen.append(text[:40])

    reader = threading.Thread(target=read)
    reader.start()
    for _ in range(10):
        write_reports(finished.run, tmp_path)
    stop.set()
    reader.join()
    assert not seen
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "junit.xml",
        "report.html",
        "report.md",
        "results.json",
    ]


# --- fuzz --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_fuzz_stops_an_implementation_whose_connection_gave_up(tmp_path: Path) -> None:
    """Was: every later property ERROR after 3 examples, shrunk to an empty input, and case
    files written that do not reproduce."""
    impl = "dies=" + fake("exit-after", "30", "once", str(tmp_path / "started"))
    done = cli(
        "fuzz",
        "--impl",
        impl,
        # The fake is chunking-invariant and idempotent: only the lost connection fails these.
        "--property",
        "chunking",
        "--property",
        "idempotence",
        "--max-examples",
        "40",
        "--database",
        "none",
        "--seed",
        "1",
        "--report-dir",
        str(tmp_path / "r"),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    fuzz = load_results(tmp_path / "r" / "results.json").implementations[0].fuzz
    assert fuzz and all(r.verdict.value == "ERROR" for r in fuzz)
    assert "connection was lost during fuzzing: gave up" in fuzz[0].reason
    assert fuzz[1].reason.startswith("not fuzzed: the connection was lost")
    assert fuzz[1].examples == 0
    assert not (tmp_path / "r" / "found").exists()


@pytest.mark.slow
@pytest.mark.parametrize("label", ["../../escaped", "a/b"])
def test_found_case_files_stay_in_the_report_directory(tmp_path: Path, label: str) -> None:
    """Was: `../` in the label wrote outside reports/found/, `/` crashed fuzz."""
    reports = tmp_path / "work" / "reports"
    reports.parent.mkdir()
    done = cli(
        "fuzz",
        "--impl",
        f"{label}=python:tests.fakes.broken_impls:NoCarry",
        "--property",
        "differential",
        "--max-examples",
        "300",
        "--database",
        "none",
        "--seed",
        "3",
        "--report-dir",
        str(reports),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    written = [p for p in tmp_path.rglob("*.yaml")]
    assert written and all(reports / "found" in p.parents for p in written), written
    assert load_results(reports / "results.json").implementations[0].fuzz


# --- each command its own report directory --------------------------------------------------


@pytest.mark.slow
def test_run_then_fuzz_leaves_the_run_reports_intact(tmp_path: Path) -> None:
    """Was: fuzz and replay wrote the same reports/ as run; CI lost the run's JUnit."""
    run = cli("run", "--id", "DNTX", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    junit = (tmp_path / "reports" / "run" / "junit.xml").read_bytes()
    fuzz = cli(
        "fuzz",
        "--property",
        "differential",
        "--max-examples",
        "5",
        "--database",
        "none",
        cwd=tmp_path,
    )
    assert fuzz.returncode == 0, fuzz.stderr
    assert (tmp_path / "reports" / "run" / "junit.xml").read_bytes() == junit
    assert (tmp_path / "reports" / "fuzz" / "junit.xml").exists()


# --- issue 21, item 6: one line with exit status 2, never a traceback ----------------------------


def one_line_error(done, *words: str) -> None:  # type: ignore[no-untyped-def]
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert all(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize("budget", ["nan", "inf", "1e308", "-3"])
def test_a_budget_that_is_not_a_time_is_a_usage_error(tmp_path: Path, budget: str) -> None:
    done = cli("run", "--id", "DNTX", "--budget", budget, "--report-dir", tmp_path)
    one_line_error(done, "--budget")


def test_a_deeply_nested_keyword_expression_is_a_usage_error(tmp_path: Path) -> None:
    expression = "(" * 10_000 + "split" + ")" * 10_000
    done = cli("run", "-k", expression, "--report-dir", tmp_path)
    one_line_error(done, "-k", "nested too deeply")
    assert len(done.stderr) < 300


def test_a_complex_mapping_key_in_a_case_file_is_a_case_file_error(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "bad.yaml").write_text("category: x\ncases:\n  ? [a, b]\n  : c\n", "utf-8")
    done = cli("run", "--cases", cases, "--report-dir", tmp_path / "reports")
    assert done.returncode == 2
    assert "bad.yaml:3: a mapping key must be a plain value" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_report_directory_that_cannot_be_made_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "a-file").write_text("", "utf-8")
    done = cli("run", "--impl", fake("hang-hello"), "--report-dir", tmp_path / "a-file" / "sub")
    one_line_error(done, "cannot write reports to", "a-file")
    assert "implementation" not in done.stdout  # refused before anything ran


def test_a_full_disk_when_the_reports_are_written_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import conformance.reports

    def full(path: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(conformance.reports, "write_atomically", full)
    done = cli("run", "--id", "DNTX", "--no-growth", "--report-dir", tmp_path)
    one_line_error(done, "cannot write reports to", "the disk is full")
    assert "reference" in done.stdout  # the summary is shown all the same


def test_a_full_disk_before_the_run_is_refused_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    done = cli("run", "--impl", fake("hang-hello"), "--report-dir", tmp_path)
    one_line_error(done, "the disk is full")


def test_a_second_run_on_the_same_report_directory_is_refused_naming_the_first(
    tmp_path: Path,
) -> None:
    from conformance.session.report_dir import LOCK_NAME, ReportDirectory, ReportDirError

    first = ReportDirectory(tmp_path / "reports")
    try:
        done = cli("run", "--id", "DNTX", "--report-dir", tmp_path / "reports")
        one_line_error(done, "another run", f"pid {os.getpid()}", "--report-dir")
        with pytest.raises(ReportDirError):
            ReportDirectory(tmp_path / "reports")
    finally:
        first.release()
    assert (tmp_path / "reports" / LOCK_NAME).exists()
    done = cli("run", "--id", "DNTX", "--no-growth", "--report-dir", tmp_path / "reports")
    assert done.returncode == 0, done.stderr
    # And a run that failed early gave the directory back.
    assert cli("run", "-k", "nomatch", "--report-dir", tmp_path / "reports").returncode == 2
    ReportDirectory(tmp_path / "reports").release()


def test_a_stale_lock_of_a_dead_run_is_taken_over(tmp_path: Path) -> None:
    from conformance.session.report_dir import LOCK_NAME, ReportDirectory

    directory = tmp_path / "reports"
    directory.mkdir()
    # A lock still held, by a process the dead run left behind, with the dead run's pid.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (directory / LOCK_NAME).write_text(f"{dead}\n", "utf-8")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(directory / LOCK_NAME),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        claimed = ReportDirectory(directory)
        assert (directory / LOCK_NAME).read_text("utf-8") == f"{os.getpid()}\n"
        claimed.release()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_two_real_runs_on_one_report_directory_never_mix_their_reports(tmp_path: Path) -> None:
    """The attack: two runs at once on one directory left one's junit.xml beside the other's
    results. Now the second is refused with exit status 2 while the first holds it."""
    from .helpers import conformance_popen

    slow = conformance_popen(
        "run",
        "--impl",
        fake("slow", "0.05"),
        "--id",
        "DNTX",
        "--no-growth",
        "--report-dir",
        tmp_path,
    )
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / ".conformance.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = cli("run", "--id", "DNTX", "--no-growth", "--report-dir", tmp_path)
        one_line_error(second, "another run", f"pid {slow.pid}")
    finally:
        slow.wait(60)


def test_reports_stay_where_the_run_started_when_the_implementation_changes_directory(
    tmp_path: Path,
) -> None:
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    done = cli(
        "run",
        "--impl",
        "python:tests.fakes.hostile_impls:ChangesDirectory",
        "--id",
        "DNTX",
        "--no-growth",
        "--report-dir",
        "reports",
        cwd=start,
        env={"CONFORMANCE_TEST_CHDIR": str(elsewhere), "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert (start / "reports" / "results.json").exists()
    assert not (elsewhere / "reports").exists()


def test_a_300_character_label_in_fuzz_gives_a_short_file_name(tmp_path: Path) -> None:
    label = "x" * 300
    done = cli(
        "fuzz",
        "--impl",
        f"{label}=python:tests.fakes.broken_impls:NoCarry",
        "--property",
        "differential",
        "--max-examples",
        "10",
        "--database",
        "none",
        "--seed",
        "1",
        "--report-dir",
        tmp_path,
    )
    assert done.returncode == 1, done.stderr
    # One case file per distinct bug found, each name short.
    found = list((tmp_path / "found").iterdir())
    assert found and all(len(f.name) < 120 and f.name.startswith("x" * 40) for f in found)


# --- issue 21, item 8: start-up time apart from request time -------------------------------------


def test_the_start_timeout_is_its_own_flag_and_says_so(tmp_path: Path) -> None:
    done = cli(
        "run",
        "--impl",
        fake("slow-start", "2"),
        "--id",
        "DNTX",
        "--no-growth",
        "--timeout",
        "30",
        "--start-timeout",
        "0.5",
        "--report-dir",
        tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "did not answer hello within 0.5 s (--start-timeout)" in done.stderr
    bad = cli("run", "--start-timeout", "nan", "--report-dir", tmp_path)
    one_line_error(bad, "--start-timeout nan")


@pytest.mark.slow
def test_the_start_time_is_reported(tmp_path: Path) -> None:
    done = cli(
        "run",
        "--impl",
        "reference",
        "--impl",
        fake("slow-start", "0.3"),
        "--id",
        "DNTX",
        "--no-growth",
        "--report-dir",
        tmp_path,
    )
    assert done.returncode == 1, done.stderr  # the fake echoes, and fails the case
    data = json.loads((tmp_path / "results.json").read_text("utf-8"))
    reference, slow = data["implementations"]
    assert 0 <= reference["start_seconds"] < 0.3 <= slow["start_seconds"] < 30
    reread = load_json(tmp_path / "results.json").implementations[1]
    assert reread.start_seconds == slow["start_seconds"]
    line = f"Start-up time: reference {reference['start_seconds']:.2f} s; 0.3 "
    assert line in (tmp_path / "report.md").read_text("utf-8")
    assert "Start-up time: reference" in (tmp_path / "report.html").read_text("utf-8")


@pytest.mark.slow
def test_a_slow_importing_implementation_starts_under_the_default_timeouts(
    tmp_path: Path,
) -> None:
    """As LiteLLM or transformers import: longer than the 5 s request timeout."""
    done = cli(
        "run",
        "--impl",
        fake("slow-start", "7"),
        "--id",
        "DNTX",
        "--no-growth",
        "--report-dir",
        tmp_path,
    )
    assert done.returncode == 1, done.stderr  # the fake echoes: judged, and failing
    (slow,) = json.loads((tmp_path / "results.json").read_text("utf-8"))["implementations"]
    assert slow["failure"] is None
    assert 7 <= slow["start_seconds"] < 60
    assert slow["summary"]["FAIL"] > 0 and slow["summary"]["ERROR"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "replay"])
def test_a_run_that_never_started_keeps_the_last_good_reports(tmp_path: Path, command: str) -> None:
    """A typo in `--impl` (nothing started) does not replace the reports already there, and
    says so; where there are none yet, its reports say why it could not start."""
    spec, typo = "python:tests.fakes.http_clients:chat_client", "python:tests.fakes.htp:x"
    args = ["--id", "8L8J", "--no-growth"] if command == "run" else ["--id", "8L8J"]
    impl = "reference" if command == "run" else spec
    good = cli(command, "--impl", impl, *args, "--report-dir", tmp_path / "reports")
    assert good.returncode == 0, good.stderr
    before = {p.name: p.read_bytes() for p in (tmp_path / "reports").iterdir()}
    failed = cli(command, "--impl", typo, *args, "--report-dir", tmp_path / "reports")
    assert failed.returncode == 2 and "cannot import 'tests.fakes.htp'" in failed.stderr
    assert f"the reports in {tmp_path / 'reports'} are still those of the previous run" in (
        failed.stderr
    )
    assert "wrote " not in failed.stdout
    assert {p.name: p.read_bytes() for p in (tmp_path / "reports").iterdir()} == before
    first = cli(command, "--impl", typo, *args, "--report-dir", tmp_path / "new")
    assert first.returncode == 2
    assert load_results(tmp_path / "new" / "results.json").implementations[0].failure
