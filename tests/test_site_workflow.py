"""The results site's workflow (.github/workflows/site.yml), its `run:` steps run locally in
bash as written, with the GITHUB_* files pointing at temporary files: the publishing job's
steps on results of two dates (the store of the "published" site served on 127.0.0.1), and,
in the slow tier, a judging job's matrix run. The `uses:` steps and the install steps are
GitHub's and the runner's: not run here."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.reports import load_results, write_reports
from conformance.store.db import Store

from .helpers import ROOT
from .test_site import run

WORKFLOW = ROOT / ".github" / "workflows" / "site.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text("utf-8"))


def _evaluate(expression: str, known: Mapping[str, str]) -> str:
    if expression in known:
        return known[expression]
    fallback = re.fullmatch(r"inputs\.([\w-]+) \|\| '(\w+)'", expression)
    if fallback:
        return known.get(f"inputs.{fallback[1]}") or fallback[2]
    raise AssertionError(f"site.yml uses an expression this test does not know: {expression}")


def run_steps(
    job: str,
    known: Mapping[str, str],
    workspace: Path,
    tmp_path: Path,
    *,
    path: str = "",
    skip: tuple[str, ...] = ("install",),
) -> dict[str, subprocess.CompletedProcess[str]]:
    """The job's `run:` steps in order until one fails (those of `skip` left out)."""
    spec = workflow()
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    summary = tmp_path / "summary.md"
    summary.touch()
    top = {k: _EXPRESSION.sub(lambda m: _evaluate(m[1], known), v) for k, v in spec["env"].items()}
    for step in spec["jobs"][job]["steps"]:
        if "run" not in step or step.get("id") in skip:
            continue
        # Every value reaches a script through env: the script itself has no expressions.
        assert not _EXPRESSION.search(step["run"]), step["id"]
        env = {
            k: _EXPRESSION.sub(lambda m: _evaluate(m[1], known), str(v))
            for k, v in step.get("env", {}).items()
        }
        output = tmp_path / f"output-{step['id']}"
        output.touch()
        environ = {
            **os.environ,
            "PATH": os.pathsep.join(p for p in (path, str(Path(sys.executable).parent)) if p)
            + os.pathsep
            + os.environ["PATH"],
            "PYTHONPATH": str(ROOT),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            **top,
            **env,
        }
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=environ,
            capture_output=True,
            text=True,
            timeout=900,
        )
        ran[step["id"]] = result
        if result.returncode != 0:
            break
    return ran


@pytest.fixture
def published(tmp_path: Path) -> Iterator[str]:
    """The site as published last time: only its store matters here (version 1.1 of `lib`)."""
    root = tmp_path / "published"
    (root / "data").mkdir(parents=True)
    with Store(root / "data" / "results.sqlite") as store:
        store.add(run("2026-02-01T00:00:00+00:00", "1.1", False), "last week")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def workspace_with_results(tmp_path: Path, broken: bool) -> Path:
    """What download-artifact leaves: one directory per judging job."""
    workspace = tmp_path / "workspace"
    write_reports(
        run("2026-03-01T00:00:00+00:00", "1.2", broken), workspace / "downloaded" / "results-lib"
    )
    write_reports(
        run("2026-03-01T00:00:00+00:00", "1.2", False, "deepseek_r1"),
        workspace / "downloaded" / "results-other",
    )
    return workspace


def stand_in_gh(tmp_path: Path) -> Path:
    """A `gh` that records its arguments (the issue is GitHub's to open)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/gh-args"\n')
    gh.chmod(0o755)
    return bin_dir


def known(site_url: str, on_regression: str = "") -> dict[str, str]:
    return {
        "vars.SITE_URL || format('https://{0}.github.io/{1}', github.repository_owner, "
        "github.event.repository.name)": site_url,
        "inputs.on-regression": on_regression,
        "github.token": "token",
        "github.repository": "owner/repo",
    }


@pytest.mark.slow
@pytest.mark.parametrize("on_regression", ["", "fail", "nothing"])
def test_publishing_merges_the_history_builds_and_alerts(
    published: str, tmp_path: Path, on_regression: str
) -> None:
    workspace = workspace_with_results(tmp_path, broken=True)
    bin_dir = stand_in_gh(tmp_path)
    ran = run_steps(
        "publish", known(published, on_regression), workspace, tmp_path, path=str(bin_dir)
    )
    assert list(ran) == ["previous", "merge", "build", "alert"]
    for step in ("previous", "merge", "build"):
        assert ran[step].returncode == 0, ran[step].stderr
    assert ran["merge"].stdout.count("imported ") == 2
    site = workspace / "site-out"
    # The history: last week's store and this run's results.
    with Store(site / "data" / "results.sqlite") as store:
        assert store.runs()[0].source == "last week"
        assert len(store.runs()) == 3
    page = (site / "impl" / "lib.html").read_text("utf-8")
    assert f"{published}/badges/lib.json" in page.replace("%3A", ":")
    summary = (tmp_path / "summary.md").read_text()
    assert "the published store" in summary and "`lib`: 1 results regressed" in summary
    if on_regression == "fail":
        assert ran["alert"].returncode == 1
    elif on_regression == "nothing":
        assert ran["alert"].returncode == 0 and not (bin_dir / "gh-args").exists()
    else:  # a scheduled run: the default, an issue
        assert ran["alert"].returncode == 0, ran["alert"].stderr
        args = (bin_dir / "gh-args").read_text().splitlines()
        assert args[:3] == ["issue", "create", "--title"]
        assert args[-1] == "site-out/regressions.md"


@pytest.mark.slow
def test_no_regression_no_alert(published: str, tmp_path: Path) -> None:
    workspace = workspace_with_results(tmp_path, broken=False)
    bin_dir = stand_in_gh(tmp_path)
    ran = run_steps("publish", known(published, "fail"), workspace, tmp_path, path=str(bin_dir))
    assert ran["alert"].returncode == 0
    assert "No implementation regressed." in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_a_first_run_starts_a_store(tmp_path: Path) -> None:
    workspace = workspace_with_results(tmp_path, broken=False)
    ran = run_steps("publish", known("http://127.0.0.1:9"), workspace, tmp_path)
    assert ran["build"].returncode == 0, ran["build"].stderr
    assert "none published yet" in (tmp_path / "summary.md").read_text()


def test_every_library_of_the_matrix_is_an_adapter() -> None:
    from conformance.adapters import ADAPTERS

    labels = {adapter.label for adapter in ADAPTERS}
    judged = [
        label
        for entry in workflow()["jobs"]["judge"]["strategy"]["matrix"]["include"]
        for label in entry["adapters"].split()
    ]
    assert set(judged) <= labels
    assert len(judged) == len(set(judged))


@pytest.mark.slow
def test_a_judging_job_runs_the_matrix(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    matrix = {"matrix.adapters": "pydantic-ai", "matrix.install": ""}
    ran = run_steps("judge", {**known("http://127.0.0.1:9"), **matrix}, workspace, tmp_path)
    assert ran["judge"].returncode == 0, ran["judge"].stderr[-3000:]
    with Store(tmp_path / "s.sqlite") as store:
        imported = store.add(load_results(workspace / "results" / "results.json"), "job")
    assert imported.implementations == 2
