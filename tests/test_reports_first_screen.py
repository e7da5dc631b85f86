"""The first screen shows every distinct bug (issue 22): a normalizer whose only split bug
leaks the start of a close delimiter split across chunks, next to three other bugs, gets the
split leak on the terminal's first screen and in report.md's leading list, labelled as what
it is; each failure shown carries a command that reruns just that case and check."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conformance.model.bugs import channel_bug
from conformance.model.options import DEFAULT, Options
from conformance.model.results import CaseResult, ImplementationInfo, ImplementationRun, Verdict
from conformance.reports._triage import triage

from .helpers import cli

FOUR_BUGS = "python:tests.fakes.four_bugs:FourBugs"


@pytest.fixture(scope="module")
def four_bugs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """`conformance run` of the four-bug normalizer: what it printed, and its reports."""
    reports = tmp_path_factory.mktemp("reports")
    done = cli("run", "--impl", FOUR_BUGS, "--no-growth", "--report-dir", reports)
    assert done.returncode == 1, done.stderr[-2000:]
    return done.stdout, reports


@pytest.fixture(scope="module")
def four_bugs_split(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The same on the SPLIT taxonomy alone (a second, against several for the corpus), which
    has the split close leak."""
    reports = tmp_path_factory.mktemp("split")
    selection = ("--taxonomy", "SPLIT")
    done = cli("run", "--impl", FOUR_BUGS, *selection, "--no-growth", "--report-dir", reports)
    assert done.returncode == 1, done.stderr[-2000:]
    return done.stdout, reports


def _screen(stdout: str) -> str:
    """What `conformance run` printed after its table of counts: the first screen."""
    return stdout[stdout.index("FourBugs: ") :]


def _entries(screen: str) -> list[str]:
    """The numbered signatures of the screen, each as its block of lines."""
    return re.split(r"\n(?=  \d+\. )", screen)[1:]


@pytest.mark.slow
def test_a_split_close_leak_shows_on_the_first_screen_next_to_three_other_bugs(
    four_bugs: tuple[str, Path],
) -> None:
    stdout, _ = four_bugs
    screen = _screen(stdout)
    assert len(screen.splitlines()) <= 60
    entries = _entries(screen)
    shown = [entry.split()[1] for entry in entries]
    for bug in ("text-dropped", "delimiter-shown", "delimiter-fragment-shown", "text-added"):
        assert bug in shown, screen
    # The split leak: the piece of a close delimiter split across chunks, shown in the answer,
    # under a chunked check whose whole form passes; no longer "text added".
    leaks = [
        entry
        for entry in entries
        if entry.split()[1] == "delimiter-fragment-shown" and "(whole passes)" in entry
    ]
    assert leaks, screen
    assert any(re.search(r"input +\S*</thi│nk>", entry) for entry in leaks), screen
    assert any(re.search(r"\+ \S*</thi∎", entry) for entry in leaks), screen
    # What is left out is counted.
    assert re.search(r"^  \.\.\. \d+ more signatures \(\d+ checks\) not shown", screen, re.M)


def test_a_split_close_leak_is_in_report_md_leading_list(
    four_bugs_split: tuple[str, Path],
) -> None:
    _, reports = four_bugs_split
    text = (reports / "report.md").read_text("utf-8")
    lead = text[text.index("## What to fix") : text.index("### 1. ")]
    rows = [line for line in lead.splitlines() if re.match(r"^\| \d+ ", line)]
    fragments = [row for row in rows if "`delimiter-fragment-shown`" in row]
    assert any("(whole passes)" in row and "`</thi│nk>∎`" in row for row in fragments), lead
    assert all(f"`conformance run --impl {FOUR_BUGS} --id " in row for row in rows)


def test_the_rerun_command_shown_runs_just_that_case_and_check(
    four_bugs_split: tuple[str, Path], tmp_path: Path
) -> None:
    stdout, _ = four_bugs_split
    line = next(line for line in stdout.splitlines() if line.strip().startswith("rerun "))
    words = shlex.split(line.strip()[len("rerun") :])
    assert words[:2] == ["conformance", "run"]
    case, check = words[words.index("--id") + 1], words[words.index("--check") + 1]
    done = cli(*words[1:], "--report-dir", tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text("utf-8"))
    ran = [(r["case"], r["check"]) for r in results["implementations"][0]["results"]]
    assert ran == [(case, check)]


def test_the_rerun_command_carries_the_options_quoted() -> None:
    from conformance.reports._rerun import rerun_command

    info = ImplementationInfo(
        "mine", "n", "1", "python", {"matching": "tolerant"}, "cmd:./norm --fast 'x y'"
    )
    result = CaseResult("K7QF", "s", "c", "T", "must", "stream", Verdict.FAIL)
    command = rerun_command(info, result)
    words = shlex.split(command)
    assert words[:4] == ["conformance", "run", "--impl", "mine=cmd:./norm --fast 'x y'"]
    assert json.loads(words[words.index("--options") + 1]) == {"matching": "tolerant"}
    assert words[-5:] == ["--id", "K7QF", "--check", "stream", "--no-growth"]
    # The spec's own options need none.
    plain = ImplementationInfo("reference", "n", "1", "python", {}, "reference")
    assert "--options" not in rerun_command(plain, result)


