"""The reports of runs that fuzzed: fuzzing only, fuzzing next to cases, and every verdict a
property can have, with counterexamples full of text that must show literally."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from conformance.contracts.normalizer import CHECKS
from conformance.model.results import FuzzResult, Run, Verdict
from conformance.reports import _html, _json, _junit, _markdown, load_results, write_reports
from tests.helpers import HEADLESS_CHROMIUM, chromium_path, write_results
from tests.test_reports import _outside_fences, make_run

PROPERTIES = ["differential", "chunking", "whole", "discipline", "conservation"]
SELECTION = {
    "fuzz": {
        "properties": PROPERTIES,
        "seed": 7,
        "max_examples": 500,
        "seconds": None,
    }
}
CASE_FILE = "reports/found/buggy-differential-K7Q2.yaml"
#: A close delimiter split over two chunks, CRLF line ends: the implementation leaks the
#: delimiter and turns CRLF into LF.
LEAK = {
    "chunks": [
        {"content": "<think>a\r\n</th", "reasoning": None},
        {"content": "ink>b\r\n", "reasoning": None},
    ],
    "reason": "the channels differ from the reference's",
    "expected": {"assistant": "b\r\n", "thinking": "a\r\n"},
    "actual": {"assistant": "</think>b\n", "thinking": "a\r\n"},
}
TRAILING_SPACE = {
    "chunks": [{"content": "<think>x</think>y \t", "reasoning": None}],
    "reason": "whitespace only: the whole form disagrees with the stream",
    "expected": {"assistant": "y \t", "thinking": "x"},
    "actual": {"assistant": "y", "thinking": "x"},
}
#: Conservation has no expectation: only what the implementation answered.
LOST = {
    "chunks": [{"content": "<script>alert(1)</script>", "reasoning": "why"}],
    "reason": "input characters in neither channel: '<script>'",
    "actual": {"assistant": "alert(1)</script>", "thinking": "why"},
}
HYPOTHESIS_GAVE_UP = "Flaky: Inconsistent results from replaying <think> a test case!"


def buggy_fuzz() -> list[FuzzResult]:
    return [
        FuzzResult("differential", Verdict.FAIL, 14, 0.093, 7, LEAK["reason"], LEAK, CASE_FILE),
        FuzzResult("chunking", Verdict.PASS, 500, 1.25, 7),
        FuzzResult(
            "whole", Verdict.NON_STRICT, 500, 0.5, 7, TRAILING_SPACE["reason"], TRAILING_SPACE
        ),
        FuzzResult("discipline", Verdict.ERROR, 3, 0.0, 7, HYPOTHESIS_GAVE_UP),
        FuzzResult("conservation", Verdict.FAIL, 20, 0.04, 9, LOST["reason"], LOST),
    ]


def reference_fuzz() -> list[FuzzResult]:
    return [FuzzResult(name, Verdict.PASS, 500, 0.25, 7) for name in PROPERTIES]


def fuzz_only_run() -> Run:
    """What `conformance fuzz` writes: fuzzing results and no case results."""
    run = make_run(selection=SELECTION)
    reference, buggy = run.implementations
    reference.results, reference.fuzz = [], reference_fuzz()
    buggy.results, buggy.fuzz = [], buggy_fuzz()
    return run


def mixed_run() -> Run:
    """Cases and fuzzing in one run: only `buggy` was fuzzed."""
    run = make_run()
    run.implementations[1].fuzz = buggy_fuzz()
    return run


RUNS = {"fuzz-only": fuzz_only_run, "mixed": mixed_run}


@pytest.fixture(params=list(RUNS))
def any_run(request: pytest.FixtureRequest) -> Run:
    return RUNS[request.param]()


# --- results.json ------------------------------------------------------------------------------


def test_results_json_validates_and_round_trips(any_run: Run, tmp_path: Path) -> None:
    path = write_results(any_run, tmp_path)
    data = json.loads(path.read_text("utf-8"))
    jsonschema.Draft202012Validator(_json.schema()).validate(data)
    fuzz = data["implementations"][1]["fuzz"]
    assert [entry["verdict"] for entry in fuzz] == ["FAIL", "PASS", "NON_STRICT", "ERROR", "FAIL"]
    assert fuzz[0]["counterexample"]["chunks"][0]["content"] == "<think>a\r\n</th"
    assert "counterexample" not in fuzz[3] and fuzz[3]["reason"] == HYPOTHESIS_GAVE_UP
    assert load_results(path) == any_run


# --- report.md ---------------------------------------------------------------------------------


def test_markdown_puts_what_to_fix_then_fuzzing_first(any_run: Run) -> None:
    text = _markdown.render(any_run)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    # A run that also checked cases leads with their bug classes, then the fuzzing.
    checked = any(i.results for i in any_run.implementations)
    fix = ["What to fix in `buggy`"] if checked else []
    assert headings[: len(fix) + 2] == [*fix, "Fuzzing", "Summary"]
    fuzzing = text.index("## Fuzzing")
    table = text[fuzzing : text.index("### ", fuzzing)]
    assert re.search(
        r"^\| `buggy`\s*\| `differential`\s*\| ❌ FAIL\s*\| 14\s*\| 151\s*\| 7\s*\|$", table, re.M
    )
    assert re.search(r"^\| `buggy`\s*\| `discipline`\s*\| 💥 ERROR\s*\| 3\s*\| -\s*\|", table, re.M)
    assert re.search(
        r"^\| `buggy`\s*\| `chunking`\s*\| ✅ PASS\s*\| 500\s*\| 400\s*\|", table, re.M
    )


def test_markdown_shows_each_counterexample_in_full_failures_first(any_run: Run) -> None:
    text = _markdown.render(any_run)
    fuzzing = text[text.index("## Fuzzing") : text.index("## Summary")]
    details = re.findall(r"^### \S+ (\w+) · `(\w+)` · `(\w+)`$", fuzzing, flags=re.M)
    assert details == [
        ("FAIL", "buggy", "differential"),
        ("FAIL", "buggy", "conservation"),
        ("ERROR", "buggy", "discipline"),
        ("NON_STRICT", "buggy", "whole"),
    ]
    leak = fuzzing[fuzzing.index("`differential`\n") : fuzzing.index("· `conservation`")]
    # The input as a strip split at the chunk boundary, then the visible-whitespace diff.
    assert "```text\n<think>a␍↵\n</th│ink>b␍↵\n∎\n```" in leak
    assert "@@ assistant: differs from character 0 @@\n- b␍↵\n- ∎\n+ </think>b↵\n+ ∎" in leak
    assert "@@ thinking: same (3 characters) @@" in leak
    assert f"Case file: `{CASE_FILE}` — review it, then move it into cases/ to keep it." in leak
    # The run's selection says how many examples a session ran, where it came from a session.
    count = " --max-examples 500" if "fuzz" in any_run.selection else ""
    replay = (
        "conformance fuzz --impl 'cmd:./buggy --flag' --options '{\"start_in_reasoning\": true}'"
        f" --property differential{count} --seed 7 --database none"
    )
    assert f"```sh\n{replay}\n```" in leak
    lost = fuzzing[fuzzing.index("· `conservation`") : fuzzing.index("· `discipline`")]
    assert "Actual:\n\n```text\nassistant: alert(1)</script>∎\nthinking: why∎\n```" in lost
    assert "--seed 9" in lost  # the seed this property failed under, not the session's
    gave_up = fuzzing[fuzzing.index("· `discipline`") : fuzzing.index("· `whole`")]
    assert "Flaky: Inconsistent results from replaying &lt;think&gt; a test case!" in gave_up
    assert "Input" not in gave_up and "Case file" not in gave_up
    lenient = fuzzing[fuzzing.index("· `whole`") :]
    assert "Stream (`-`) and whole form (`+`):" in lenient
    assert "- y␣→∎\n+ y∎" in lenient


def test_markdown_session_replay_names_every_fuzzed_implementation(any_run: Run) -> None:
    text = _markdown.render(any_run)
    start = text.index("## Fuzzing")
    fuzzing = text[start : text.index("### ", start)]
    block = re.search(r"Replay the session exactly with:\n\n```sh\n(.*?)\n```", fuzzing, re.S)
    assert block is not None
    commands = [shlex.split(line) for line in block.group(1).splitlines()]
    fuzzed = [i.info for i in any_run.implementations if i.fuzz]
    named = [words[words.index("--impl") + 1] for words in commands]
    # The label comes back too, where the spec alone would give another one.
    assert [
        name.removeprefix(f"{info.label}=") for name, info in zip(named, fuzzed, strict=True)
    ] == [info.spec for info in fuzzed]
    assert all(words[:2] == ["conformance", "fuzz"] for words in commands)
    assert all(words[-4:] == ["--seed", "7", "--database", "none"] for words in commands)
    assert "Seed 7." in fuzzing


def _summary_lines(markdown: str) -> list[str]:
    """The summary table's lines, header first."""
    section = markdown[markdown.index("## Summary") :].split("\n\n")[1]
    return [line for line in section.splitlines() if not line.startswith("|--")]


