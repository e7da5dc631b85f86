"""The CI integrations, run locally as written: action.yml's `run:` steps in bash with the
GITHUB_* files pointing at temporary files, the workflow of docs/ci.md on a fresh Git
repository, and the GitLab job of docs/ci.md, each against a normalizer project that is broken
on purpose, in a fresh virtual environment (the slow tier). In the default tier the action's
steps run against a stand-in `conformance` that records its arguments: what reaches the
command, one argument per value however many blanks or quotes a value holds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.helpers import cli

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


@dataclass(frozen=True)
class Job:
    """What GitHub knows of the job running the action: its id, its place in a matrix."""

    id: str = "conformance"
    index: int = 0
    total: int = 1
    matrix: Mapping[str, str] = field(default_factory=dict)


def _evaluate(
    expression: str, inputs: Mapping[str, str], outputs: Mapping[str, dict], job: Job
) -> str:
    """The few expressions action.yml and docs/ci.md use: inputs, the action's path, the job
    and its matrix, the runner, step outputs, hashFiles."""
    known = {
        "github.action_path": str(ROOT),
        "github.job": job.id,
        "strategy.job-index": str(job.index),
        "strategy.job-total": str(job.total),
        "runner.os": "Linux",
    }
    if expression in known:
        return known[expression]
    if expression.startswith("inputs."):
        return inputs[expression.removeprefix("inputs.")]
    if expression.startswith("matrix."):
        return str(job.matrix[expression.removeprefix("matrix.")])
    if expression.startswith("hashFiles("):
        return "0" * 64
    step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
    if step:
        return outputs.get(step.group(1), {}).get(step.group(2), "")
    raise AssertionError(f"action.yml uses an expression this test does not know: {expression}")


def _substitute(
    text: object, inputs: Mapping[str, str], outputs: Mapping[str, dict], job: Job
) -> str:
    return _EXPRESSION.sub(lambda m: _evaluate(m[1], inputs, outputs, job), str(text))


def _condition(condition: str | None, inputs: Mapping[str, str]) -> bool:
    if condition is None or condition == "always()":
        return True
    compare = re.fullmatch(r"inputs\.([\w-]+) (==|!=) '(.*)'", condition)
    assert compare, f"action.yml uses a condition this test does not know: {condition}"
    name, op, value = compare.groups()
    return (inputs[name] == value) == (op == "==")


def _action() -> dict:
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    assert action["runs"]["using"] == "composite"
    return action


@dataclass
class Ran:
    """What the action's steps did: each `run:` step's process and `$GITHUB_OUTPUT` by step
    id, the step summary, and the `uses:` steps with their evaluated `with:`."""

    steps: dict[str, subprocess.CompletedProcess[str]]
    outputs: dict[str, dict]
    summary: Path
    uses: list[dict]

    def used(self, action: str) -> dict | None:
        return next((step for step in self.uses if step["uses"].startswith(action + "@")), None)


def _run_action(
    given: Mapping[str, str],
    venv: Path,
    workspace: Path,
    tmp_path: Path,
    *,
    job: Job = Job(),
    env: Mapping[str, str] | None = None,
    only: set[str] | None = None,
) -> Ran:
    """Run action.yml's steps as GitHub would, in order, until one fails; `only` runs just the
    `run:` steps of those ids (the `uses:` steps are recorded, never run)."""
    action = _action()
    unknown = set(given) - set(action["inputs"])
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given)
    summary = tmp_path / "summary.md"
    summary.touch()
    ran = Ran({}, {}, summary, [])
    for number, step in enumerate(action["runs"]["steps"]):
        if not _condition(step.get("if"), inputs):
            continue
        if "uses" in step:
            with_ = {
                k: _substitute(v, inputs, ran.outputs, job) for k, v in step.get("with", {}).items()
            }
            ran.uses.append({"uses": step["uses"], **with_})
            continue
        name = step.get("id", str(number))
        if only is not None and name not in only:
            continue
        assert step["shell"] == "bash"
        output = tmp_path / f"output-{number}"
        output.write_text("")
        step_env = {
            k: _substitute(v, inputs, ran.outputs, job) for k, v in step.get("env", {}).items()
        }
        # Every input reaches a script through env: the script itself has no expressions.
        assert not _EXPRESSION.search(step["run"]), step["name"]
        github = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=_environment(venv, **github, **(env or {}), **step_env),
            capture_output=True,
            text=True,
            timeout=900,
        )
        ran.steps[name] = result
        lines = output.read_text().splitlines()
        ran.outputs[name] = dict(line.split("=", 1) for line in lines)
        if result.returncode != 0:
            break
    return ran


# In the default tier: the steps with a stand-in `conformance`.

#: Records its arguments, one JSON list a line, and exits with the status FAKE_STATUS gives
#: its subcommand.
FAKE_CONFORMANCE = """\
import json, os, sys
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(json.loads(os.environ.get("FAKE_STATUS", "{}")).get(sys.argv[1], 0))
"""


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    """A stand-in for the job's environment: `python` is this interpreter, `conformance` the
    recorder above."""
    bin_ = tmp_path / "fake" / "bin"
    bin_.mkdir(parents=True)
    python = bin_ / "python"
    # pip takes seconds to start on a loaded machine: its cache directory is made up.
    python.write_text(
        '#!/bin/sh\nif [ "$*" = "-m pip cache dir" ]; then echo "$FAKE_PIP_CACHE"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    script = bin_ / "conformance"
    script.write_text(f"#!{sys.executable}\n{FAKE_CONFORMANCE}")
    for path in (python, script):
        path.chmod(0o755)
    return bin_.parent


def _fake_run(
    given: Mapping[str, str], fake: Path, tmp_path: Path, status: Mapping[str, int] | None = None
) -> tuple[Ran, list[list[str]]]:
    log = tmp_path / "argv.jsonl"
    env = {"FAKE_LOG": str(log), "FAKE_STATUS": json.dumps(status or {})}
    workspace = tmp_path / "repo"
    workspace.mkdir(exist_ok=True)
    ran = _run_action(given, fake, workspace, tmp_path, env=env, only={"run"})
    assert ran.steps["run"].returncode == 0, ran.steps["run"].stderr
    calls = (
        [json.loads(line) for line in log.read_text("utf-8").splitlines()] if log.exists() else []
    )
    return ran, calls


def test_options_given_as_json_reach_the_run_as_one_argument_each(
    fake: Path, tmp_path: Path
) -> None:
    # Before, the action had only `args`, split on spaces: `--options '{"matching":
    # "tolerant"}'` reached the command as `'{"matching":` and `"tolerant"}'`.
    given = {
        "implementations": "  naive=python:naive_norm:Naive\nmine=cmd:./my normalizer --json\n",
        "options": '{"matching": "tolerant"}\n naive={"native_with_tags": "merge"} \n',
        "args": "-k\nsplit and not lone\n--check\nstream",
    }
    ran, calls = _fake_run(given, fake, tmp_path)
    assert calls == [
        [
            "run",
            *(
                "--impl",
                "naive=python:naive_norm:Naive",
                "--impl",
                "mine=cmd:./my normalizer --json",
            ),
            *(
                "--options",
                '{"matching": "tolerant"}',
                "--options",
                'naive={"native_with_tags": "merge"}',
            ),
            *("--report-dir", "conformance-reports"),
            *("-k", "split and not lone", "--check", "stream"),
        ]
    ]
    assert ran.outputs["run"] == {
        "report-dir": "conformance-reports",
        "run-exit-code": "0",
        "fuzz-exit-code": "",
        "exit-code": "0",
    }


def test_expectations_are_optional_and_passed_on_when_given(fake: Path, tmp_path: Path) -> None:
    # Before, the documented `args: --expectations expectations` exited 2 in a repository
    # without that directory; now nothing names it unless the workflow does.
    _, calls = _fake_run({}, fake, tmp_path)
    assert calls == [["run", "--impl", "reference", "--report-dir", "conformance-reports"]]
    (tmp_path / "log").mkdir()
    _, calls = _fake_run({"expectations": "ci/known failures"}, fake, tmp_path / "log")
    assert calls[0][-2:] == ["--expectations", "ci/known failures"]


@pytest.mark.parametrize(
    ("status", "exit_code"),
    [({}, "0"), ({"fuzz": 1}, "1"), ({"run": 1}, "1"), ({"run": 2, "fuzz": 1}, "2")],
)
def test_fuzzing_runs_after_the_run_with_the_same_implementations_and_options(
    fake: Path, tmp_path: Path, status: dict[str, int], exit_code: str
) -> None:
    given = {
        "options": 'mine={"matching": "tolerant"}',
        "fuzz-duration": "30",
        "implementations": "mine=python:m:f",
    }
    ran, calls = _fake_run(given, fake, tmp_path, status)
    shared = ["--impl", "mine=python:m:f", "--options", 'mine={"matching": "tolerant"}']
    assert calls == [
        ["run", *shared, "--report-dir", "conformance-reports"],
        ["fuzz", *shared, "--duration", "30", "--report-dir", "conformance-reports/fuzz"],
    ]
    assert ran.outputs["run"]["exit-code"] == exit_code
    assert ran.outputs["run"]["run-exit-code"] == str(status.get("run", 0))
    assert ran.outputs["run"]["fuzz-exit-code"] == str(status.get("fuzz", 0))


@pytest.mark.parametrize(
    ("given", "job", "name"),
    [
        ({}, Job("conformance"), "conformance-reports-conformance"),
        # Before, every job of a matrix uploaded `conformance-reports`: all but one failed.
        ({}, Job("check", index=2, total=3), "conformance-reports-check-2"),
        (
            {"artifact-name": 'mine: py/3.12 "x"'},
            Job("check", index=1, total=2),
            "mine- py-3.12 -x-",
        ),
    ],
)
def test_the_artifact_is_named_per_job(
    fake: Path, tmp_path: Path, given: dict[str, str], job: Job, name: str
) -> None:
    ran = _run_action(given, fake, tmp_path, tmp_path, job=job, only={"names"})
    assert ran.steps["names"].returncode == 0, ran.steps["names"].stderr
    assert ran.outputs["names"]["artifact-name"] == name
    upload = ran.used("actions/upload-artifact")
    assert upload is not None and upload["name"] == name


def test_the_jobs_python_is_left_alone_and_pips_downloads_are_cached(
    fake: Path, tmp_path: Path
) -> None:
    # Before, python-version defaulted to 3.12: setup-python replaced the job's own Python.
    pip_cache = {"FAKE_PIP_CACHE": "/cache/pip"}
    ran = _run_action({}, fake, tmp_path, tmp_path, only={"names"}, env=pip_cache)
    assert ran.used("actions/setup-python") is None
    cache = ran.used("actions/cache")
    # Before, there was no cache: every job downloaded the suite's dependencies again.
    assert cache is not None
    assert cache["path"] == ran.outputs["names"]["pip-cache"] == "/cache/pip"
    python = ".".join(map(str, sys.version_info[:3]))
    assert cache["key"].startswith(f"conformance-pip-Linux-{python}-")
    given = {"python-version": "3.13", "cache": "false"}
    ran = _run_action(given, fake, tmp_path, tmp_path, only=set())
    setup = ran.used("actions/setup-python")
    assert setup is not None and setup["python-version"] == "3.13"
    assert ran.used("actions/cache") is None


def test_the_summary_holds_the_run_and_the_fuzzing_reports(fake: Path, tmp_path: Path) -> None:
    reports = tmp_path / "conformance-reports"
    (reports / "fuzz").mkdir(parents=True)
    (reports / "report.md").write_text("# Conformance report\n")
    (reports / "fuzz" / "report.md").write_text("# Fuzzing report\n")
    ran = _run_action({}, fake, tmp_path, tmp_path, only={"summary"})
    assert ran.steps["summary"].returncode == 0, ran.steps["summary"].stderr
    assert ran.summary.read_text() == "# Conformance report\n\n# Fuzzing report\n\n"


def test_an_expectations_directory_given_but_missing_is_a_clear_usage_error(
    tmp_path: Path,
) -> None:
    done = cli("run", "--expectations", "expectations", "--id", "nothing", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --expectations expectations: does not exist.")
    assert "Leave the option out" in done.stderr
    (tmp_path / "file").write_text("")
    done = cli("run", "--expectations", "file", cwd=tmp_path)
    assert done.returncode == 2 and "is not a directory" in done.stderr


def test_the_docs_list_every_input_of_the_action_with_its_default() -> None:
    doc = (ROOT / "docs" / "ci.md").read_text("utf-8")
    table = doc[doc.index("| input | default | what |") :].split("\n\n")[0]
    documented = {}
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        default = cells[1].strip("`")
        documented[cells[0].strip("`")] = "" if default == "empty" else default
    action = _action()
    assert documented == {
        name: str(spec.get("default", "")) for name, spec in action["inputs"].items()
    }
    workflow = _docs_workflow()
    step = _docs_action_step(workflow)
    assert set(step["with"]) <= set(action["inputs"])


# The workflow of docs/ci.md.


def _docs_workflow() -> dict:
    doc = (ROOT / "docs" / "ci.md").read_text("utf-8")
    section = doc[doc.index("## GitHub Actions") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    return yaml.safe_load(block.group(1))


def _docs_action_step(workflow: dict) -> dict:
    (job,) = workflow["jobs"].values()
    return next(step for step in job["steps"] if "reasoning-conformance@" in step.get("uses", ""))


@pytest.fixture
def repository(workspace: Path) -> Path:
    """A fresh Git repository holding nothing but the user's normalizer: no expectations/."""
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "-A"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "A normalizer"], cwd=workspace, check=True)
    return workspace