def test_the_rerun_command_names_the_profile_and_only_what_differs_from_it() -> None:
    from conformance.reports._common import format_options
    from conformance.reports._rerun import rerun_command

    result = CaseResult("K7QF", "s", "c", "T", "must", "stream", Verdict.FAIL)
    for given, shown, listed in [
        ({"profile": "gpt_oss"}, {"profile": "gpt_oss"}, "profile=gpt_oss"),
        (
            {"profile": "qwen3", "atomic_delimiters": False},
            {"profile": "qwen3", "atomic_delimiters": False},
            "profile=qwen3, atomic_delimiters=false",
        ),
    ]:
        # The options as a run records them: every value, and the profile they came from.
        options = Options.from_mapping(given).to_json()
        info = ImplementationInfo("reference", "n", "1", "python", options, "reference")
        words = shlex.split(rerun_command(info, result))
        assert json.loads(words[words.index("--options") + 1]) == shown
        assert format_options(options) == listed


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("answer", "</thianswer"),  # `</thi` + `nk>`: the first piece shown
        ("answer", "nk>answer"),  # the last piece shown
        ("ac<thi", "a</thinkc"),  # one character at a time, the close's start shown
        ("x", "<x"),  # a lone `<` held back, then released
        ("", "<<"),  # the same split `<` shown twice
    ],
)
def test_a_delimiter_piece_shown_is_not_text_added(expected: str, actual: str) -> None:
    want, got = {"assistant": expected, "thinking": "r"}, {"assistant": actual, "thinking": "r"}
    bug = channel_bug(want, got, DEFAULT.grammar)
    assert bug.name == "delimiter-fragment-shown"


def test_text_added_that_is_no_delimiter_piece_stays_text_added() -> None:
    for actual in ("Vec<T> Vec<T>", "a > b > c"):
        expected = {"assistant": actual[: len(actual) // 2 + 1].rstrip(), "thinking": ""}
        bug = channel_bug(expected, {"assistant": actual, "thinking": ""}, DEFAULT.grammar)
        assert bug.name == "text-added"


def test_a_piece_of_another_grammar_is_judged_by_that_grammar() -> None:
    bracket = Options.from_mapping({"delimiters": "bracket"}).grammar
    expected, actual = {"assistant": "a", "thinking": ""}, {"assistant": "[/THa", "thinking": ""}
    assert channel_bug(expected, actual, bracket).name == "delimiter-fragment-shown"
    assert channel_bug(expected, actual, DEFAULT.grammar).name == "text-added"


def test_a_thinking_order_difference_is_not_an_answer_hidden() -> None:
    # Native reasoning and a tag's body, in the other order: the same text in each channel.
    expected = {"assistant": "answer", "thinking": "native body"}
    actual = {"assistant": "answer", "thinking": "body native"}
    assert channel_bug(expected, actual, DEFAULT.grammar).name == "text-reordered"
    # Other characters of the same length are changed, not hidden either.
    changed = {"assistant": "answer", "thinking": "native BODY"}
    assert channel_bug(expected, changed, DEFAULT.grammar).name == "text-changed"
    hidden = {"assistant": "ans", "thinking": "native bodywer"}
    assert channel_bug(expected, hidden, DEFAULT.grammar).name == "answer-hidden"


def _result(case: str, category: str, check: str, content: str, actual: str) -> CaseResult:
    verdict = Verdict.PASS if actual == "x" else Verdict.FAIL
    return CaseResult(
        case,
        "s",
        category,
        "T",
        "must",
        check,
        verdict,
        chunks=[{"content": content, "reasoning": None}],
        expected={"assistant": "x", "thinking": ""},
        actual={"assistant": actual, "thinking": ""},
    )


def test_one_bug_class_in_two_places_is_two_signatures_the_split_one_early() -> None:
    """An orphan close shown everywhere, and a split close shown only when split (same class,
    a larger input): the split one is among the first signatures, not behind the small ones."""
    info = ImplementationInfo("i", "n", "1", "python", {}, "reference")
    results = []
    for number, category in enumerate(("orphan-close", "blocks", "unicode", "whitespace")):
        case = f"ORP{number}"
        for check in ("whole", "stream", "chars"):
            results.append(_result(case, category, check, "</think>x", "</think>x"))
    split = "<think>a long reasoning body</think>x"
    results.append(_result("SPLT", "split-delimiters", "whole", split, "x"))
    results.append(_result("SPLT", "split-delimiters", "stream", split, "</think>x"))
    groups = triage(ImplementationRun(info, results))
    assert {group.bug.name for group in groups} == {"delimiter-shown"}
    assert len(groups) == 4 * 3 + 1
    assert groups[0].example.case == "ORP0" and groups[0].check == "whole"
    assert groups[1].example.case == "SPLT" and groups[1].signature.split_only
    assert groups[1].signature.where == "split-delimiters · stream (whole passes)"


def test_a_run_under_a_profile_names_it_in_the_summary_and_the_reports(tmp_path: Path) -> None:
    ran = cli(
        "run",
        "--impl",
        "reference",
        "--options",
        '{"profile": "qwen3"}',
        "--category",
        "orphan-close",
        "--no-growth",
        "--report-dir",
        str(tmp_path),
    )
    assert ran.returncode == 0, ran.stderr
    head, row = ran.stdout.splitlines()[0], ran.stdout.splitlines()[2]
    assert head.split()[:3] == ["implementation", "version", "profile"]
    assert row.split()[0] == "reference" and row.split()[2] == "qwen3"
    assert "| profile=qwen3 |" in (tmp_path / "report.md").read_text("utf-8")
    assert "<td>profile=qwen3</td>" in (tmp_path / "report.html").read_text("utf-8")
    results = json.loads((tmp_path / "results.json").read_text("utf-8"))
    assert results["implementations"][0]["options"]["profile"] == "qwen3"
