"""The pytest plugin, run in pytest sessions of its own the way a normalizer's repository would.

Most tests run the session in this process (pytester's in-process run: a fresh config, and
`plugin_session` empties what the plugin's module gathers over its one session per process):
starting an interpreter, pytest and Hypothesis for each run cost more than the run itself.
What is about processes runs in a fresh pytest process (`run`): xdist, whose workers and
controller are processes of their own, and Hypothesis' settings profile, which a conftest.py
loads for the whole process and which must not leak into this test session."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import conformance.corpus.expectations as expectations_module
from conformance.contracts import fuzz_properties
from conformance.corpus.expectations import ExpectedFailures

from .helpers import plugin_session, share_the_corpus_cache

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    share_the_corpus_cache(monkeypatch)

    def go(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)

    return go


@pytest.fixture
def run_here(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """A pytest session of the plugin in this process."""

    def go(*args: str) -> pytest.RunResult:
        return plugin_session(pytester, monkeypatch, *args)

    return go


@pytest.mark.slow
def test_the_reference_passes_as_parametrized_tests(run):
    result = run("--conformance-impl", "reference", "-q")
    outcomes = result.parseoutcomes()
    assert result.ret == 0
    assert outcomes["passed"] >= 800
    assert "failed" not in outcomes


@pytest.mark.slow
def test_a_broken_implementation_fails_with_a_readable_diff(run_here):
    result = run_here(
        "--conformance-impl",
        "python:tests.fakes.broken_impls:NoFlush",
        "-k",
        "FLUSH or flush",
        "-x",
        "-q",
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "FAIL text-dropped (text is lost (in neither channel)) in * · *",
            "case      * (*cases/*.yaml:*)",
            "reason    *",
            "input     *∎",
            "* - *  (expected)",
            "          + *  (actual)",
            "rerun     conformance run --impl python:tests.fakes.broken_impls:NoFlush"
            " --id * --check *",
        ]
    )
    assert result.parseoutcomes()["failed"] == 1
    # Chunks as the terminal report shows them, not JSON.
    assert '{"content"' not in result.stdout.str()


@pytest.mark.slow
@pytest.mark.parametrize(
    "workers",
    # Under xdist the failures come to the controller from the workers: the slow tier's, with
    # the plugin's other runs under xdist.
    [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)],
    ids=["serial", "xdist"],
)
def test_a_broken_normalizer_gets_a_grouped_summary_not_a_page_per_failure(
    run, run_here, workers, monkeypatch
):
    """Issue 22: 8,880 lines for one buggy normalizer, no grouping, chunks as raw JSON. The
    first failing test of each bug signature is a few lines, the later ones are counted, and
    the session ends with the failures grouped by bug signature. On CI (`CI` set, where
    pytest's short summary would hold each failure's whole text) as anywhere else. In this
    process, one check of every case (hundreds of failures, each bug among them); under
    xdist, every check."""
    monkeypatch.setenv("CI", "true")
    impl = ("--conformance-impl", "python:tests.fakes.four_bugs:FourBugs", "-q")
    result = run(*impl, *workers) if workers else run_here(*impl, "--conformance-check", "chars")
    assert result.ret == 1
    failed = result.parseoutcomes()["failed"]
    assert failed > (500 if workers else 300)
    lines = result.stdout.lines
    # One failing test of each signature in full (a dozen lines), the rest counted: not a
    # dozen lines per failure.
    assert len(lines) < 2 * failed, "\n".join(lines)
    summary = lines.index(next(line for line in lines if "by bug signature" in line))
    assert lines[summary + 1].startswith("FourBugs: ")
    assert "signatures (class · category · check)" in lines[summary + 1]
    grouped = "\n".join(lines[summary:])
    for bug in ("delimiter-shown", "delimiter-fragment-shown", "text-dropped", "text-added"):
        assert f". {bug} (MUST)" in grouped
    assert "rerun     conformance run --impl python:tests.fakes.four_bugs:FourBugs --id" in grouped
    listed = [line for line in lines if line.startswith("FAILED conformance[FourBugs]")]
    assert len(listed) < 200
    short = lines.index(next(line for line in lines if "short test summary info" in line))
    assert lines[short + 1 : short + 1 + len(listed)] == listed  # a line each
    assert f"{failed - len(listed)} more failing tests of these signatures" in grouped
    assert '{"content"' not in result.stdout.str()


@pytest.mark.slow
def test_test_ids_markers_and_junit(run, pytester: pytest.Pytester):
    junit = pytester.path / "junit.xml"
    result = run(
        "--conformance-impl",
        "ref=reference",
        "-m",
        "conformance_split_delimiters",
        "--conformance-check",
        "stream",
        f"--junitxml={junit}",
        "--collect-only",
        "-q",
    )
    assert result.ret == 0
    lines = [line for line in result.stdout.lines if "::" in line]
    assert lines and all(line.endswith("[stream]") for line in lines)
    assert all("conformance[ref]::" in line for line in lines)
    result = run(
        "--conformance-impl",
        "ref=reference",
        "-m",
        "conformance_split_delimiters",
        "--conformance-check",
        "stream",
        f"--junitxml={junit}",
    )
    assert result.ret == 0
    cases = ET.parse(junit).getroot().iter("testcase")
    assert len(list(cases)) == len(lines)


def test_expected_failures_and_reports(run_here, pytester: pytest.Pytester):
    expectations = pytester.path / "expectations"
    expectations.mkdir()
    (expectations / "bug.yaml").write_text("CHSZ: {reason: never flushes}\n")
    reports = pytester.path / "reports"
    result = run_here(
        "--conformance-impl",
        "bug=python:tests.fakes.broken_impls:NoFlush",
        "-k",
        "CHSZ",
        f"--conformance-expectations={expectations}",
        f"--conformance-report-dir={reports}",
    )
    assert result.ret == 0
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] >= 1
    data = json.loads((reports / "results.json").read_text())
    verdicts = {r["verdict"] for r in data["implementations"][0]["results"]}
    assert "XFAIL" in verdicts


@pytest.mark.slow
def test_works_under_xdist(run):
    result = run(
        "--conformance-impl", "reference", "-n", "2", "-q", "-m", "conformance_orphan_close"
    )
    assert result.ret == 0
    assert result.parseoutcomes()["passed"] >= 50


def test_usage_errors_are_reported(run_here):
    result = run_here("--conformance-impl", "reference", "--conformance-options", '{"matching": 1}')
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*cannot be 1*"])


@pytest.mark.slow
def test_fuzzing_through_pytest(run, pytester: pytest.Pytester):
    pytester.makeconftest(
        "from hypothesis import settings\n"
        "settings.register_profile('tiny', max_examples=300, derandomize=True, database=None)\n"
        "settings.load_profile('tiny')\n"
    )
    reports = pytester.path / "reports"
    result = run(
        "--conformance-impl",
        "bug=python:tests.fakes.fuzz_targets:NativeFlushesCarry",
        "--conformance-fuzz",
        "-m",
        "conformance_fuzz",
        f"--conformance-report-dir={reports}",
    )
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    # Six normalizer properties; the render and egress ones are SKIP (no such methods).
    assert outcomes["failed"] >= 1 and outcomes["failed"] + outcomes["passed"] == 6
    assert outcomes["skipped"] == 2
    result.stdout.fnmatch_lines(["*FAIL: property * examples (seed 0)*", "shrunk input: *"])
    # The replay command names the implementation under its label, with the profile's budget.
    replays = [line for line in result.stdout.lines if line.startswith("replay: ")]
    assert replays and all("=..." not in line for line in replays)
    assert all(
        "--impl bug=python:tests.fakes.fuzz_targets:NativeFlushesCarry" in line
        and "--max-examples 300" in line
        for line in replays
    )
    data = json.loads((reports / "results.json").read_text())
    fuzz = data["implementations"][0]["fuzz"]
    assert {entry["property"] for entry in fuzz} == set(fuzz_properties())
    reference = run(
        "--conformance-impl", "reference", "--conformance-fuzz", "-m", "conformance_fuzz"
    )
    assert reference.ret == 0


@pytest.mark.parametrize(
    "workers",
    # Under xdist the controller makes the same check before starting its workers: the
    # slow tier's, with the plugin's other runs under xdist.
    [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)],
    ids=["serial", "xdist"],
)
def test_an_implementation_that_cannot_start_is_one_usage_error(run, run_here, workers):
    """A typo in the module name: one message and a non-zero exit, not a failure per test."""
    impl = ("--conformance-impl", "python:no_such_normalizer_module:make")
    result = run(*impl, *workers) if workers else run_here(*impl)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.lines + result.stderr.lines
    assert len(output) <= 30, "\n".join(output)
    result.stderr.fnmatch_lines(["*cannot start*", "*cannot import 'no_such_normalizer_module'*"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


@pytest.mark.slow
def test_counters_and_collect_only_agree(run_here):
    selected = run_here("--conformance-impl", "reference", "-m", "conformance_orphan_close")
    assert selected.ret == 0
    line = next(line for line in selected.stdout.lines if line.startswith("collected "))
    numbers = [int(word) for word in line.replace("/", " ").split() if word.isdigit()]
    total, deselected, chosen = numbers
    assert total > deselected > 0 and chosen == total - deselected
    assert selected.parseoutcomes()["passed"] + selected.parseoutcomes().get("skipped", 0) == (
        chosen
    )
    listed = run_here(
        "--conformance-impl", "reference", "-m", "conformance_orphan_close", "--collect-only", "-q"
    )
    assert listed.ret == 0
    items = [line for line in listed.stdout.lines if line.startswith("conformance[reference]::")]
    assert len(items) == chosen
    listed.stdout.fnmatch_lines([f"{chosen}/{total} tests collected ({deselected} deselected)*"])


def test_category_markers_are_registered_without_an_implementation(run_here):
    result = run_here("--markers")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["@pytest.mark.conformance_split_delimiters: *"])
    strict = run_here("--strict-markers", "-m", "conformance_orphan_close", "--collect-only", "-q")
    assert strict.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_an_expectation_file_is_read_once_per_session(
    run_here, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    expectations = pytester.path / "expectations"
    expectations.mkdir()
    (expectations / "bug.yaml").write_text("CHSZ: {reason: never flushes}\n")
    loads: list[Path] = []
    real = expectations_module.load_expected_failures

    def counting(path: Path) -> ExpectedFailures:
        """Counts the loads where they happen, without changing what they return."""
        loads.append(path)
        return real(path)

    monkeypatch.setattr(expectations_module, "load_expected_failures", counting)
    result = run_here(
        "--conformance-impl",
        "bug=python:tests.fakes.broken_impls:NoFlush",
        "-k",
        "CHSZ or FLUSH",
        f"--conformance-expectations={expectations}",
    )
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] >= 1 and outcomes["xfailed"] + outcomes.get("failed", 0) > 2
    assert loads == [expectations / "bug.yaml"]
