"""Implementations that attack the harness (issues 12 and 13): each defect found, reproduced
against tests/fakes/hostile_impls.py or the scriptable fake (tests/fakes/fake_impl.py)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.errors import ImplementationStartError, UsageError
from conformance.model.chunks import Chunk
from conformance.model.requests import Error, Ok, StreamRequest, Timeout
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import ImplementationSpec, parse_impl
from conformance.transport.subprocess import SubprocessConnection

from .helpers import cli, conformance_process

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fakes" / "fake_impl.py"
HOSTILE = "tests.fakes.hostile_impls"


def stream(*contents: str) -> StreamRequest:
    return StreamRequest(tuple(Chunk(content) for content in contents))


def python(name: str, timeout: float = 5.0, kind: str = "python"):  # type: ignore[no-untyped-def]
    return connect(parse_impl(f"{kind}:{HOSTILE}:{name}"), timeout=timeout)


def fake(*modes: str, timeout: float = 1.0) -> SubprocessConnection:
    spec = ImplementationSpec("fake", "cmd:fake_impl.py")
    return SubprocessConnection([sys.executable, str(FAKE), *modes], spec, timeout=timeout)


# --- nothing ends a run silently ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "word", "raised"),
    [
        ("ExitsOnExit", "EXIT", "raised SystemExit: 0"),
        ("InterruptsOnInterrupt", "INTERRUPT", "raised KeyboardInterrupt"),
        ("GeneratorExitOnStop", "STOP", "raised GeneratorExit"),
    ],
)
def test_base_exceptions_from_a_python_implementation_are_errors(
    name: str, word: str, raised: str
) -> None:
    connection = python(name)
    replies = connection.send([stream("a"), stream(word), stream("b")])
    assert isinstance(replies[0], Ok) and isinstance(replies[2], Ok)
    assert isinstance(replies[1], Error)
    assert replies[1].message.startswith(raised)


def test_the_users_ctrl_c_still_stops_the_run() -> None:
    """It swallows the first KeyboardInterrupt; the run stops all the same, long before the
    request's timeout. Python's own Ctrl-C handler is installed for the test, whatever an
    earlier test in this process left, and the request may wait far longer than the signal
    can be late on a loaded machine: only the interrupt can end it in time."""
    sent: list[float] = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    connection = python("SleepsOnHang", timeout=60)
    timer = threading.Timer(0.3, interrupt)
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            connection.send([stream("HANG")])
        assert time.monotonic() - sent[0] < 5
    finally:
        timer.cancel()
        connection.close()
        signal.signal(signal.SIGINT, previous)


def test_sys_exit_in_an_implementation_does_not_end_conformance_run(tmp_path: Path) -> None:
    # A real process: were SystemExit let through, it would end the test session instead.
    done = conformance_process(
        "run",
        "--impl",
        f"python:{HOSTILE}:ExitsOnCloseTag",
        "--cases",
        str(ROOT / "cases" / "orphan.yaml"),
        "--report-dir",
        str(tmp_path),
    )
    # Today: exit 0, no reports. Now the run goes on and every check is judged.
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "results.json").exists(), done.stderr
    assert "raised SystemExit: 0" in (tmp_path / "results.json").read_text()


# --- isolation mode ----------------------------------------------------------------------------


def test_isolation_turns_a_hard_exit_into_an_error_and_goes_on() -> None:
    connection = python("HardExitsOnExit", kind="python-isolated")
    try:
        replies = connection.send([stream("a"), stream("EXIT"), stream("b")])
    finally:
        connection.close()
    assert isinstance(replies[0], Ok) and isinstance(replies[2], Ok)
    assert isinstance(replies[1], Error)
    assert replies[1].message.startswith("the implementation exited with status 7")


def test_isolation_turns_a_segfault_into_an_error() -> None:
    connection = python("SegfaultsOnCrash", kind="python-isolated")
    try:
        replies = connection.send([stream("CRASH"), stream("b")])
    finally:
        connection.close()
    assert isinstance(replies[0], Error)
    assert "was killed by signal SIGSEGV" in replies[0].message
    assert isinstance(replies[1], Ok)


def test_isolation_keeps_what_the_implementation_prints_off_the_protocol() -> None:
    connection = python("Prints", kind="python-isolated")
    try:
        replies = connection.send([stream("<think>a</think>b"), stream("c")])
        assert all(isinstance(reply, Ok) for reply in replies), replies
        assert isinstance(replies[0], Ok) and replies[0].deltas is not None
        assert "".join(d["assistant"] for d in replies[0].deltas) == "b"
        # What it printed went to standard error, where a failure would show it.
        process = connection._process
        assert process is not None
        tail = process.tail() or ""
        assert "made a normalizer" in tail and "from C, say" in tail and "feeding" in tail
    finally:
        connection.close()


def test_isolation_declares_what_the_factory_declares() -> None:
    connection = connect(parse_impl("iso=python-isolated:tests.fakes.broken_impls:NoFlush"))
    try:
        assert connection.info.label == "iso"
        assert connection.info.spec == "python-isolated:tests.fakes.broken_impls:NoFlush"
    finally:
        connection.close()


def test_isolation_reports_an_import_failure_as_a_start_failure() -> None:
    with pytest.raises(ImplementationStartError, match="refused hello: cannot import"):
        connect(parse_impl("python-isolated:no_such_module_x:Factory"))


# --- time is bounded ---------------------------------------------------------------------------


def test_a_python_implementation_that_sleeps_forever_times_out() -> None:
    connection = python("SleepsOnHang", timeout=0.5)
    started = time.monotonic()
    replies = connection.send([stream("a"), stream("HANG"), stream("b")])
    assert time.monotonic() - started < 3
    assert isinstance(replies[1], Timeout)
    assert replies[1].verdict == Verdict.TIMEOUT
    assert isinstance(replies[0], Ok) and isinstance(replies[2], Ok)


# Timeouts are waited out: the isolated one, with its restarts, in the slow tier.
@pytest.mark.parametrize(
    "kind", ["python", pytest.param("python-isolated", marks=pytest.mark.slow)]
)
def test_requests_that_keep_timing_out_are_not_sent_again(kind: str) -> None:
    connection = python("HangsOnLessThan", timeout=0.3, kind=kind)
    requests = [stream("x", "<", "y") if i % 2 else stream("plain", str(i)) for i in range(20)]
    started = time.monotonic()
    try:
        replies = connection.send(requests)
    finally:
        connection.close()
    elapsed = time.monotonic() - started
    timeouts = [r for r in replies if isinstance(r, Timeout)]
    assert len(timeouts) == 10
    assert [r.message.startswith("not run") for r in timeouts].count(False) == 3
    assert all(isinstance(r, Ok) for r in replies[::2])
    assert elapsed < 5


@pytest.mark.slow  # four timeouts waited out
def test_a_server_that_answers_whole_batches_is_charged_only_for_the_request_that_hangs() -> None:
    # Today: the request due is charged, every restart "fails", and after 3 all are ERROR.
    requests = [stream("<") if i in (5, 30, 60, 90) else stream(f"r{i}") for i in range(120)]
    with fake("batch", "hang-on", "<", timeout=0.5) as connection:
        replies = connection.send(requests)
        later = connection.send([stream("after"), stream("<")])
    for index, reply in enumerate(replies):
        if index in (5, 30, 60, 90):
            assert isinstance(reply, Timeout), (index, reply)
        else:
            assert isinstance(reply, Ok), (index, reply)
    assert isinstance(later[0], Ok)
    assert isinstance(later[1], Timeout) and later[1].message.startswith("not run")


@pytest.mark.slow
def test_a_timeout_after_a_restart_does_not_count_towards_giving_up() -> None:
    # Three timeouts in a row, each followed by a restart that works: no giving up.
    requests = [stream("c"), stream("<"), stream("<", "a"), stream("<", "b"), stream("d")]
    with fake("hang-on", "<", timeout=0.3) as connection:
        replies = connection.send(requests)
    assert all(isinstance(r, Timeout) for r in replies[1:4])
    assert isinstance(replies[0], Ok) and isinstance(replies[4], Ok)


# --- what the user sees ------------------------------------------------------------------------


def test_closing_stdout_is_reported_as_that() -> None:
    with fake("close-stdout") as connection:
        replies = connection.send([stream("a"), stream("CLOSE"), stream("b")])
    assert isinstance(replies[1], Error)
    assert replies[1].message.startswith(
        "the implementation closed its standard output while answering request 2"
    )
    assert isinstance(replies[2], Ok)


def test_control_characters_from_an_implementation_are_escaped() -> None:
    with fake("escapes") as connection:
        (reply,) = connection.send([stream("a")])
    assert isinstance(reply, Error) and reply.stderr is not None
    for text in (reply.message, reply.stderr):
        assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in reply.message and "\\x1b[2J" in reply.stderr
    (reply,) = python("PrintsEscapes").send([stream("ESC")])
    assert isinstance(reply, Error) and "\x1b" not in reply.message


def test_str_subclasses_are_plain_strings_at_the_boundary() -> None:
    (reply,) = python("ReturnsStrSubclass").send([stream("<think>a</think>b")])
    assert isinstance(reply, Ok) and reply.deltas is not None
    assert all(type(v) is str for delta in reply.deltas for v in delta.values())
    assert "".join(d["assistant"] for d in reply.deltas) == "b"


@pytest.mark.parametrize("value", ["inf", "nan", "3000000", "-1", "0"])
def test_bad_timeouts_are_a_usage_error(value: str) -> None:
    done = cli("smoke", "--impl", "reference", "--timeout", value)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--timeout" in done.stderr and "Traceback" not in done.stderr


def test_bad_timeouts_are_refused_by_connect_too() -> None:
    with pytest.raises(UsageError, match="--timeout -1"):
        connect(parse_impl("reference"), timeout=-1)


def test_an_unbalanced_quote_in_cmd_is_a_usage_error() -> None:
    done = cli("smoke", "--impl", "cmd:python -c 'print(1)")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "cannot split the command into words (No closing quotation)" in done.stderr


# --- python: specs that new users write --------------------------------------------------------


def test_a_python_module_in_the_current_directory_is_found(tmp_path: Path) -> None:
    (tmp_path / "naive_norm.py").write_text(
        "from conformance.interface import from_function\n"
        "Naive = from_function(lambda content, reasoning: (content, reasoning or ''))\n"
    )
    # The console script, whose sys.path lacks the current directory (`python -m` puts it
    # there), in a process of its own (an import here would outlive the test).
    done = conformance_process(
        "smoke", "--impl", "python:naive_norm:Naive", cwd=tmp_path, script=True
    )
    assert "cannot import" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr


def test_a_module_that_is_nowhere_says_how_to_make_it_importable(tmp_path: Path) -> None:
    # The console script, whose sys.path lacks the current directory (`python -m` puts it
    # there), in a process of its own (an import here would outlive the test).
    done = conformance_process(
        "smoke", "--impl", "python:naive_norm:Naive", cwd=tmp_path, script=True
    )
    assert done.returncode == 2
    assert "It is looked for on sys.path and in the current directory" in done.stderr
    assert "PYTHONPATH" in done.stderr


def test_a_plain_split_function_gets_a_hint_to_from_function() -> None:
    with pytest.raises(ImplementationStartError) as caught:
        python("split")
    message = str(caught.value)
    assert "takes (content), so it is not a factory" in message
    assert "conformance.interface.from_function" in message


def test_a_factory_of_something_else_is_refused_at_start() -> None:
    with pytest.raises(ImplementationStartError, match="has no feed"):
        connect(parse_impl("python:collections:OrderedDict"))
