"""`conformance diff` across an options change: derived case IDs differ by profile
(`K7QF~start+think_only`), so results are matched by written case and check as well."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.reports._diff import Change, compare, render, summary_line

from .helpers import cli, write_results


def result(case: str, check: str, verdict: Verdict = Verdict.PASS, **fields: Any) -> CaseResult:
    written = case.partition("~")[0]
    derived = {"from": written, "transform": "t"} if "~" in case else None
    return CaseResult(
        case=case,
        slug=f"slug-{written.lower()}",
        category="blocks",
        taxonomy="BLOCK.x",
        level="must",
        check=check,
        verdict=verdict,
        derived=derived,
        **fields,
    )


def run_of(options: dict[str, Any], results: list[CaseResult], label: str = "lib") -> Run:
    info = ImplementationInfo(label, label, "1.0", "python", options, "python:m:C")
    return Run("0.1.0", "1.1", "2026-01-01T00:00:00+00:00", [ImplementationRun(info, results)])


DEFAULT = {"delimiters": "think"}
R1 = {"delimiters": "think_only", "profile": "deepseek_r1"}


def test_a_profile_change_compares_the_forms_of_each_written_case() -> None:
    old = run_of(DEFAULT, [result("AAAA", "whole"), result("BBBB", "stream")])
    new = run_of(
        R1,
        [
            result("AAAA~start+one+think_only", "whole"),
            result("AAAA~start.glued+one+think_only", "whole"),
            result("BBBB~start+one+think_only", "stream"),
            result("BBBB~start.glued+one+think_only", "stream", Verdict.FAIL, reason="leak"),
        ],
    )
    comparison = compare(old, new)
    assert summary_line(comparison) == "1 regressed, 0 fixed, 0 changed, 0 new, 0 gone; 1 unchanged"
    (change,) = comparison.changes
    assert (change.change, change.case, change.check) == (Change.REGRESSED, "BBBB", "stream")
    # The form that failed is named with its reason.
    assert change.reason == "BBBB~start.glued+one+think_only: leak"


def test_a_fix_across_profiles_is_a_fix() -> None:
    old = run_of(R1, [result("AAAA~one+think_only", "whole", Verdict.FAIL)])
    new = run_of(DEFAULT, [result("AAAA", "whole")])
    (change,) = compare(old, new).changes
    assert (change.change, change.old, change.new) == (Change.FIXED, Verdict.FAIL, Verdict.PASS)


def test_a_skipped_form_does_not_stand_for_a_judged_one() -> None:
    old = run_of(DEFAULT, [result("AAAA", "whole", Verdict.FAIL)])
    new = run_of(
        R1,
        [
            result("AAAA~start", "whole", Verdict.SKIP, reason="not derived"),
            result("AAAA~start.glued", "whole"),
        ],
    )
    (change,) = compare(old, new).changes
    assert change.change is Change.FIXED


def test_same_ids_still_match_exactly() -> None:
    """Within one profile, forms of a written case are compared one by one, not by group."""
    old = run_of(R1, [result("AAAA~start", "whole"), result("AAAA~start.glued", "whole")])
    new = run_of(
        R1, [result("AAAA~start", "whole", Verdict.FAIL), result("AAAA~start.glued", "whole")]
    )
    comparison = compare(old, new)
    assert [c.case for c in comparison.changes] == ["AAAA~start"]
    assert comparison.unchanged == 1


def test_cases_only_one_run_has_are_new_or_gone() -> None:
    old = run_of(DEFAULT, [result("AAAA", "whole"), result("CCCC", "whole")])
    new = run_of(R1, [result("AAAA~one", "whole"), result("DDDD~one", "whole")])
    comparison = compare(old, new)
    assert {(c.change, c.case) for c in comparison.changes} == {
        (Change.GONE, "CCCC"),
        (Change.NEW, "DDDD"),
    }
    assert "DDDD" in render(comparison)


def test_implementations_are_not_mixed() -> None:
    old = run_of(DEFAULT, [result("AAAA", "whole")], label="one")
    new = run_of(R1, [result("AAAA~one", "whole", Verdict.FAIL)], label="two")
    assert {c.change for c in compare(old, new).changes} == {Change.GONE, Change.NEW}


FAILED: dict[str, Any] = {
    "reason": "x",
    "chunks": [{"content": "a", "reasoning": None}],
    "expected": {"assistant": "a", "thinking": ""},
    "actual": {"assistant": "", "thinking": "a"},
}


def test_the_command_reports_a_regression_across_options(tmp_path: Path) -> None:
    old = write_results(run_of(DEFAULT, [result("AAAA", "whole")]), tmp_path / "old")
    new = write_results(
        run_of(R1, [result("AAAA~one+think_only", "whole", Verdict.FAIL, **FAILED)]),
        tmp_path / "new",
    )
    ran = cli("diff", old, new)
    assert ran.returncode == 1, ran.stderr
    assert "1 regressed, 0 fixed, 0 changed, 0 new, 0 gone" in ran.stdout


def test_releases_of_one_implementation_compare_as_one() -> None:
    """`conformance env` labels each release's environment `lib@<release>`: two releases are
    one implementation, not one gone and one new."""

    def at(release: str, verdict: Verdict) -> Run:
        info = ImplementationInfo(f"lib@{release}", "lib", release, "python", DEFAULT, "cmd:x")
        return Run(
            "0.1.0",
            "1.1",
            "2026-01-01T00:00:00+00:00",
            [ImplementationRun(info, [result("AAAA", "stream", verdict)])],
        )

    comparison = compare(at("1.0", Verdict.FAIL), at("1.1", Verdict.PASS))
    assert [(c.change, c.label) for c in comparison.changes] == [(Change.FIXED, "lib")]
    assert "only in the" not in render(comparison)
    # A label whose suffix is not the release it runs stays whole.
    assert ImplementationInfo("a@b", "a", "1.0", "python", {}, "x").series == "a@b"


def test_any_two_runs_of_a_store_compare(tmp_path: Path) -> None:
    from conformance.store.db import Store

    store = tmp_path / "s.sqlite"
    first = run_of(DEFAULT, [result("AAAA", "whole")])
    middle = replace(first, started="2026-01-02T00:00:00+00:00")
    last = run_of(R1, [result("AAAA~one+think_only", "whole", Verdict.FAIL, **FAILED)])
    last = replace(last, started="2026-01-03T00:00:00+00:00")
    with Store(store) as opened:
        hashes = [opened.add(run, str(n)).hash for n, run in enumerate((first, middle, last))]
    # The first against the last, skipping the run between.
    ran = cli("diff", "--store", store, hashes[0][:10], hashes[2][:10])
    assert ran.returncode == 1, ran.stderr
    assert "1 regressed, 0 fixed, 0 changed, 0 new, 0 gone" in ran.stdout
    unknown = cli("diff", "--store", store, "ffffffffff", hashes[2])
    assert unknown.returncode == 2 and "no run with a hash starting 'ffffffffff'" in unknown.stderr
    missing = cli("diff", "--store", tmp_path / "none.sqlite", "a", "b")
    assert missing.returncode == 2 and "no such file" in missing.stderr
