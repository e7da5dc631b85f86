"""`conformance matrix`: bug classes, expectation files written from a run, the generated
ecosystem page, and the green-until-something-changes cycle, on a deliberately broken
normalizer registered as an adapter (so it runs without any third-party library)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import conformance.tools.matrix as matrix_module
from conformance.adapters import ADAPTERS, EXPECTATIONS_DIR
from conformance.adapters.adapter import Adapter
from conformance.cli.main import main
from conformance.corpus.expectations import load_expected_failures, render_lock
from conformance.errors import UsageError
from conformance.model.options import DEFAULT
from conformance.model.results import CaseResult, Verdict
from conformance.reports._bugclass import classify
from conformance.tools.ecosystem import COMMAND, render_ecosystem
from conformance.tools.matrix import (
    MatrixSettings,
    expectations_target,
    load_divergences,
    lock_failures,
    run_matrix,
)

from .helpers import bundled_corpus

ROOT = Path(__file__).parent.parent
NO_FLUSH = Adapter(
    "no-flush",
    "python:tests.fakes.broken_impls:NoFlush",
    "a normalizer that never flushes",
    "nothing to install",
    module="tests.fakes.broken_impls",
)
RULE = {
    "id": "no-flush.never",
    "class": "text-dropped",
    "reason": "held text is never flushed",
    "link": "https://x.test/1",
}


def failed(expected: tuple[str, str], actual: tuple[str, str], check: str = "stream") -> CaseResult:
    return CaseResult(
        case="ABCD",
        slug="s",
        category="c",
        taxonomy="FLUSH.partial-open",
        level="must",
        check=check,
        verdict=Verdict.FAIL,
        chunks=[{"content": "x", "reasoning": None}],
        expected=dict(zip(("assistant", "thinking"), expected, strict=True)),
        actual=dict(zip(("assistant", "thinking"), actual, strict=True)),
    )


@pytest.mark.parametrize(
    ("expected", "actual", "name"),
    [
        (("x", ""), ("x</think>", ""), "delimiter-shown"),
        (("", "ab"), ("", "a<think>b"), "delimiter-in-thinking"),
        (("a<th", ""), ("a", ""), "text-dropped"),
        (("a", "r"), ("a", "rr"), "text-added"),
        (("", "r"), ("r", ""), "reasoning-shown"),
        (("a", ""), ("", "a"), "answer-hidden"),
        (("a", ""), ("</thia", ""), "delimiter-fragment-shown"),
        (("a", "rb"), ("a", "br"), "text-reordered"),
        (("a", "rb"), ("a", "rB"), "text-changed"),
    ],
)
def test_bug_class_says_what_went_wrong(
    expected: tuple[str, str], actual: tuple[str, str], name: str
) -> None:
    assert classify(failed(expected, actual), DEFAULT.grammar).name == name


def test_an_error_is_a_crash() -> None:
    result = CaseResult("ABCD", "s", "c", "T.x", "must", "whole", Verdict.ERROR, reason="boom")
    assert classify(result, DEFAULT.grammar).name == "crash"


def test_failures_are_locked_under_their_rule() -> None:
    results = [
        failed(("a<th", ""), ("a", ""), "chars"),
        failed(("a<th", ""), ("a", ""), "stream"),
        failed(("", "r"), ("r", ""), "whole"),
    ]
    failing, unexplained = lock_failures(results, {}, [RULE])
    assert failing == {RULE["id"]: {"ABCD": ["stream", "chars"]}}
    assert [r.check for r in unexplained] == ["whole"]


def test_a_rule_may_name_several_bug_classes(tmp_path: Path) -> None:
    """A split tag's pieces are a delimiter piece shown where one lands in the answer, and
    text added where both stay in the reasoning: one rule explains both."""
    pieces = {**RULE, "id": "pieces", "class": ["delimiter-fragment-shown", "text-added"]}
    results = [
        failed(("a", ""), ("</thia", ""), "stream"),
        failed(("a", "r"), ("a", "r</thi"), "chars"),
        failed(("a<th", ""), ("a", ""), "splits"),
    ]
    failing, unexplained = lock_failures(results, {}, [pieces])
    assert failing == {"pieces": {"ABCD": ["stream", "chars"]}}
    assert [r.check for r in unexplained] == ["splits"]
    path = tmp_path / "divergences.yaml"
    path.write_text("x:\n  - {id: a, class: [text-added, nope], reason: r}\n", "utf-8")
    with pytest.raises(UsageError, match="a known `class` or a list"):
        load_divergences(path)
    assert load_divergences()  # the bundled rules load


def test_a_lock_lists_derived_cases_compactly_and_loads_back(tmp_path: Path) -> None:
    other = {"id": "other", "class": "text-added", "reason": "another reason"}
    failing = {
        RULE["id"]: {
            "ABCD": ["whole", "stream", "chars", "splits"],
            "ABCD~start+think_only": ["stream", "chars"],
            "ABCD~start.glued+think_only": ["stream", "chars"],
            "EFGH~start+think_only": ["stream", "chars"],
        },
        "other": {"ABCD~start+think_only": ["whole"]},
    }
    text = render_lock("# header\n", {RULE["id"]: RULE, "other": other}, failing)
    assert text.startswith("# header\n")
    data = yaml.safe_load(text)
    assert data["rules"][RULE["id"]]["cases"] == {
        "all": {"written": ["ABCD"]},
        "stream chars": {
            "~start+think_only": ["ABCD", "EFGH"],
            "~start.glued+think_only": ["ABCD"],
        },
    }
    path = tmp_path / "lock.yaml"
    path.write_text(text, "utf-8")
    expected = load_expected_failures(path)
    assert expected.note("ABCD~start+think_only", "chars") == {
        "reason": RULE["reason"],
        "rule": RULE["id"],
        "link": RULE["link"],
    }
    assert expected.note("ABCD~start+think_only", "whole")["rule"] == "other"  # type: ignore[index]
    assert expected.note("ABCD~start+think_only", "splits") is None
    assert expected.note("EFGH", "whole") is None
    result = expected.apply(failed(("a<th", ""), ("a", ""), "splits"))
    assert result.verdict == Verdict.XFAIL and result.expectation["rule"] == RULE["id"]  # type: ignore[index]


def test_a_lock_naming_a_check_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "lock.yaml"
    path.write_text(
        "lock: 1\nrules:\n"
        "  a: {reason: x, cases: {all: {written: [ABCD]}}}\n"
        "  b: {reason: y, cases: {whole: {written: [ABCD]}}}\n",
        "utf-8",
    )
    with pytest.raises(UsageError, match="ABCD whole is also listed under a"):
        load_expected_failures(path)


def test_hand_written_expectation_files_keep_their_format(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("K7QF:\n  reason: no flush\n  checks: [stream]\n", "utf-8")
    expected = load_expected_failures(path)
    assert expected.note("K7QF", "stream") == {"reason": "no flush"}
    assert expected.note("K7QF", "whole") is None


def test_update_expectations_never_writes_into_an_installed_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = MatrixSettings(report_dir=tmp_path / "reports", update_expectations=True)
    assert matrix_module.from_checkout()
    assert expectations_target(settings) == EXPECTATIONS_DIR
    monkeypatch.setattr(matrix_module, "from_checkout", lambda: False)
    assert expectations_target(settings) == tmp_path / "reports" / "expectations"
    chosen = MatrixSettings(expectations_out=tmp_path / "out", update_expectations=True)
    assert expectations_target(chosen) == tmp_path / "out"
    with pytest.raises(UsageError, match="--expectations-out"):
        expectations_target(MatrixSettings(report_dir=None, update_expectations=True))


@pytest.fixture
def no_flush_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    divergences = tmp_path / "divergences.yaml"
    divergences.write_text(yaml.safe_dump({"no-flush": [RULE]}), "utf-8")
    monkeypatch.setattr(matrix_module, "ADAPTERS", (NO_FLUSH,))
    monkeypatch.setattr(matrix_module, "DIVERGENCES", divergences)
    return tmp_path


@pytest.mark.slow
def test_matrix_is_green_until_the_implementation_changes(
    no_flush_registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cycle is under test, not the corpus: two taxonomies, one the broken normalizer fails
    # (FLUSH) and one it passes (PLAIN), keep the matrix's four runs of the corpus short.
    corpus = bundled_corpus()
    cases = tuple(case for case in corpus.cases if case.taxonomy.startswith(("FLUSH.", "PLAIN.")))
    monkeypatch.setattr(matrix_module, "load_corpus", lambda dirs: replace(corpus, cases=cases))
    tmp = no_flush_registry
    settings = MatrixSettings(
        report_dir=tmp / "reports",
        expectations_dir=tmp / "expectations",
        bench=None,
        update_expectations=True,
        expectations_out=tmp / "expectations",
    )
    first = run_matrix(settings, echo=lambda *a, **k: None)
    assert first.run.ok and not first.unexplained
    lock = load_expected_failures(tmp / "expectations" / "no-flush.yaml")
    assert lock.locked and all(
        note["reason"] == RULE["reason"]
        for checks in lock.locked.values()
        for note in checks.values()
    )
    xfails = [r for r in first.entries[1].run.results if r.verdict == Verdict.XFAIL]
    assert xfails and all(r.expectation["rule"] == RULE["id"] for r in xfails)  # type: ignore[index]
    # The same, hand-written (the format users keep writing).
    entries = {
        case: {"reason": RULE["reason"], "checks": list(checks)}
        for case, checks in lock.locked.items()
    }
    labels = [entry.run.info.label for entry in first.entries]
    assert labels == ["reference", "no-flush"]
    assert first.entries[1].fingerprint is not None
    page = render_ecosystem(first)
    assert f"Generated by `{COMMAND}`" in page
    for section in ("## Implementations", "## Options", "## Cases passed by category"):
        assert section in page
    assert "text is lost (in neither channel)" in page
    assert (tmp / "reports" / "report.html").exists()

    # The library "changes": a case it passes gets listed (as if it had been fixed), and a
    # listed case is taken out (as if it had just regressed).
    still, broken = sorted(entries)[:2]
    passing = next(
        r.case
        for r in first.entries[1].run.results
        if r.verdict == Verdict.PASS and r.case not in entries
    )
    del entries[broken]
    entries[passing] = {"reason": "listed although it passes"}
    (tmp / "expectations" / "no-flush.yaml").write_text(yaml.safe_dump(entries), "utf-8")
    second = run_matrix(
        MatrixSettings(report_dir=None, expectations_dir=tmp / "expectations", bench=None),
        echo=lambda *a, **k: None,
    )
    verdicts = {(r.case, r.verdict) for r in second.entries[1].run.results}
    assert (broken, Verdict.FAIL) in verdicts
    assert (passing, Verdict.XPASS) in verdicts
    assert (still, Verdict.XFAIL) in verdicts
    assert not second.run.ok


@pytest.mark.slow
def test_failures_no_rule_explains_stay_failures(no_flush_registry: Path) -> None:
    (no_flush_registry / "divergences.yaml").write_text("no-flush: []\n", "utf-8")
    result = run_matrix(
        MatrixSettings(
            report_dir=None,
            expectations_dir=no_flush_registry / "expectations",
            bench=None,
            update_expectations=True,
            expectations_out=no_flush_registry / "expectations",
        ),
        echo=lambda *a, **k: None,
    )
    assert result.unexplained["no-flush"]
    assert not result.run.ok


def test_matrix_rejects_an_unknown_adapter() -> None:
    outcome = CliRunner().invoke(main, ["matrix", "--adapter", "nope"])
    assert outcome.exit_code == 2
    assert "no such adapter" in outcome.output and "vercel-ai" in outcome.output


@pytest.mark.slow
def test_every_adapter_has_a_valid_expectation_file_and_rules() -> None:
    rules = matrix_module.load_divergences()
    for candidate in ADAPTERS:
        path = EXPECTATIONS_DIR / f"{candidate.label}.yaml"
        assert path.exists(), path
        lock = load_expected_failures(path)
        # A lock (`lock: 1`), empty where the library passes every case (vllm-mistral).
        assert yaml.safe_load(path.read_text("utf-8"))["lock"] == 1 and not lock.entries, path
        assert rules.get(candidate.label), candidate.label
        ids = {rule["id"] for rule in rules[candidate.label]}
        used = {note["rule"] for checks in lock.locked.values() for note in checks.values()}
        assert used <= ids, (candidate.label, used - ids)


def test_the_locks_stay_small() -> None:
    lines = sum(
        len((EXPECTATIONS_DIR / f"{a.label}.yaml").read_text("utf-8").splitlines())
        for a in ADAPTERS
    )
    # Per adapter: the engines' family variants made the table long, not the locks.
    assert lines < 100 * len(ADAPTERS), lines


def test_the_ecosystem_page_is_generated_and_covers_every_adapter() -> None:
    page = (ROOT / "docs" / "ecosystem.md").read_text("utf-8")
    assert f"<!-- Generated by `{COMMAND}`" in page
    for candidate in ADAPTERS:
        assert f"`{candidate.label}`" in page