def test_markdown_of_a_fuzzing_session_has_no_empty_case_tables() -> None:
    text = _markdown.render(fuzz_only_run())
    assert "## Cases passed by category" not in text
    assert "problems" not in text and "Every check passed" not in text and "0/0" not in text
    header = _summary_lines(text)[0]
    assert "fuzzing properties" in header and "NON_STRICT" not in header
    reference, buggy = _summary_lines(text)[1:]
    assert reference.startswith("| ✅ `reference`") and "| 5 PASS " in reference
    assert buggy.startswith("| ❌ `buggy`") and "| 1 ERROR, 2 FAIL, 1 NON_STRICT, 1 PASS " in buggy
    assert "selection: fuzz (properties: differential, chunking" in text
    assert "seed: 7; max_examples: 500)" in text


def test_markdown_of_cases_and_fuzzing_keeps_the_case_report() -> None:
    text = _markdown.render(mixed_run())
    assert text.index("## Fuzzing") < text.index("## Summary")
    assert text.index("## Summary") < text.index("## Cases passed by category")
    header = _summary_lines(text)[0]
    assert "NON_STRICT" in header and "fuzzing properties" in header
    reference = _summary_lines(text)[1]
    assert reference.startswith("| ✅ `reference`") and reference.rstrip(" |").endswith("-")
    assert "## `buggy`: 10 problems" in text and "## `reference`: 0 problems" in text


