"""The CI integrations, run locally as written: action.yml's `run:` steps in bash with the
GITHUB_* files pointing at temporary files, and the GitLab job of docs/ci.md, each against a
normalizer project that is broken on purpose, in a fresh virtual environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

#: A normalizer written from docs/implementations.md that finds delimiters only within one
#: chunk, packaged the way a user's repository would be.
NAIVE = """
import re

DELIMITER = re.compile(r"</?think(?:ing)?>")


class Naive:
    def __init__(self):
        self.inside = False

    def feed(self, chunk):
        out = {"assistant": "", "thinking": chunk.get("reasoning") or ""}
        text, pos = chunk.get("content") or "", 0
        for match in DELIMITER.finditer(text):
            out["thinking" if self.inside else "assistant"] += text[pos : match.start()]
            self.inside = not match.group().startswith("</")
            pos = match.end()
        out["thinking" if self.inside else "assistant"] += text[pos:]
        return out

    def finish(self):
        return {"assistant": "", "thinking": ""}
"""
PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "naive-norm"
version = "0.1"
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ci") / "venv"
    subprocess.run([sys.executable, "-m", "venv", path], check=True, timeout=300)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A user's repository: a package holding the naive normalizer."""
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "naive_norm").mkdir()
    (tmp_path / "naive_norm" / "__init__.py").write_text(NAIVE)
    return tmp_path


def _environment(venv: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    return {**env, **extra}


# --- GitHub Actions --------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _evaluate(expression: str, inputs: Mapping[str, str], outputs: Mapping[str, dict]) -> str:
    """The few expressions action.yml uses: inputs, the action's path, step outputs."""
    if expression.startswith("inputs."):
        return inputs[expression.removeprefix("inputs.")]
    if expression == "github.action_path":
        return str(ROOT)
    step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
    if step:
        return outputs.get(step.group(1), {}).get(step.group(2), "")
    raise AssertionError(f"action.yml uses an expression this test does not know: {expression}")


def _condition(condition: str | None, inputs: Mapping[str, str]) -> bool:
    if condition is None or condition == "always()":
        return True
    compare = re.fullmatch(r"inputs\.([\w-]+) (==|!=) '(.*)'", condition)
    assert compare, f"action.yml uses a condition this test does not know: {condition}"
    name, op, value = compare.groups()
    return (inputs[name] == value) == (op == "==")


def _run_action(
    given: Mapping[str, str], venv: Path, workspace: Path, tmp_path: Path
) -> tuple[list[subprocess.CompletedProcess[str]], dict[str, dict], Path, list[dict]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    assert action["runs"]["using"] == "composite"
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given)
    summary = tmp_path / "summary.md"
    summary.touch()
    outputs: dict[str, dict] = {}
    done, uses = [], []
    for number, step in enumerate(action["runs"]["steps"]):
        if not _condition(step.get("if"), inputs):
            continue
        if "uses" in step:
            with_ = {k: _EXPRESSION.sub(lambda m: _evaluate(m[1], inputs, outputs), str(v))
                     for k, v in step.get("with", {}).items()}  # fmt: skip
            uses.append({"uses": step["uses"], **with_})
            continue
        assert step["shell"] == "bash"
        output = tmp_path / f"output-{number}"
        output.touch()
        env = {
            name: _EXPRESSION.sub(lambda m: _evaluate(m[1], inputs, outputs), str(value))
            for name, value in step.get("env", {}).items()
        }
        # Every input reaches a script through env: the script itself has no expressions.
        assert not _EXPRESSION.search(step["run"]), step["name"]
        github = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=_environment(venv, **github, **env),
            capture_output=True,
            text=True,
            timeout=900,
        )
        done.append(result)
        lines = output.read_text().splitlines()
        outputs[step.get("id", str(number))] = dict(line.split("=", 1) for line in lines)
        if result.returncode != 0:
            break
    return done, outputs, summary, uses


@pytest.mark.slow
def test_the_github_action_summarises_annotates_and_fails(
    venv: Path, workspace: Path, tmp_path: Path
) -> None:
    given = {"install": ".", "implementations": "naive=python:naive_norm:Naive\n  reference\n"}
    done, outputs, summary, uses = _run_action(given, venv, workspace, tmp_path)
    install, run, report, final = done
    assert install.returncode == 0, install.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    assert outputs["run"]["exit-code"] == "1"
    # The run's log leads with what to fix, then the summary gets report.md.
    assert "naive: " in run.stdout and "smallest: " in run.stdout
    text = summary.read_text("utf-8")
    assert text.startswith("# Conformance report") and "## What to fix in `naive`" in text
    assert len(text) < 65_536
    annotations = [line for line in report.stdout.splitlines() if line.startswith("::error ")]
    assert annotations and all("title=naive%3A " in line for line in annotations)
    assert any("delimiter-shown (MUST)" in line for line in annotations)
    assert final.returncode == 1  # the job fails on the failures
    reports = workspace / "conformance-reports"
    assert list(reports.rglob("junit.xml")) and list(reports.rglob("report.html"))
    artifact = next(step for step in uses if step["uses"].startswith("actions/upload-artifact"))
    assert artifact["path"] == "conformance-reports" and artifact["name"] == "conformance-reports"


@pytest.mark.slow
def test_the_github_action_passes_for_the_reference(
    venv: Path, workspace: Path, tmp_path: Path
) -> None:
    done, outputs, summary, _ = _run_action({"fail": "true"}, venv, workspace, tmp_path)
    assert [result.returncode for result in done] == [0, 0, 0, 0]
    assert outputs["run"]["exit-code"] == "0"
    assert "::error" not in done[2].stdout
    assert "What to fix" not in summary.read_text("utf-8")


# --- GitLab CI -------------------------------------------------------------------------------


def _gitlab_job() -> dict:
    doc = (ROOT / "docs" / "ci.md").read_text("utf-8")
    section = doc[doc.index("## GitLab CI") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    return yaml.safe_load(block.group(1))["conformance"]


@pytest.mark.slow
def test_the_gitlab_job_of_the_docs_writes_its_junit_report(venv: Path, workspace: Path) -> None:
    job = _gitlab_job()
    variables = {
        **job["variables"],
        # What a project sets: where the suite comes from, and its normalizer.
        "CONFORMANCE_SOURCE": str(ROOT),
        "IMPL": "naive=python:naive_norm:Naive",
    }
    script = "\n".join(job["script"])
    done = subprocess.run(
        ["bash", "-e", "-c", textwrap.dedent(script)],
        cwd=workspace,
        env=_environment(venv, **variables),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    junit = workspace / job["artifacts"]["reports"]["junit"]
    suites = ET.parse(junit).getroot()
    assert int(suites.get("failures", "0")) > 0 or any(
        int(suite.get("failures", "0")) > 0 for suite in suites.iter("testsuite")
    )
    assert job["artifacts"]["when"] == "always"
    for path in job["artifacts"]["paths"]:
        assert (workspace / path / "report.md").exists() or list((workspace / path).rglob("*.md"))
