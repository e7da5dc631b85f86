"""Fuzzing campaigns beyond one process: workers, plain Hypothesis tests (HypoFuzz),
Atheris, and a Redis example database shared between campaigns. Each finds a planted bug
and brings it back as the same ready-to-commit case file."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conformance.cli.main import main
from conformance.fuzz.campaign import job_seconds
from conformance.model.results import Verdict
from conformance.reports import load_results

ROOT = Path(__file__).resolve().parent.parent
BUGGY = "python:tests.fakes.fuzz_targets:FlushDuplicates"


def fuzz(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(main, ["fuzz", *args])
    return outcome.exit_code, outcome.output


def test_a_time_budget_is_shared_by_the_workers() -> None:
    assert job_seconds(8.0, jobs=8, workers=1) == 1.0
    assert job_seconds(8.0, jobs=8, workers=2) == 2.0
    assert job_seconds(8.0, jobs=1, workers=2) == 8.0
    assert job_seconds(None, jobs=8, workers=2) is None


@pytest.mark.slow
def test_workers_find_shrink_and_write_the_bug(tmp_path: Path) -> None:
    status, output = fuzz(
        "--impl",
        BUGGY,
        "--property",
        "differential",
        "--property",
        "idempotence",
        "--workers",
        "2",
        "--seed",
        "7",
        "--database",
        "none",
        "--report-dir",
        str(tmp_path),
    )
    assert status == 1, output
    run = load_results(tmp_path / "results.json")
    results = run.implementations[0].fuzz
    assert [r.property for r in results] == ["differential", "idempotence"]
    assert results[0].verdict == Verdict.FAIL and results[0].case_file
    assert yaml.safe_load(Path(results[0].case_file).read_text("utf-8"))["cases"]
    assert run.selection["fuzz"]["workers"] == 2


@pytest.mark.slow
def test_the_properties_run_as_plain_hypothesis_tests(tmp_path: Path) -> None:
    """What `hypothesis fuzz -- --pyargs conformance.fuzz.hypothesis_tests` collects."""
    env = {
        **os.environ,
        "CONFORMANCE_IMPL": BUGGY,
        "CONFORMANCE_FOUND_DIR": str(tmp_path / "found"),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--pyargs",
            "conformance.fuzz.hypothesis_tests",
            "-k",
            "differential or whole",
            "--hypothesis-seed=7",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert "test_differential FAILED" in done.stdout or "1 failed" in done.stdout
    found = list((tmp_path / "found").glob("FlushDuplicates-differential-*.yaml"))
    assert len(found) == 1  # only the smallest is kept
    chunks = yaml.safe_load(found[0].read_text("utf-8"))["cases"][0]["chunks"]
    assert sum(len(c["content"] or "") + len(c["reasoning"] or "") for c in chunks) <= 60


@pytest.mark.slow
def test_pytest_and_hypofuzz_collect_one_test_per_property(tmp_path: Path) -> None:
    env = {**os.environ, "CONFORMANCE_IMPL": "reference", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--pyargs",
            "conformance.fuzz.hypothesis_tests",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "test_differential" in done.stdout and "test_egress" in done.stdout


@pytest.mark.slow
def test_atheris_finds_the_bug_and_writes_the_case(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    env = {
        **os.environ,
        "CONFORMANCE_IMPL": BUGGY,
        "CONFORMANCE_PROPERTY": "differential",
        "CONFORMANCE_FOUND_DIR": str(tmp_path / "found"),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "conformance.fuzz.atheris_entry", "-runs=20000", "-seed=7"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0, done.stderr[-2000:]
    assert list((tmp_path / "found").glob("FlushDuplicates-differential-*.yaml"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    pytest.importorskip("redis")
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_campaigns_share_findings_through_redis(redis_url: str, tmp_path: Path) -> None:
    """A second campaign on another 'machine' (another seed, another report directory)
    replays the first one's failure before generating anything."""
    common = ["--impl", BUGGY, "--property", "differential", "--database", redis_url]
    first, output = fuzz(*common, "--seed", "7", "--report-dir", str(tmp_path / "a"))
    assert first == 1, output
    second, output = fuzz(*common, "--seed", "8", "--report-dir", str(tmp_path / "b"))
    assert second == 1, output
    (replayed,) = load_results(tmp_path / "b" / "results.json").implementations[0].fuzz
    assert replayed.verdict == Verdict.FAIL
    assert replayed.examples == 1  # the stored failure, replayed first