def test_markdown_says_when_no_check_ran() -> None:
    run = fuzz_only_run()
    run.implementations[0].fuzz = []  # neither cases nor fuzzing
    text = _markdown.render(run)
    assert "## `reference`: 0 problems\n\nNo checks ran." in text
    assert "Every check passed" not in text


def test_markdown_escapes_counterexample_text_outside_code(any_run: Run) -> None:
    prose = _outside_fences(_markdown.render(any_run))
    for raw in ("<think>", "</think>", "<script>", "\r"):
        assert raw not in prose


# --- junit.xml ---------------------------------------------------------------------------------


def _suites(run: Run) -> dict[str, ET.Element]:
    root = ET.fromstring(_junit.render(run).encode("utf-8"))
    return {suite.get("name"): suite for suite in root.findall("testsuite")}


def test_junit_has_one_testcase_per_property() -> None:
    run = fuzz_only_run()
    root = ET.fromstring(_junit.render(run).encode("utf-8"))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("10", "2", "1")
    suites = _suites(run)
    assert (suites["reference"].get("tests"), suites["reference"].get("failures")) == ("5", "0")
    buggy = suites["buggy"]
    assert [buggy.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        "5",
        "2",
        "1",
        "0",
    ]
    cases = {case.get("name"): case for case in buggy.findall("testcase")}
    assert list(cases) == [f"fuzz[{r.property}]" for r in buggy_fuzz()]
    assert {case.get("classname") for case in cases.values()} == {"conformance.buggy.fuzz"}
    for case, result in zip(cases.values(), buggy_fuzz(), strict=True):
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert (properties["examples"], properties["seed"]) == (
            str(result.examples),
            str(result.seed),
        )
    failure = cases["fuzz[differential]"].find("failure")
    assert failure.get("type") == "FAIL"
    assert failure.get("message") == "FAIL: the channels differ from the reference's"
    assert "<think>a␍↵\n</th│ink>b␍↵\n∎" in failure.text
    assert "- b␍↵\n- ∎\n+ </think>b↵\n+ ∎" in failure.text
    assert (
        f"case file: {CASE_FILE} (review it, then move it into cases/ to keep it)" in failure.text
    )
    assert "--property differential --max-examples 500 --seed 7 --database none" in failure.text
    error = cases["fuzz[discipline]"].find("error")
    assert error.get("message") == f"ERROR: {HYPOTHESIS_GAVE_UP}"
    assert cases["fuzz[discipline]"].find("failure") is None
    lenient = cases["fuzz[whole]"]
    properties = {p.get("name"): p.get("value") for p in lenient.iter("property")}
    assert properties["verdict"] == "NON_STRICT" and lenient.find("failure") is None
    assert "- stream, + whole form" in lenient.find("system-out").text
    passed = cases["fuzz[chunking]"]
    assert [child.tag for child in passed] == ["properties"]


