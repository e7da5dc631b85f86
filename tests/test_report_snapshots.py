"""Report text pinned as files: a change to what a report says shows up as a diff of the
snapshot in review. After a deliberate change, write them again with
`UPDATE_SNAPSHOTS=1 python -m pytest tests/test_report_snapshots.py` and review the diff."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conformance.engine.runner import new_run, run_implementation
from conformance.model.results import Run
from conformance.reports import _json, _junit, _markdown
from conformance.reports._terminal import render_top
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus

SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture(scope="module")
def run() -> Run:
    """A small run that fails: a normalizer applying its regex per chunk, on two cases,
    at a fixed time so that the text depends on the implementation and the code alone."""
    cases = [case for case in bundled_corpus().cases if case.id in ("A3M8", "DNTX")]
    impl = connect(parse_impl("python:tests.fakes.broken_impls:PerChunkRegex"))
    results = run_implementation(impl, cases, checks=["whole", "stream", "chars"])
    results.start_seconds = 0.25  # as the session measures it, fixed for the snapshot
    done = new_run([results], {}, started=datetime(2026, 1, 1, tzinfo=UTC))
    done.duration = 0.0
    return done


RENDERERS = {
    "report.md": _markdown.render,
    "junit.xml": _junit.render,
    "results.json": _json.render,
    "terminal.txt": lambda run: render_top(run, report="reports/run/report.md"),
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_report_text_is_as_pinned(run: Run, name: str) -> None:
    text = RENDERERS[name](run)
    snapshot = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(text, "utf-8")
    assert snapshot.exists(), f"no snapshot {snapshot}: write it with UPDATE_SNAPSHOTS=1"
    assert text == snapshot.read_text("utf-8"), f"{name} differs from {snapshot}"
