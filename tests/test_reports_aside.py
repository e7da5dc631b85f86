"""report.html written in a forked child beside the other reports (reports/_aside.py): only
where a fork is safe and pays, the same page as written here, and never lost when the child
fails. The forks happen in a fresh interpreter: pytest's own process has threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.reports import write_reports
from conformance.reports._aside import LARGE, forkable, write_aside

linux = pytest.mark.skipif(sys.platform != "linux", reason="the child is forked on Linux only")


def run_script(source: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,  # so that `tests` imports
    )


def test_no_child_for_a_small_run_or_beside_another_thread() -> None:
    assert not forkable(LARGE - 1)
    started = threading.Event()
    stop = threading.Event()

    def idle() -> None:
        started.set()
        stop.wait()

    thread = threading.Thread(target=idle)
    thread.start()
    started.wait()
    try:
        assert not forkable(LARGE)
    finally:
        stop.set()
        thread.join()


def test_without_a_child_the_report_is_written_when_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    wait = write_aside(path, lambda: "<p>page</p>", fork=False)
    assert not path.exists()
    wait()
    assert path.read_text("utf-8") == "<p>page</p>"


@linux
def test_a_child_writes_the_report_while_this_process_goes_on(tmp_path: Path) -> None:
    done = run_script(
        """
        import os, sys
        from pathlib import Path
        from conformance.reports._aside import write_aside
        directory = Path(sys.argv[1])
        parent = os.getpid()
        wait = write_aside(directory / "page", lambda: f"written by {os.getpid()}", fork=True)
        (directory / "other").write_text("meanwhile")
        wait()
        print(parent)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    written_by = (tmp_path / "page").read_text("utf-8").split()[-1]
    assert written_by != done.stdout.strip()  # a child wrote it
    assert (tmp_path / "other").read_text("utf-8") == "meanwhile"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@linux
def test_a_child_that_fails_leaves_the_report_to_this_process(tmp_path: Path) -> None:
    done = run_script(
        """
        import os, sys
        from pathlib import Path
        from conformance.reports._aside import write_aside
        parent = os.getpid()

        def render():
            if os.getpid() != parent:
                raise MemoryError("the child ran out")
            return "written here"

        write_aside(Path(sys.argv[1]) / "page", render, fork=True)()
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page").read_text("utf-8") == "written here"


@pytest.mark.slow
@linux
def test_a_large_matrix_writes_the_same_reports_with_the_child(tmp_path: Path) -> None:
    """The four reports of a run large enough for the child, written by `write_reports` in a
    fresh interpreter (a child) and here in pytest's threaded process (none), are the same."""
    done = run_script(
        """
        import sys
        from pathlib import Path
        from conformance.reports import write_reports
        from conformance.reports._aside import forkable
        from tests.test_reports_aside import large_run
        run = large_run()
        assert forkable(sum(len(i.results) for i in run.implementations))
        write_reports(run, Path(sys.argv[1]) / "child")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    write_reports(large_run(), tmp_path / "here")
    for name in ("results.json", "report.md", "report.html", "junit.xml"):
        assert (tmp_path / "child" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()


def large_run() -> Run:
    """A run of LARGE results, one in seven a failure with its input and channels."""
    results = []
    for n in range(LARGE):
        failing = n % 7 == 0
        results.append(
            CaseResult(
                f"C{n:05d}",
                "slug",
                "category",
                "PLAIN.text",
                "must",
                "stream",
                Verdict.FAIL if failing else Verdict.PASS,
                reason="the answer holds the tag" if failing else "",
                chunks=[{"content": "a<think>b", "reasoning": None}] if failing else None,
                expected={"assistant": "a", "thinking": "b"} if failing else None,
                actual={"assistant": "a<think>b", "thinking": ""} if failing else None,
            )
        )
    info = ImplementationInfo("impl", "impl", "1.0", "python", {}, "python:impl:Impl")
    return Run("0.1.0", "1.1", "2026-01-01T00:00:00+00:00", [ImplementationRun(info, results)])