def test_junit_counts_cases_and_properties_together() -> None:
    suites = _suites(mixed_run())
    buggy = suites["buggy"]
    # 8 cases x 4 checks (4 failures, 2 errors, 3 skipped) and 5 properties (2 FAIL, 1 ERROR).
    assert [buggy.get(k) for k in ("tests", "failures", "errors", "skipped")] == [
        str(8 * len(CHECKS) + 5),
        "6",
        "3",
        "3",
    ]
    names = [case.get("name") for case in buggy.findall("testcase")]
    assert names[-5:] == [f"fuzz[{r.property}]" for r in buggy_fuzz()]
    assert suites["reference"].get("tests") == str(8 * len(CHECKS))


# --- report.html (static) ----------------------------------------------------------------------


def test_html_puts_fuzzing_before_the_cases_and_escapes_it(any_run: Run) -> None:
    page = _html.render(any_run)
    assert page.index('<section id="fuzzing">') < page.index('<section id="summary">')
    assert "<think>" not in page and "<script>alert" not in page and page.count("<script>") == 1
    assert "&lt;/think&gt;" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "replaying &lt;think&gt; a test case" in page
    assert (
        f"<code>{CASE_FILE}</code> &mdash; review it, then move it into cases/ to keep it." in page
    )


def test_html_of_a_fuzzing_session_has_no_case_matrix() -> None:
    page = _html.render(fuzz_only_run())
    assert 'id="cases"' not in page and 'id="problems"' not in page
    assert "worst verdict over the case" not in page
    assert '<ul class="legend">' in page  # the verdicts and whitespace symbols, once
    assert '<span class="badge v-XFAIL">' not in page  # no verdict a property cannot have
    summary = page[page.index('<section id="summary">') :]
    assert "<th>fuzzing properties</th>" in summary and '<th><span class="badge' not in summary


def test_html_of_cases_and_fuzzing_keeps_the_matrix() -> None:
    page = _html.render(mixed_run())
    assert page.index('id="fuzzing"') < page.index('id="summary"') < page.index('id="cases"')
    assert page.count('<ul class="legend">') == 1


# --- report.html (in a browser) ----------------------------------------------------------------


@dataclass
class _Element:
    """A fuzzing cell or panel as rendered: its classes, badges, links and text."""

    classes: list[str]
    id: str = ""
    badges: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


