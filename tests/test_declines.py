"""No green by declining: `unsupported` counts only for an operation an implementation lacks
as a whole, and a run that judged too little of what applied to it fails, in every report.

The implementations are in tests/fakes/decliners.py (protocol programs and `python:` ones)
and tests/fakes/http_clients.py (a `replay` client)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.model.requests import Error, Ok, Unsupported
from conformance.model.results import ImplementationInfo, ImplementationRun, Run
from conformance.reports import _junit

from .helpers import cli, plugin_session

ROOT = Path(__file__).resolve().parent.parent
DECLINERS = ROOT / "tests" / "fakes" / "decliners.py"
#: The words of a check declined after others were answered (engine/declines.py).
DECLINED = "declined after answering others"
#: A category with both stream and whole cases the per-chunk expression gets right and wrong.
SPLIT = ("--category", "split-delimiters", "--no-growth")


def decliner(mode: str) -> str:
    return f"{mode}=cmd:{sys.executable} {DECLINERS} {mode}"


def results(report_dir: Path) -> dict:
    return json.loads((report_dir / "results.json").read_text())["implementations"][0]


def test_the_first_reply_to_an_operation_decides_whether_it_is_implemented() -> None:
    from conformance.engine.declines import CONTRADICTED, Declines

    declines = Declines()
    assert isinstance(declines.settle("stream", Ok(deltas=[])), Ok)
    declined = declines.settle("stream", Unsupported("hard input"))
    assert isinstance(declined, Error) and DECLINED in declined.reason
    assert "hard input" in declined.reason and "docs/PROTOCOL.md" in declined.reason
    # Lacking an operation as a whole is fine, however often it is asked for.
    assert isinstance(declines.settle("whole", Unsupported("no whole")), Unsupported)
    assert isinstance(declines.settle("whole", Unsupported("no whole")), Unsupported)
    answered = declines.settle("whole", Ok(channels={}))
    assert isinstance(answered, Error) and CONTRADICTED in answered.reason


@pytest.mark.slow
def test_a_decliner_of_what_it_gets_wrong_fails_the_run(tmp_path: Path) -> None:
    """Was: PASS and SKIP only, a check mark, exit 0."""
    ran = cli("run", "--impl", decliner("declines-wrong"), *SPLIT, "--report-dir", tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    summary = results(tmp_path)["summary"]
    assert summary["ERROR"] > 0 and summary["PASS"] > 0
    assert DECLINED in ran.stdout + ran.stderr
    assert "applicable checks" in ran.stderr and "declined after answering others" in ran.stderr
    assert "declines-inputs" in ran.stdout
    report = (tmp_path / "report.md").read_text()
    assert "✅" not in report and "❌ `declines-wrong`" in report
    assert "**Judged too little:**" in report


def test_answering_one_request_and_declining_the_rest_fails_the_run(tmp_path: Path) -> None:
    """Was: PASS 1, SKIP 2675, exit 0."""
    ran = cli("run", "--impl", decliner("answers-one"), *SPLIT, "--report-dir", tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    entry = results(tmp_path)
    assert entry["summary"]["PASS"] == 1
    assert entry["unjudged"].startswith("answers-one judged 1 of ")
    assert "ERROR, declined after answering others" in entry["unjudged"]
    row = next(line for line in ran.stdout.splitlines() if line.startswith("answers-one"))
    assert row.split()[-1] == "UNJUDGED"
    suite = ET.parse(tmp_path / "junit.xml").getroot()
    judged = suite.find(".//testcase[@name='judged']/failure")
    assert judged is not None and "judged 1 of" in judged.get("message", "")


def test_declining_some_and_failing_others_shows_both(tmp_path: Path) -> None:
    ran = cli("run", "--impl", decliner("declines-some"), *SPLIT, "--report-dir", tmp_path)
    assert ran.returncode == 1
    found = results(tmp_path)["results"]
    assert any(r["verdict"] == "FAIL" for r in found)
    declined = [r for r in found if r["verdict"] == "ERROR" and DECLINED in r["reason"]]
    assert declined and all("thinking" in json.dumps(r["chunks"]) for r in declined)


@pytest.mark.slow
@pytest.mark.parametrize(
    "spec",
    [
        f"cmd:{sys.executable} {DECLINERS} no-ops",
        "python:tests.fakes.decliners:NoOps",
        pytest.param("python-isolated:tests.fakes.decliners:NoOps", marks=pytest.mark.slow),
    ],
)
def test_lacking_an_operation_as_a_whole_stays_green(spec: str, tmp_path: Path) -> None:
    """Right, without render and egress: their cases are SKIP and do not count against the
    judged share, even when it asks for nearly everything."""
    args = ("--category", "render", "--category", "egress", "--category", "split-delimiters")
    ran = cli("run", "--impl", spec, *args, "--min-judged", "99", "--report-dir", tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found = results(tmp_path)["results"]
    ops = [r for r in found if r["category"] in ("render", "egress")]
    assert ops and all(r["verdict"] == "SKIP" for r in ops)
    assert "✅" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    "kind", ["python", pytest.param("python-isolated", marks=pytest.mark.slow)]
)
def test_a_python_implementation_that_drops_an_op_after_answering_it_is_an_error(
    kind: str, tmp_path: Path
) -> None:
    """A `python:` implementation declines an op by lacking its method: the same rule."""
    from tests.fakes.decliners import RendersOnce

    RendersOnce.rendered = False  # in this process, for `python:`
    spec = f"{kind}:tests.fakes.decliners:RendersOnce"
    ran = cli("run", "--impl", spec, "--category", "render", "--report-dir", tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    found = results(tmp_path)["results"]
    verdicts = [r["verdict"] for r in found]
    assert "PASS" in verdicts and "ERROR" in verdicts
    assert not any(r["reason"].startswith("unsupported") for r in found if "reason" in r)


@pytest.mark.slow
def test_the_minimum_share_is_a_flag(tmp_path: Path) -> None:
    """The same decliner is accepted when the run asks for no judging at all."""
    args = ("run", "--impl", decliner("declines-some"), *SPLIT, "--report-dir", tmp_path)
    strict = cli(*args, "--min-judged", "100")
    assert "under the minimum of 100%" in strict.stderr
    lenient = cli(*args, "--min-judged", "0")
    assert "under the minimum" not in lenient.stderr


def test_a_run_that_judged_nothing_says_so_in_every_report(tmp_path: Path) -> None:
    """Was: junit.xml with no failure, the terminal row `ok`, report.md "0 problems"."""
    fake = f"cmd:{sys.executable} {ROOT / 'tests' / 'fakes' / 'fake_impl.py'} unsupported"
    ran = cli("run", "--impl", f"x={fake}", "--id", "DNTX", "--report-dir", tmp_path)
    assert ran.returncode == 1
    row = next(line for line in ran.stdout.splitlines() if line.startswith("x "))
    assert not row.endswith("ok")
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert int(root.get("failures", "0")) + int(root.get("errors", "0")) >= 1
    report = (tmp_path / "report.md").read_text()
    assert "0 problems" not in report and "✅" not in report
    assert 'class="not-ok"' in (tmp_path / "report.html").read_text()


def test_junit_names_an_interrupted_run() -> None:
    """Was: tests="0" failures="0" and nothing naming the stop."""
    info = ImplementationInfo("mine", "mine", "1", "python", {}, "python:mine:M")
    run = Run("h", "s", "2026-01-01T00:00:00+00:00", [ImplementationRun(info, not_run=42)])
    run.stopped = "interrupted by SIGTERM"
    root = ET.fromstring(_junit.render(run))
    assert root.get("errors") == "1"
    error = root.find(".//testcase[@name='incomplete']/error")
    assert error is not None and "interrupted by SIGTERM; 42 checks not run" in error.get(
        "message", ""
    )
    # A stop after every check ran still names itself.
    run.implementations = [ImplementationRun(info)]
    root = ET.fromstring(_junit.render(run))
    error = root.find(".//testsuite[@name='conformance']/testcase/error")
    assert error is not None and "INCOMPLETE: interrupted by SIGTERM" in error.get("message", "")


def test_skips_do_not_count_against_the_share_but_errors_do() -> None:
    from dataclasses import replace

    from conformance.engine.coverage import coverage, unjudged_problem
    from conformance.model.results import CaseResult, Verdict

    base = CaseResult("ABCD", "slug", "split", "t", "must", "stream", Verdict.PASS)
    info = ImplementationInfo("mine", "mine", "1", "python", {}, "python:mine:M")
    judged = [base] * 9
    skipped = [replace(base, verdict=Verdict.SKIP, reason="unsupported: no whole")] * 50
    run = ImplementationRun(info, [*judged, *skipped])
    assert unjudged_problem(run, 90) is None
    run.results.append(replace(base, verdict=Verdict.ERROR, reason=f"x: {DECLINED}: ..."))
    seen = coverage(run)
    assert (seen.applicable, seen.judged, seen.percent) == (10, 9, 90.0)
    assert unjudged_problem(run, 90) is None
    run.results.append(replace(base, verdict=Verdict.TIMEOUT, reason="no reply"))
    problem = unjudged_problem(run, 90)
    assert problem is not None and "judged 9 of 11 applicable checks (81.8%" in problem
    assert f"1 ERROR, {DECLINED}" in problem and "1 TIMEOUT" in problem


def test_fuzzing_a_stream_only_implementation_skips_the_whole_property(tmp_path: Path) -> None:
    """Was: the `whole` property was an ERROR for an implementation without `whole`."""
    spec = f"cmd:{sys.executable} {DECLINERS} stream-only"
    ran = cli(
        "fuzz",
        "--impl",
        spec,
        "--property",
        "differential",
        "--property",
        "whole",
        "--max-examples",
        "20",
        "--database",
        "none",
        "--report-dir",
        tmp_path,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    verdicts = {r["property"]: r["verdict"] for r in results(tmp_path)["fuzz"]}
    assert verdicts == {"differential": "PASS", "whole": "SKIP"}


def test_fuzzing_an_implementation_that_lacks_everything_judges_nothing(tmp_path: Path) -> None:
    spec = f"cmd:{sys.executable} {DECLINERS} stream-only"
    args = ("fuzz", "--impl", spec, "--property", "whole", "--database", "none")
    ran = cli(*args, "--max-examples", "5", "--report-dir", tmp_path)
    assert ran.returncode == 1 and "judged nothing" in ran.stderr


def test_replay_a_client_declining_after_answering_fails(tmp_path: Path) -> None:
    """Was: one PASS and the rest SKIP, exit 0."""
    from tests.fakes import http_clients

    http_clients._answered.clear()
    ran = cli(
        "replay",
        "--impl",
        "python:tests.fakes.http_clients:answers_one_client",
        "--report-dir",
        tmp_path,
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    found = results(tmp_path)["results"]
    assert any(r["verdict"] == "PASS" for r in found)
    assert any(r["verdict"] == "ERROR" and DECLINED in r["reason"] for r in found)


# --- the pytest plugin ------------------------------------------------------------------------


@pytest.fixture
def plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """The plugin in a pytest session of its own in this process, as in test_plugin.py."""

    def go(*args: str) -> pytest.RunResult:
        return plugin_session(pytester, monkeypatch, *args)

    return go


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    # The plugin judges as `conformance run` does, which tests each decliner in the default
    # tier (above): one of them through the plugin is enough there.
    [pytest.param("answers-one", marks=pytest.mark.slow), "declines-wrong"],
)
def test_the_plugin_fails_a_decliner(plugin, mode: str) -> None:
    """Was: every check it declined was skipped, and the session passed."""
    spec = f"cmd:{sys.executable} {DECLINERS} {mode}"
    cases = ("--conformance-cases", str(ROOT / "cases" / "split.yaml"))
    result = plugin("--conformance-impl", spec, *cases, "--conformance-check", "stream", "-q")
    assert result.ret == 1
    # Whichever way the first stream went, answering and declining one operation is an ERROR.
    out = result.stdout.str()
    assert DECLINED in out or "answered after declining the first" in out
    assert result.parseoutcomes()["failed"] > 0


@pytest.mark.slow
def test_the_plugin_fails_a_session_that_judged_nothing(plugin, tmp_path: Path) -> None:
    """Was: all skipped, exit status 0."""
    fake = f"cmd:{sys.executable} {ROOT / 'tests' / 'fakes' / 'fake_impl.py'} unsupported"
    cases = ("--conformance-cases", str(ROOT / "cases" / "blocks.yaml"))
    args = ("--conformance-impl", fake, *cases, "-k", "DNTX", "-q")
    result = plugin(*args, "--conformance-report-dir", str(tmp_path))
    assert result.ret == 1
    result.stdout.fnmatch_lines(["conformance: * judged nothing*"])
    assert "judged nothing" in (tmp_path / "report.md").read_text()
    assert plugin(*args, "--conformance-min-judged", "0").ret == 0


@pytest.mark.slow
def test_the_plugin_keeps_a_right_implementation_without_render_green(plugin) -> None:
    spec = "python:tests.fakes.decliners:NoOps"
    cases = [f"--conformance-cases={ROOT / 'cases' / name}.yaml" for name in ("render", "split")]
    result = plugin("--conformance-impl", spec, *cases, "--conformance-min-judged", "99")
    assert result.ret == 0, result.stdout.str()


def test_a_stored_example_needing_an_operation_it_lacks_is_passed_over() -> None:
    """Was: ERROR, "the implementation failed: unsupported", for a stream-only normalizer."""
    from hypothesis.database import InMemoryExampleDatabase

    from conformance.fuzz.properties import run_property
    from conformance.fuzz.target import Target
    from conformance.model.options import Options
    from conformance.transport.impls import connect
    from conformance.transport.spec import parse_impl

    database = InMemoryExampleDatabase()
    database.save(b"key", json.dumps([{"content": "<think>a</think>b"}]).encode())
    connection = connect(parse_impl(f"cmd:{sys.executable} {DECLINERS} stream-only"))
    try:
        target = Target(connection, Options())
        result = run_property(
            "differential", target, max_examples=5, seed=1, database=database, key=b"key"
        )
    finally:
        connection.close()
    assert result.verdict.value == "PASS", result.reason
