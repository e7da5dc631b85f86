"""`conformance run`'s options from pytest (issue 22, item 2): `--maxfail N` and `-x` stop
the run and report what finished, `--last-failed` reruns what failed last time per
implementation, and the progress never passes its total (it reached 2784/2676 under a
profile whose derived cases the total did not count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.contracts import all_checks
from conformance.corpus.cases import bundled_cases_dir
from conformance.corpus.select import Selection
from conformance.engine.plans import result_count
from conformance.engine.runner import run_implementation
from conformance.model.options import Options
from conformance.model.results import CaseResult, Run, Verdict
from conformance.reports import load_results
from conformance.session.events import Handler, ImplementationStarted, Progress
from conformance.session.lastfailed import LAST_FAILED_NAME
from conformance.session.run import RunSettings, execute
from conformance.transport.impls import connect
from conformance.transport.spec import ImplementationSpec

from .helpers import bundled_corpus, cli

NO_CARRY = "python:tests.fakes.broken_impls:NoCarry"
#: A small category where NoCarry fails a few checks of three kinds (chars, splits, stream).
SMALL = ("--category", "seed-clark-filter")


def failing(results: list[CaseResult]) -> list[CaseResult]:
    return [result for result in results if not result.verdict.ok]


def pairs(results: list[CaseResult]) -> set[tuple[str, str]]:
    return {(result.case, result.check) for result in results}


def run_into(report_dir: Path, *args: str) -> tuple[int, str, Run]:
    done = cli("run", "--report-dir", report_dir, "--no-growth", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stderr, load_results(report_dir / "results.json")


# --- progress never passes its total -------------------------------------------------------


class Recorded(Handler):
    def __init__(self) -> None:
        self.implementations: list[ImplementationStarted] = []
        self.progress_events: list[Progress] = []

    def implementation_started(self, event: ImplementationStarted) -> None:
        self.implementations.append(event)

    def progress(self, event: Progress) -> None:
        self.progress_events.append(event)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "categories"),
    [
        # Another grammar: cases are derived for it (92 results for 84 written checks).
        ('{"delimiters": "think_only"}', ("seed-clark-filter",)),
        # Starting inside reasoning: two derived cases for each written one (168 for 84).
        ('{"start_in_reasoning": true}', ("seed-clark-filter",)),
        # The measured run: 2784/2676.
        pytest.param('{"delimiters": "think_only"}', (), marks=pytest.mark.slow),
    ],
)
def test_progress_never_passes_its_total_under_a_profile_with_derived_cases(
    options: str, categories: tuple[str, ...]
) -> None:
    """Was: the total counted the written cases while the runner ran the cases derived for
    the profile; under `think_only` the reference's progress reached 2784/2676."""
    seen = Recorded()
    settings = RunSettings(
        impls=("reference", "again=reference"),
        option_sets=(options,),
        case_dirs=(bundled_cases_dir(),),
        selection=Selection(categories=categories),
        report_dir=None,
        expectations_dir=None,
        timeout=5,
        validate_protocol=False,
        growth=None,
    )
    assert execute(settings, echo=lambda *a, **k: None, handlers=[seen]) == 0
    events = seen.progress_events
    assert events
    assert all(event.done <= event.total for event in events)
    assert all(event.session_done <= event.session_total for event in events)
    last = events[-1]
    # Each implementation ends on its total, and the session on the sum of them.
    for started in seen.implementations:
        mine = [event for event in events if event.label == started.info.label]
        assert mine[-1].done == mine[-1].total == started.total
    assert last.session_done == last.session_total == 2 * last.total


@pytest.mark.slow
def test_the_count_is_what_the_runner_runs_under_each_profile() -> None:
    cases = [case for case in bundled_corpus().cases if case.category == "seed-clark-filter"]
    checks = ("whole", "stream", "chars", "splits")
    for options in (None, {"delimiters": "think_only"}, {"start_in_reasoning": True}):
        connection = connect(ImplementationSpec("reference", "reference", options), timeout=5)
        try:
            declared = Options.from_mapping(connection.info.options)
            ran = run_implementation(connection, cases, checks=checks)
        finally:
            connection.close()
        assert result_count(cases, checks, declared) == len(ran.results)


# --- --maxfail and -x ----------------------------------------------------------------------


def test_exitfirst_stops_at_the_first_failure_and_reports_the_rest_as_not_run(
    tmp_path: Path,
) -> None:
    status, stderr, run = run_into(tmp_path, "--impl", NO_CARRY, "-x")
    assert status == 1
    assert "stopped after 1 failure (--maxfail 1)" in stderr
    impl = run.implementations[0]
    assert len(failing(impl.results)) == 1
    assert failing(impl.results)[0] is impl.results[-1]
    total = result_count(bundled_corpus().cases, all_checks())
    assert impl.not_run == total - len(impl.results) > 0
    assert run.stopped == "stopped after 1 failure (--maxfail 1)"
    assert f"{impl.not_run} checks not run" in stderr


def test_maxfail_counts_failures_over_the_whole_session(tmp_path: Path) -> None:
    """Three failures end the session: the second implementation is not run at all."""
    status, stderr, run = run_into(
        tmp_path, "--impl", NO_CARRY, "--impl", "reference", "--maxfail", "3"
    )
    assert status == 1
    assert "stopped after 3 failures (--maxfail 3)" in stderr
    broken, reference = run.implementations
    assert len(failing(broken.results)) == 3
    assert reference.results == [] and reference.not_run > 0


