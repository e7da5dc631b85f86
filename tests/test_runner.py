"""The runner judges implementations: the reference passes, each classic bug is flagged."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from conformance.contracts import render
from conformance.corpus.expectations import load_expected_failures
from conformance.corpus.select import Selection
from conformance.engine.runner import run_implementation
from conformance.errors import UsageError
from conformance.model.cases import Case
from conformance.model.results import ImplementationRun, Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import Ran, bundled_corpus, cli, conformance_process

CASES = bundled_corpus().cases
NORMALIZER_CASES = [case for case in CASES if isinstance(case, Case)]


def run(spec: str, **kwargs) -> ImplementationRun:
    return run_implementation(connect(parse_impl(spec)), CASES, **kwargs)


def failing(impl_run: ImplementationRun, verdict: Verdict = Verdict.FAIL) -> Counter:
    return Counter(
        (r.taxonomy.split(".")[0], r.check) for r in impl_run.results if r.verdict == verdict
    )


def test_the_reference_passes_every_case_and_check():
    result = run("reference")
    bad = [r for r in result.results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    assert bad == []
    skips = {r.reason for r in result.results if r.verdict == Verdict.SKIP}
    assert skips <= {
        "no split points: the content is shorter than two characters",
        render.skip_reason({}, "roundtrip"),
    }


@pytest.mark.parametrize(
    "options",
    [
        # Each a whole-corpus run: the slow tier's (the default tier runs the reference under
        # another profile, with derived cases, in tests/test_derive.py).
        pytest.param({"matching": "tolerant"}, marks=pytest.mark.slow),
        pytest.param({"delimiters": "extended"}, marks=pytest.mark.slow),
        pytest.param({"native_with_tags": "merge"}, marks=pytest.mark.slow),
        pytest.param({"unclosed_at_end": "drop"}, marks=pytest.mark.slow),
        pytest.param({"start_in_reasoning": True}, marks=pytest.mark.slow),
    ],
)
def test_the_reference_passes_under_every_profile(options):
    result = run_implementation(connect(parse_impl("reference", options)), CASES)
    assert all(r.verdict in (Verdict.PASS, Verdict.SKIP) for r in result.results)
    if options == {"start_in_reasoning": True}:
        # Derived cases stand in for those without a written expectation (SPEC 5.6).
        assert any(r.derived for r in result.results)


def bug(name: str, checks: Sequence[str] | None = None) -> ImplementationRun:
    """A broken normalizer's run; only the `checks` a test looks at, when it names them."""
    return run(f"python:tests.fakes.broken_impls:{name}", **({"checks": checks} if checks else {}))


def test_no_carry_fails_split_delimiters_only_when_streamed():
    result = bug("NoCarry", checks=("whole", "stream", "chars"))
    fails = failing(result)
    assert fails[("SPLIT", "stream")] >= 20
    assert fails[("SPLIT", "chars")] >= 40
    # In one piece it only gets native reasoning wrong (it always merges tag bodies).
    native = {case.id for case in NORMALIZER_CASES if case.reasoning}
    whole_fails = {
        r.case for r in result.results if r.check == "whole" and r.verdict == Verdict.FAIL
    }
    assert whole_fails <= native


def test_no_flush_loses_partial_delimiters_at_the_end():
    result = bug("NoFlush", checks=("stream",))
    fails = failing(result)
    assert fails[("FLUSH", "stream")] >= 10
    reasons = [
        r.reason
        for r in result.results
        if r.verdict == Verdict.FAIL and r.taxonomy.startswith("FLUSH") and r.check == "stream"
    ]
    assert any("ended short" in reason for reason in reasons)


#: The checks of a test about what a bug does to the channels: in one piece, as recorded and
#: character by character (each split point repeats what these show, at many times the cost).
CHANNEL_CHECKS = ("whole", "stream", "chars")


@pytest.mark.slow
def test_stripping_every_tag_is_over_stripping():
    result = bug("StripsEveryTag", checks=CHANNEL_CHECKS)
    assert failing(result)[("TEXT", "whole")] >= 15
    # Every failure is text with angle brackets that should have stayed in the answer.
    assert all("<" in r.expected["assistant"] for r in result.results if r.verdict == Verdict.FAIL)


def test_a_leaked_orphan_close_is_named_as_a_delimiter():
    result = bug("LeaksOrphanClose", checks=("stream",))
    orphans = [r for r in result.results if r.taxonomy == "ORPHAN.close" and r.check == "stream"]
    assert orphans and all(r.verdict == Verdict.FAIL for r in orphans)
    assert any("(a delimiter or a fragment of one)" in r.reason for r in orphans)


@pytest.mark.slow
def test_per_chunk_regex_fails_blocks_spread_over_chunks():
    fails = failing(bug("PerChunkRegex", checks=("stream", "chars")))
    assert fails[("SPLIT", "chars")] >= 40
    assert fails[("BLOCK", "stream")] >= 5


@pytest.mark.slow
def test_merging_while_declaring_native_only_duplicates_reasoning():
    result = bug("DuplicatesNative", checks=CHANNEL_CHECKS)
    assert failing(result)[("NATIVE", "whole")] >= 10
    native = {case.id for case in NORMALIZER_CASES if case.reasoning}
    assert {r.case for r in result.results if r.verdict == Verdict.FAIL} <= native


def test_trimming_whitespace_is_non_strict_never_fail():
    result = bug("TrimsWhitespace", checks=CHANNEL_CHECKS)
    verdicts = Counter(r.verdict for r in result.results)
    assert verdicts[Verdict.FAIL] == 0
    assert verdicts[Verdict.NON_STRICT] >= 40
    assert result.ok


