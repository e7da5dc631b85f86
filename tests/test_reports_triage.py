"""Reports lead with what to fix: each bug signature (bug class, category, check) with its
smallest failing input, what is new first, within GitHub's comment limit however many checks
fail."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.engine.runner import run_implementation
from conformance.model.chunks import Channels
from conformance.model.conservation import unaccounted
from conformance.model.options import DEFAULT
from conformance.model.results import CaseResult, ImplementationRun, Run, Verdict
from conformance.reports import _markdown, load_results
from conformance.reports._terminal import MAX_SIGNATURES, render_groups, render_top
from conformance.reports._triage import cut_only_note, triage
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus, cli

GITHUB_LIMIT = 65_536


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """A real run of a badly broken normalizer (a per-chunk regex) over the whole corpus,
    made once for the module (conftest.py's ONE_WORKER keeps its tests on one worker), without
    the growth check, which these reports do not need."""
    reports = tmp_path_factory.mktemp("reports")
    impl = "python:tests.fakes.broken_impls:PerChunkRegex"
    done = cli("run", "--impl", impl, "--no-growth", "--report-dir", reports)
    assert done.returncode == 1, done.stderr[-2000:]
    # Wherever in the report directory the run command puts its reports.
    results = next(reports.rglob("results.json"))
    return load_results(results), results.parent


@pytest.fixture(scope="module")
def broken_part(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """The same normalizer on two taxonomy families (a second, against minutes for the
    corpus): 47 bug signatures, more than the terminal and the annotations show."""
    reports = tmp_path_factory.mktemp("part")
    impl = "python:tests.fakes.broken_impls:PerChunkRegex"
    selection = ("--taxonomy", "SPLIT", "--taxonomy", "BLOCK")
    done = cli("run", "--impl", impl, *selection, "--no-growth", "--report-dir", reports)
    assert done.returncode == 1, done.stderr[-2000:]
    results = next(reports.rglob("results.json"))
    return load_results(results), results.parent


def _size(result: CaseResult) -> tuple[int, int]:
    chunks = result.chunks or []
    return sum(len(c.get("content") or "") + len(c.get("reasoning") or "") for c in chunks), len(
        chunks
    )


@pytest.mark.slow
def test_report_md_of_a_badly_broken_normalizer_leads_with_its_smallest_failure(
    broken_run: tuple[Run, Path],
) -> None:
    run, reports = broken_run
    failing = [r for r in run.implementations[0].results if r.verdict.value == "FAIL"]
    assert len(failing) > 1000
    text = (reports / "report.md").read_text("utf-8")
    assert len(text) < GITHUB_LIMIT
    # Every case is MUST or SHOULD: the most severe class's smallest input is the smallest
    # MUST failure of all, since classes are ordered by their smallest input.
    must = [r for r in failing if r.level.lower() == "must"]
    smallest = min(_size(r) for r in must)
    first = re.search(r"^#### \S+ FAIL · `(\w+)` \S+ · `(\w+)`$", text, re.M)
    assert first is not None
    shown = next(r for r in must if (r.case, r.check) == first.groups())
    assert _size(shown) == smallest
    assert text.index("## What to fix") < text.index("## Summary") < text.index("problems")
    # The list of signatures leads, in triage order, each with its count and rerun command.
    groups = triage(run.implementations[0])
    rows = re.findall(r"^\| (\d+) +\| `([\w-]+)` \w+ +\| ([^|]+?) +\| (\d+) +\|", text, re.M)
    assert rows
    assert [(name, where, int(count)) for _, name, where, count in rows] == [
        (group.bug.name, group.where, group.count) for group in groups[: len(rows)]
    ]
    impl = "python:tests.fakes.broken_impls:PerChunkRegex"
    example = groups[0].example
    rerun = f"conformance run --impl {impl} --id {example.case} --check {example.check}"
    assert f"`{rerun} --no-growth`" in text
    # Then the first signatures in full, each with the command that reruns it.
    headings = re.findall(r"^### (\d+)\. `([\w-]+)` in ", text, re.M)
    assert [name for _, name in headings] == [group.bug.name for group in groups[: len(headings)]]
    assert text.count("Rerun this case and check:") >= len(headings)


@pytest.mark.slow
def test_report_md_stays_under_the_comment_limit_and_says_what_it_left_out(
    broken_run: tuple[Run, Path],
) -> None:
    run, _ = broken_run
    broken = run.implementations[0]
    many = [replace(broken, info=replace(broken.info, label=f"copy-{n}")) for n in range(12)]
    text = _markdown.render(replace(run, implementations=many))
    assert len(text) < GITHUB_LIMIT
    assert "left out" in text and "report.html" in text and "results.json" in text
    # Whatever is left out, every implementation's list of signatures still leads.
    first = triage(broken)[0]
    assert len(re.findall(rf"^\| 1 +\| `{first.bug.name}` ", text, re.M)) == 12


def test_the_terminal_prints_the_top_of_the_list(broken_part: tuple[Run, Path]) -> None:
    run, _ = broken_part
    top = render_top(run, report="reports/report.md")
    groups = triage(run.implementations[0])
    lines = top.splitlines()
    assert lines[0].startswith(f"PerChunkRegex: {sum(g.count for g in groups)} failing checks")
    numbered = [line.split()[1] for line in lines if re.match(r"^  \d+\. ", line)]
    assert numbered == [group.bug.name for group in groups[:MAX_SIGNATURES]]
    example = groups[0].example
    assert f"in {groups[0].where}: " in top
    assert f"smallest {example.case} {example.slug}" in top
    assert f"--id {example.case} --check {example.check}" in top
    # A few lines per signature, the rest counted by class.
    assert len(lines) <= 3 + 7 * MAX_SIGNATURES
    if len(groups) > MAX_SIGNATURES:
        assert lines[-2].startswith(f"  ... {len(groups) - MAX_SIGNATURES} more signatures")
    assert lines[-1] == "every failure in full: reports/report.md"


def test_the_terminal_prints_nothing_for_a_clean_run(broken_part: tuple[Run, Path]) -> None:
    run, _ = broken_part
    clean = replace(run.implementations[0], results=[])
    assert render_top(replace(run, implementations=[clean])) == ""


def test_conservation_names_a_leaked_delimiter_instead_of_inventing_characters() -> None:
    delimiter = DEFAULT.grammar.delimiter
    # Content `a<thinking>b</thinking>`: the close tag left in the thinking channel.
    problem = unaccounted("ab", "", Channels("a", "b</thinking>"), False, delimiter)
    assert problem == "delimiters left in a channel (a delimiter is not text): </thinking>"
    # Characters really added are still called that.
    invented = unaccounted("ab", "", Channels("ab", "z"), False, delimiter)
    assert invented == "characters that are not in the input: 'z'"
    # Text that only looks like a delimiter once one is removed (`<<think>think>`) is text.
    assert unaccounted("<think>", "", Channels("<think>", ""), False, delimiter) is None


def test_github_annotations_name_each_bug_signature_in_the_terminal_order(
    broken_part: tuple[Run, Path],
) -> None:
    """What the GitHub Action prints: one `::error` per bug signature, escaped, at most ten,
    the same order as the terminal's list; the module's own command reads results.json."""
    # `from conformance.reports import annotations` would be the package's __future__ import.
    import conformance.reports.annotations as annotations

    run, directory = broken_part
    groups = triage(run.implementations[0])
    assert len(groups) > annotations.MAX_ANNOTATIONS
    lines = annotations.render(run).splitlines()
    assert 0 < len(lines) <= annotations.MAX_ANNOTATIONS
    assert all(line.startswith("::error title=") for line in lines)
    named = [line for line in lines if "title=more" not in line]
    assert [line.split("%3A ")[1].split(" (")[0] for line in named] == [
        group.bug.name for group in groups[: len(named)]
    ]
    assert f"in {groups[0].where}" in lines[0]
    assert "rerun: conformance run --impl" in lines[0]
    assert all("\n" not in line for line in lines)
    assert annotations.render(replace(run, implementations=[])) == ""
    assert annotations.render(run, limit=2).splitlines()[-1].startswith("::error title=more")
    assert annotations.main([str(directory / "results.json")]) == 0
    assert annotations.main([]) == 2


def _split_run(spec: str, options: dict[str, object], taxonomy: str) -> ImplementationRun:
    """A run of the cases of one taxonomy family alone (a fraction of a second)."""
    cases = [case for case in bundled_corpus().cases if case.taxonomy.startswith(taxonomy)]
    return run_implementation(connect(parse_impl(spec, options)), cases)


def test_failures_only_where_a_delimiter_is_cut_are_told_apart() -> None:
    # NoCarry finds a delimiter only within one chunk: every failure cuts one.
    run = _split_run(
        "python:tests.fakes.broken_impls:NoCarry", {"native_with_tags": "merge"}, "SPLIT"
    )
    splits = [r for r in run.results if r.check == "splits" and r.verdict == Verdict.FAIL]
    assert splits and all(r.cut_only for r in splits)
    groups = triage(run)
    assert groups and all(group.cut_only for group in groups)
    assert all(group.where.endswith(", only when a delimiter is cut)") for group in groups)
    checks = sum(group.count for group in groups)
    note = cut_only_note(groups)
    assert note.startswith(f"{checks} of them fail only when a delimiter is cut")
    assert render_groups(run.info, groups, 3)[1] == "  " + note


def test_a_failure_where_no_delimiter_is_cut_is_not_called_cut_only() -> None:
    # A regex over each chunk misses a block whose open and close come in different chunks,
    # wherever the cut between them is.
    run = _split_run("python:tests.fakes.broken_impls:PerChunkRegex", {}, "BLOCK")
    groups = triage(run)
    splits = [g for g in groups if g.check == "splits" and g.signature.split_only]
    assert splits and not any(group.cut_only for group in splits)
    failed = [r for r in run.results if r.check == "splits" and r.verdict == Verdict.FAIL]
    assert failed and not any(r.cut_only for r in failed)
