"""Nothing an implementation declares or sends makes the harness unbounded: declared
grammars are limited in size and compile in time linear in it, and error and `unsupported`
messages and implementation metadata are clipped with a digest before they are kept."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time

import pytest

from conformance.errors import ImplementationStartError
from conformance.model.grammar import (
    MAX_DELIMITER_LENGTH,
    MAX_PAIRS,
    _anchor,
    _can_overlap,
)
from conformance.model.options import Options, OptionsError
from conformance.model.requests import Error, Unsupported, WholeRequest
from conformance.model.results import ImplementationInfo
from conformance.transport.codec import ClientCodec
from conformance.transport.spec import ImplementationSpec, effective_options

from .helpers import ROOT, cli, process_environment

FAKE = f"cmd:{sys.executable} tests/fakes/fake_impl.py"


def pairs(count: int) -> list[dict[str, str]]:
    return [{"open": f"<t{i}>", "close": f"</t{i}>"} for i in range(count)]


@pytest.mark.slow
def test_a_hello_declaring_20000_delimiter_pairs_is_refused_in_under_a_second(tmp_path):
    # The harness's side of it, from the hello line to the refusal: judged nothing in 120 s.
    line = json.dumps(
        {
            "protocol": 1,
            "implementation": {"name": "many", "version": "1", "language": "python"},
            "options": {"delimiters": pairs(20_000)},
        }
    ).encode()
    started = time.process_time()  # CPU time: the clock of a loaded machine runs slow
    hello = ClientCodec().hello_reply(line)
    with pytest.raises(ImplementationStartError, match=f"at most {MAX_PAIRS}"):
        effective_options(ImplementationSpec("many", "cmd:many"), hello["options"])
    assert time.process_time() - started < 1.0
    # And the whole command, a process started included, ends at once with one line.
    ran = cli("run", "--impl", f"many={FAKE} delimiters 20000", "--report-dir", tmp_path)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"has 20000 pairs; at most {MAX_PAIRS} are allowed" in ran.stderr


def test_declared_grammars_are_limited_in_pairs_and_delimiter_length():
    Options.from_mapping({"delimiters": pairs(MAX_PAIRS)})
    with pytest.raises(OptionsError, match=f"at most {MAX_PAIRS}"):
        Options.from_mapping({"delimiters": pairs(MAX_PAIRS + 1)})
    long = "<" + "t" * MAX_DELIMITER_LENGTH + ">"
    with pytest.raises(OptionsError, match=f"at most {MAX_DELIMITER_LENGTH}"):
        Options.from_mapping({"delimiters": [{"open": long, "close": "</t>"}]})


def test_planning_a_grammar_is_linear_in_its_size():
    # 4,000 pairs took 53 s when every delimiter was compared with every other, and take
    # 0.09 s now. CPU time, not the clock: on a loaded machine the clock ran 12 times slower.
    delimiters = [d for pair in pairs(4000) for d in pair.values()]
    started = time.process_time()
    assert not _can_overlap(delimiters)
    assert _anchor(delimiters) is not None
    assert time.process_time() - started < 1.0


def test_overlap_is_still_found():
    assert _can_overlap(["<think>", "</think>", "k>x"])  # a suffix is a prefix of another
    assert _can_overlap(["<a>", "</a>", "x<a>y"])  # one contains another
    assert not _can_overlap(["<think>", "</think>"])


@pytest.mark.parametrize("key", ["error", "unsupported"])
def test_error_and_unsupported_messages_are_clipped_with_a_digest(key: str):
    message = "m" * 1_000_000
    line = json.dumps({"id": "1", key: message}).encode()
    reply = ClientCodec().reply(line, WholeRequest("x", None), "1")
    assert isinstance(reply, Error | Unsupported)
    assert len(reply.message) < 2_500
    assert hashlib.sha256(message.encode()).hexdigest() in reply.message
    assert "1000000 characters" in reply.message


def test_failures_made_anywhere_are_clipped():
    assert len(Error("e" * 10_000_000).message) < 2_500
    assert len(Unsupported("u" * 10_000_000).message) < 2_500
    assert Error("short").message == "short"


def test_implementation_metadata_is_clipped_with_a_digest():
    name = "n" * 1_000_000
    info = ImplementationInfo("label", name, name, "python", {}, "spec")
    assert len(info.name) < 500 and len(info.version) < 500
    assert hashlib.sha256(name.encode()).hexdigest() in info.name


@pytest.mark.slow
def test_a_huge_implementation_name_makes_small_reports(tmp_path):
    ran = cli(
        "run",
        "--impl",
        f"big={FAKE} huge-name 5000000",
        "--id",
        "DNTX",
        "--no-growth",
        "--report-dir",
        tmp_path,
    )
    assert ran.returncode == 1, ran.stderr  # the echo fake fails the case: no crash
    assert sum(path.stat().st_size for path in tmp_path.iterdir()) < 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["huge-error", "huge-unsupported"])
def test_100_mb_messages_leave_memory_under_500_mb(mode: str, tmp_path):
    # The peak of this process only: the fake's own memory (it builds the 100 MB lines) is
    # not the harness's. VmHWM, the peak of this process's own memory: getrusage's maxrss
    # also counts the memory of the process it was started from (vfork, then exec), here a
    # test worker that may hold a gigabyte of the adapters' libraries.
    program = (
        "import atexit, re, sys\n"
        "def peak():\n"
        "    status = open('/proc/self/status').read()\n"
        "    print('maxrss', re.search(r'VmHWM:\\s*(\\d+)', status)[1], file=sys.stderr)\n"
        "atexit.register(peak)\n"
        "from conformance.cli.main import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            program,
            "run",
            "--impl",
            f"{FAKE} {mode} 100000000",
            "-k",
            "DNTX or FHBY or C44E or F56Z or CDSA or ANV9",
            "--check",
            "whole",
            "--no-growth",
            "--timeout",
            "120",
            "--allow-unjudged",
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=process_environment(),
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    peak_kb = int(done.stderr.rsplit("maxrss", 1)[1].split()[0])
    assert peak_kb < 500_000, peak_kb
    assert done.stdout.count("ERROR") + done.stdout.count("SKIP") >= 1, done.stdout
    assert (tmp_path / "results.json").stat().st_size < 1_000_000