def test_buffering_everything_is_reported_as_holdback():
    result = bug("BuffersEverything", checks=CHANNEL_CHECKS)
    non_strict = [r for r in result.results if r.verdict == Verdict.NON_STRICT]
    assert non_strict and all(r.check != "whole" for r in non_strict)
    assert all(r.holdback and r.holdback > 0 for r in non_strict)
    assert "held back" in non_strict[0].reason
    assert result.ok


def test_counting_nesting_hides_the_answer():
    fails = failing(bug("CountsNesting", checks=("whole",)))
    assert fails[("BLOCK", "whole")] >= 3


def test_ignoring_case_under_exact_matching_fails():
    result = bug("IgnoresCase", checks=("whole",))
    spaced = [r for r in result.results if r.taxonomy == "TEXT.spaced" and r.check == "whole"]
    assert any(r.verdict == Verdict.FAIL for r in spaced)


def test_exceptions_and_malformed_deltas_are_errors_not_crashes():
    raises = bug("Raises", checks=("whole", "stream"))
    errors = [r for r in raises.results if r.verdict == Verdict.ERROR]
    assert errors and "raised ValueError: cannot handle <thinking>" in errors[0].reason
    wrong = bug("WrongDeltaCount", checks=("stream",))
    errors = [r for r in wrong.results if r.verdict == Verdict.ERROR]
    assert errors and any(
        "must be an object with `assistant` and `thinking`" in r.reason for r in errors
    )


def test_selection_narrows_and_an_empty_selection_is_an_error():
    chosen = Selection(taxonomy=("SPLIT",), checks=("stream",)).apply(CASES)
    assert chosen and all(case.taxonomy.startswith("SPLIT.") for case in chosen)
    assert Selection(keyword="split and not lone").apply(CASES)
    with pytest.raises(UsageError, match="matches no case"):
        Selection(ids=("ZZZZ",)).apply(CASES)
    with pytest.raises(UsageError, match="ends too early"):
        Selection(keyword="(split").apply(CASES)


@pytest.mark.slow
def test_expected_failures_become_xfail_and_unexpected_passes_xpass(tmp_path: Path):
    fails = bug("NoFlush", checks=CHANNEL_CHECKS)
    failing_id = next(r.case for r in fails.results if r.verdict == Verdict.FAIL)
    passing_id = next(
        r.case
        for r in fails.results
        if r.verdict == Verdict.PASS
        and all(o.verdict == Verdict.PASS for o in fails.results if o.case == r.case)
    )
    path = tmp_path / "no-flush.yaml"
    path.write_text(
        f"{failing_id}: {{reason: drops the held suffix, link: 'https://x'}}\n"
        f"{passing_id}: {{reason: thought to fail, checks: [whole]}}\n"
    )
    result = bug_with(path)
    by_case = {(r.case, r.check): r for r in result.results}
    assert by_case[(failing_id, "stream")].verdict == Verdict.XFAIL
    assert by_case[(passing_id, "whole")].verdict == Verdict.XPASS
    assert by_case[(passing_id, "stream")].verdict == Verdict.PASS
    assert "remove the entry" in by_case[(passing_id, "whole")].reason


def bug_with(path: Path) -> ImplementationRun:
    return run(
        "python:tests.fakes.broken_impls:NoFlush",
        checks=CHANNEL_CHECKS,
        expected_failures=load_expected_failures(path),
    )


def test_a_bad_expectation_file_names_the_problem(tmp_path: Path):
    path = tmp_path / "x.yaml"
    path.write_text("K7QF: {why: no reason given}\n")
    with pytest.raises(UsageError, match="'reason' is a required property"):
        load_expected_failures(path)


def test_conformance_run_writes_reports_and_sets_the_exit_status(tmp_path: Path):
    split = ("--taxonomy", "SPLIT", "--no-growth")
    good = cli("run", "--report-dir", str(tmp_path / "good"), *split)
    assert good.returncode == 0, good.stdout + good.stderr
    assert {p.name for p in (tmp_path / "good").iterdir()} >= {
        "results.json",
        "report.md",
        "report.html",
        "junit.xml",
    }
    bad = cli(
        "run",
        "--impl",
        "ref=reference",
        "--impl",
        "python:tests.fakes.broken_impls:NoCarry",
        "--report-dir",
        str(tmp_path / "bad"),
        *split,
    )
    assert bad.returncode == 1
    data = json.loads((tmp_path / "bad" / "results.json").read_text())
    labels = [impl["label"] for impl in data["implementations"]]
    assert labels == ["ref", "NoCarry"]
    assert data["implementations"][1]["summary"]["FAIL"] > 0


@pytest.mark.parametrize(
    "cli",
    [cli, pytest.param(conformance_process, marks=pytest.mark.slow)],
    ids=["in-process", "process"],
)
def test_conformance_run_usage_errors_exit_2(cli: Callable[..., Ran], tmp_path: Path):
    assert cli("run", "--id", "ZZZZ", "--report-dir", str(tmp_path)).returncode == 2
    assert cli("run", "--impl", "nonsense", "--report-dir", str(tmp_path)).returncode == 2
    bad_options = cli("run", "--options", '{"matching": "fuzzy"}', "--report-dir", str(tmp_path))
    assert bad_options.returncode == 2
    assert "cannot be 'fuzzy'" in bad_options.stderr
    missing = cli("run", "--impl", "python:no_such_module:x", "--report-dir", str(tmp_path))
    assert missing.returncode == 2
    assert "cannot import 'no_such_module'" in missing.stderr