@pytest.mark.slow
def test_an_expected_failure_does_not_count_and_an_unexpected_pass_does(
    tmp_path: Path,
) -> None:
    first = bundled_corpus().cases[0].id
    expectations = tmp_path / "expectations"
    expectations.mkdir()
    (expectations / "reference.yaml").write_text(f"{first}: {{reason: thought to fail}}\n")
    status, stderr, run = run_into(tmp_path / "reports", "--expectations", str(expectations), "-x")
    assert status == 1 and "stopped after 1 failure" in stderr
    (xpass,) = run.implementations[0].results
    assert (xpass.case, xpass.verdict) == (first, Verdict.XPASS)

    # A first failure that is expected is XFAIL: the run goes on to the next one.
    status, _, broken = run_into(tmp_path / "all", "--impl", NO_CARRY, *SMALL)
    wrong = failing(broken.implementations[0].results)
    (expectations / "NoCarry.yaml").write_text(
        f"{wrong[0].case}: {{reason: known, checks: [{wrong[0].check}]}}\n"
    )
    status, _, run = run_into(
        tmp_path / "reports", "--impl", NO_CARRY, *SMALL, "--expectations", str(expectations), "-x"
    )
    results = run.implementations[0].results
    assert status == 1
    assert any(result.verdict is Verdict.XFAIL for result in results)
    assert len(failing(results)) == 1
    assert pairs(failing(results)) != pairs(wrong[:1])


def test_exitfirst_and_another_maxfail_contradict(tmp_path: Path) -> None:
    done = cli("run", "--report-dir", tmp_path, "-x", "--maxfail", "2")
    assert done.returncode == 2 and "contradict" in done.stderr


def test_a_run_without_failures_is_not_stopped_by_maxfail(tmp_path: Path) -> None:
    status, _, run = run_into(tmp_path, "-x", "--category", "split-delimiters")
    assert status == 0 and run.stopped is None


# --- --last-failed -------------------------------------------------------------------------


@pytest.mark.slow
def test_last_failed_reruns_only_what_failed_per_implementation(tmp_path: Path) -> None:
    _, _, first = run_into(tmp_path, "--impl", NO_CARRY, "--impl", "reference", *SMALL)
    failed = pairs(failing(first.implementations[0].results))
    assert failed

    status, stderr, again = run_into(
        tmp_path, "--impl", NO_CARRY, "--impl", "reference", *SMALL, "--lf"
    )
    broken, reference = again.implementations
    assert status == 1
    assert pairs(broken.results) == failed
    assert f"NoCarry: rerunning the {len(failed)} checks that failed last time" in stderr
    # Nothing of the reference failed: all of it runs again, as pytest's --lf does.
    assert "reference: no failure recorded by the last run; running all" in stderr
    assert len(reference.results) == len(first.implementations[1].results)


def test_last_failed_without_a_previous_run_runs_everything_and_says_so(
    tmp_path: Path,
) -> None:
    status, stderr, run = run_into(tmp_path, "--impl", NO_CARRY, "--lf", *SMALL)
    assert status == 1
    assert "NoCarry: no failure recorded by the last run; running all" in stderr
    assert len(run.implementations[0].results) == 84


@pytest.mark.slow
def test_last_failed_combines_with_the_selection(tmp_path: Path) -> None:
    _, _, first = run_into(tmp_path, "--impl", NO_CARRY, *SMALL)
    failed = failing(first.implementations[0].results)
    chars = {pair for pair in pairs(failed) if pair[1] == "chars"}
    assert chars and chars != pairs(failed)
    _, _, run = run_into(tmp_path, "--impl", NO_CARRY, "--lf", "--check", "chars")
    assert pairs(run.implementations[0].results) == chars
    # What that run left out is still recorded: the next --lf reruns all of it.
    _, _, run = run_into(tmp_path, "--impl", NO_CARRY, "--lf")
    assert pairs(run.implementations[0].results) == pairs(failed)


@pytest.mark.slow
def test_a_fixed_failure_leaves_the_record(tmp_path: Path) -> None:
    """The same label, now the reference: everything rerun passes, the record empties, and
    the next --lf runs everything."""
    run_into(tmp_path, "--impl", f"mine={NO_CARRY}", *SMALL)
    status, _, fixed = run_into(tmp_path, "--impl", "mine=reference", "--lf")
    assert status == 0 and 0 < len(fixed.implementations[0].results) < 10
    record = json.loads((tmp_path / LAST_FAILED_NAME).read_text())
    assert "mine" not in record["implementations"]
    _, stderr, _ = run_into(tmp_path, "--impl", "mine=reference", "--lf", "--check", "whole")
    assert "mine: no failure recorded by the last run" in stderr


@pytest.mark.slow
def test_exitfirst_then_last_failed_reruns_the_one_failure(tmp_path: Path) -> None:
    _, _, stopped = run_into(tmp_path, "--impl", NO_CARRY, *SMALL, "-x")
    (failure,) = failing(stopped.implementations[0].results)
    status, stderr, run = run_into(tmp_path, "--impl", NO_CARRY, "--lf")
    assert status == 1 and "rerunning the 1 check that failed" in stderr
    assert pairs(run.implementations[0].results) == {(failure.case, failure.check)}
    assert run.implementations[0].not_run == 0 and run.stopped is None


def test_last_failed_reruns_a_failed_growth_check_alone(tmp_path: Path) -> None:
    """A growth check that failed (superlinear under --strict-growth) is measured again on
    its own, not judged "no case was judged"."""
    record = {"version": 1, "implementations": {"reference": [["GROWTH", "growth"]]}}
    (tmp_path / LAST_FAILED_NAME).write_text(json.dumps(record))
    done = cli("run", "--report-dir", tmp_path, "--lf")
    assert "reference: rerunning the 1 check that failed" in done.stderr
    (growth,) = load_results(tmp_path / "results.json").implementations[0].results
    assert growth.check == "growth" and growth.verdict is not Verdict.SKIP, growth.reason