@pytest.mark.slow
def test_the_documented_workflow_runs_on_a_fresh_repository(
    venv: Path, repository: Path, tmp_path: Path
) -> None:
    workflow = _docs_workflow()
    ((job_id, job),) = workflow["jobs"].items()
    matrix = job.get("strategy", {}).get("matrix", {})
    total = 1
    for values in matrix.values():
        total *= len(values)
    # The last job of the matrix: the artifact name shows which.
    here = Job(job_id, index=total - 1, total=total, matrix={k: v[-1] for k, v in matrix.items()})
    ran = None
    for step in job["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            assert (repository / ".git").is_dir()  # the repository is checked out
        elif uses.startswith("actions/setup-python@"):
            pass  # the venv is the job's Python
        elif "reasoning-conformance@" in uses:
            given = {k: _substitute(v, {}, {}, here) for k, v in step["with"].items()}
            # The user's normalizer is the naive one; the rest of the step as documented,
            # options as JSON included, with a shorter fuzzing session.
            assert re.search(r"^\s*mine=python:", given["implementations"], re.M)
            given["implementations"] = re.sub(
                r"mine=python:\S+", "mine=python:naive_norm:Naive", given["implementations"]
            )
            assert json.loads(given["options"].strip().removeprefix("mine="))
            if given.get("fuzz-duration"):
                given["fuzz-duration"] = "1"
            ran = _run_action(given, venv, repository, tmp_path, job=here)
        else:
            raise AssertionError(f"a step this test does not know: {step}")
    assert ran is not None
    assert ran.steps["install"].returncode == 0, ran.steps["install"].stderr[-3000:]
    # Failures of the naive normalizer, not a usage error (exit status 2) as before.
    assert ran.outputs["run"]["run-exit-code"] == "1", ran.steps["run"].stderr[-3000:]
    assert ran.outputs["run"]["exit-code"] == "1"
    results = json.loads((repository / "conformance-reports" / "results.json").read_text("utf-8"))
    mine = next(i for i in results["implementations"] if i["label"] == "mine")
    options = json.loads(given["options"].strip().removeprefix("mine="))
    assert {k: mine["options"][k] for k in options} == options
    if given.get("fuzz-duration"):
        assert ran.outputs["run"]["fuzz-exit-code"] == "1"
        assert (repository / "conformance-reports" / "fuzz" / "results.json").exists()
    assert "## What to fix in `mine`" in ran.summary.read_text("utf-8")
    assert ran.steps["status"].returncode == 1
    upload = ran.used("actions/upload-artifact")
    suffix = f"-{here.index}" if total > 1 else ""
    assert upload is not None and upload["name"] == f"conformance-reports-{job_id}{suffix}"
    assert ran.used("actions/setup-python") is None  # the job's Python, left alone


@pytest.mark.slow
def test_the_github_action_summarises_annotates_and_fails(
    venv: Path, workspace: Path, tmp_path: Path
) -> None:
    given = {"install": ".", "implementations": "naive=python:naive_norm:Naive\n  reference\n"}
    ran = _run_action(given, venv, workspace, tmp_path)
    install, run, report = ran.steps["install"], ran.steps["run"], ran.steps["summary"]
    assert install.returncode == 0, install.stderr[-3000:]
    assert run.returncode == 0, run.stderr[-3000:]
    assert ran.outputs["run"]["exit-code"] == "1"
    # The run's log leads with what to fix, then the summary gets report.md.
    assert "naive: " in run.stdout and "; smallest " in run.stdout and "rerun " in run.stdout
    text = ran.summary.read_text("utf-8")
    assert text.startswith("# Conformance report") and "## What to fix in `naive`" in text
    assert len(text) < 65_536
    annotations = [line for line in report.stdout.splitlines() if line.startswith("::error ")]
    # One per bug signature, the tenth saying how many more there are.
    named = [line for line in annotations if "title=more failures::" not in line]
    assert named and all("title=naive%3A " in line for line in named)
    assert any("delimiter-shown (MUST)" in line for line in annotations)
    assert ran.steps["status"].returncode == 1  # the job fails on the failures
    reports = workspace / "conformance-reports"
    assert list(reports.rglob("junit.xml")) and list(reports.rglob("report.html"))
    artifact = ran.used("actions/upload-artifact")
    assert artifact is not None
    assert artifact["path"] == "conformance-reports"
    assert artifact["name"] == "conformance-reports-conformance"


@pytest.mark.slow
def test_the_github_action_passes_for_the_reference(
    venv: Path, workspace: Path, tmp_path: Path
) -> None:
    ran = _run_action({"fail": "true"}, venv, workspace, tmp_path)
    assert [result.returncode for result in ran.steps.values()] == [0, 0, 0, 0, 0]
    assert ran.outputs["run"]["exit-code"] == "0"
    assert "::error" not in ran.steps["summary"].stdout
    assert "What to fix" not in ran.summary.read_text("utf-8")


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
