"""The results store: results documents import once each (by content hash), from files or
straight from a session, and merge into one history."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conformance.cli.store_commands import DEFAULT_STORE as CLI_DEFAULT
from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.store.db import DEFAULT_STORE, Store, StoreError, content_hash, corpus_digest

from .helpers import cli, write_results


def make_run(started: str, version: str = "1.0", verdict: Verdict = Verdict.PASS) -> Run:
    info = ImplementationInfo(
        "lib", "lib", version, "python", {"profile": "qwen3", "sections": "one"}, "python:m:C"
    )
    results = [
        CaseResult("AAAA", "a", "blocks", "BLOCK.x", "must", "whole", Verdict.PASS),
        CaseResult("BBBB~one", "b", "blocks", "BLOCK.x", "should", "stream", verdict, reason="r"),
    ]
    return Run("0.1.0", "1.1", started, [ImplementationRun(info, results)], duration=1.0)


def test_a_run_imports_once(tmp_path: Path) -> None:
    run = make_run("2026-01-01T00:00:00+00:00")
    with Store(tmp_path / "s.sqlite") as store:
        first = store.add(run, "a.json")
        again = store.add(Run.from_json(run.to_json()), "b.json")
        assert first.new and not again.new
        assert first.hash == again.hash == content_hash(run)
        assert (first.implementations, first.results) == (1, 2)
        (stored,) = store.runs()
    assert stored.source == "a.json"
    assert stored.run.to_json() == run.to_json()
    assert stored.corpus == corpus_digest(run)


def test_runs_merge_and_come_back_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.add(make_run("2026-03-01T00:00:00+00:00", "1.2"), "late")
        store.add(make_run("2026-01-01T00:00:00+00:00", "1.0"), "early")
    # Another process (another CI job's file) adds to the same store.
    with Store(path) as store:
        store.add(make_run("2026-02-01T00:00:00+00:00", "1.1"), "middle")
        assert [s.source for s in store.runs()] == ["early", "middle", "late"]
        assert store.run(store.runs()[1].hash[:10]).source == "middle"
        with pytest.raises(StoreError, match="no run"):
            store.run("zzzz")
    rows = sqlite3.connect(path).execute(
        "SELECT i.version, i.profile, r.written, r.verdict FROM results r"
        " JOIN implementations i ON i.id = r.implementation WHERE r.\"check\" = 'stream'"
        " ORDER BY i.version"
    )
    assert list(rows) == [
        ("1.0", "qwen3", "BBBB", "PASS"),
        ("1.1", "qwen3", "BBBB", "PASS"),
        ("1.2", "qwen3", "BBBB", "PASS"),
    ]


def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite, just text " * 100)
    with pytest.raises(StoreError, match="not a results store"):
        Store(bad)


def test_store_import_command_is_idempotent(tmp_path: Path) -> None:
    one = write_results(make_run("2026-01-01T00:00:00+00:00"), tmp_path / "one")
    two = write_results(
        make_run("2026-01-02T00:00:00+00:00", verdict=Verdict.SKIP), tmp_path / "two"
    )
    store = tmp_path / "store.sqlite"
    ran = cli("store", "import", one, two, "--store", store)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("imported ") == 2
    ran = cli("store", "import", one, "--store", store)
    assert ran.returncode == 0 and "already held" in ran.stdout
    listed = cli("store", "list", "--store", store)
    assert listed.stdout.count("lib 1.0") == 2
    bad = cli("store", "import", tmp_path / "missing.json", "--store", store)
    assert bad.returncode == 2 and "no such file" in bad.stderr


def test_run_store_imports_the_session(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    ran = cli(
        "run", "--id", "DNTX", "--check", "whole", "--no-growth",
        "--report-dir", tmp_path / "r", "--store", store,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "imported session into" in ran.stdout
    # The results.json the same session wrote is the same run: importing it adds nothing.
    again = cli("store", "import", tmp_path / "r" / "results.json", "--store", store)
    assert "already held" in again.stdout, again.stdout
    with Store(store) as opened:
        (stored,) = opened.runs()
    assert {r.case for r in stored.run.implementations[0].results} == {"DNTX"}


def test_the_default_store_is_one_path() -> None:
    assert CLI_DEFAULT == DEFAULT_STORE