class _FuzzDom(HTMLParser):
    """The fuzzing section as rendered: its cells and panels by (implementation, property)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], _Element] = {}
        self.panels: dict[tuple[str, str], _Element] = {}
        self.tags: list[str] = []
        self._open: list[_Element | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        classes = attributes.get("class", "").split()
        current = next((e for e in reversed(self._open) if e is not None), None)
        element = None
        if tag == "td" and "fz" in classes:
            element = self.cells[_key(attributes)] = _Element(classes)
        elif tag == "div" and "fuzz-case" in classes:
            element = self.panels[_key(attributes)] = _Element(classes, attributes["id"])
        elif tag == "span" and "badge" in classes and current is not None:
            current.badges.append(attributes["class"])
        elif tag == "a" and current is not None:
            current.links.append(attributes["href"])
        if tag in ("td", "div"):
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "div") and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for element in self._open:
            if element is not None:
                element.text.append(data)


def _key(attributes: dict[str, str]) -> tuple[str, str]:
    return attributes["data-impl"], attributes["data-property"]


def _render_in_chromium(page: Path, profile: Path) -> tuple[str, str]:
    """The DOM after the script ran, and what the page wrote to the console."""
    command = [
        chromium_path(),
        *HEADLESS_CHROMIUM,
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


@pytest.mark.slow
def test_html_fuzzing_renders_in_a_browser(tmp_path: Path) -> None:
    write_reports(fuzz_only_run(), tmp_path / "reports")
    page, console = _render_in_chromium(tmp_path / "reports" / "report.html", tmp_path / "p")
    assert "Uncaught" not in console  # the script copes with a page without a case matrix
    dom = _FuzzDom()
    dom.feed(page)
    verdicts = {key: cell.classes for key, cell in dom.cells.items()}
    assert verdicts == {
        **{("reference", r.property): ["fz", "v-PASS"] for r in reference_fuzz()},
        **{("buggy", r.property): ["fz", f"v-{r.verdict.value}"] for r in buggy_fuzz()},
    }
    for cell in dom.cells.values():
        assert cell.badges == [f"badge {cell.classes[1]}"]
    assert "14 examples · 151/s" in "".join(dom.cells[("buggy", "differential")].text)
    # A cell with a counterexample links to its panel; panels go failures first.
    assert list(dom.panels) == [
        ("buggy", "differential"),
        ("buggy", "conservation"),
        ("buggy", "discipline"),
        ("buggy", "whole"),
    ]
    for key, panel in dom.panels.items():
        assert dom.cells[key].links == [f"#{panel.id}"]
        assert panel.badges[0] == f"badge {dom.cells[key].classes[1]}"
    assert dom.cells[("buggy", "chunking")].links == []
    assert "counterexample ↓" in "".join(dom.cells[("buggy", "whole")].text)
    assert "details ↓" in "".join(dom.cells[("buggy", "discipline")].text)  # no counterexample
    # Counterexample text is text: no <think> or <script> element, the literal tags shown.
    assert "think" not in dom.tags and dom.tags.count("script") == 1
    leak = "".join(dom.panels[("buggy", "differential")].text)
    assert "<think>a␍↵\n</th" in leak and "</think>b↵" in leak
    assert CASE_FILE in leak and "--property differential" in leak
    lost = "".join(dom.panels[("buggy", "conservation")].text)
    assert "<script>alert(1)</script>" in lost and "expected" not in lost
    gave_up = "".join(dom.panels[("buggy", "discipline")].text)
    assert HYPOTHESIS_GAVE_UP in gave_up and "input" not in gave_up


@pytest.mark.slow
def test_html_with_cases_and_fuzzing_runs_its_script_in_a_browser(tmp_path: Path) -> None:
    run = replace(mixed_run(), started="2026-02-03T00:00:00+00:00")
    write_reports(run, tmp_path / "reports")
    page, console = _render_in_chromium(tmp_path / "reports" / "report.html", tmp_path / "p")
    assert "Uncaught" not in console
    # The view script ran past the fuzzing section (and, with failures, shows the problems).
    assert re.search(r"\b\d of 8 cases shown", page)
    dom = _FuzzDom()
    dom.feed(page)
    assert {impl for impl, _ in dom.cells} == {"buggy"}
