"""The four reports and `conformance diff`, from hand-built runs with every verdict and odd text."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.contracts.normalizer import CHECKS
from conformance.model.results import (
    CaseResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)
from conformance.reports import (
    ResultsFileError,
    _diff,
    _html,
    _json,
    _junit,
    _markdown,
    load_results,
    write_reports,
)
from conformance.reports._diff import Change, compare
from conformance.reports._visible import visible, window

from .helpers import HEADLESS_CHROMIUM, chromium_path, cli, write_results

# --- building runs -----------------------------------------------------------------------------

CASES = {
    # id: (slug, category, title)
    "AAAA": ("plain-answer", "blocks", "Plain text passes through"),
    "BBBB": ("close-tag-leak", "blocks", "A </think> split over two chunks"),
    "CCCC": ("script-and-whitespace", "whitespace", "Tabs, CRLF and <script>alert(1)</script>"),
    "DDDD": ("emoji-and-invisibles", "unicode", "Emoji 🙂 and a zero-width space"),
    "EEEE": ("slow-answer", "unicode", ""),
    "FFFF": ("stream-unsupported", "empty", "Stream op unsupported"),
    "GGGG": ("known-bug", "empty", "A bug the expectation file knows"),
    "HHHH": ("known-bug-fixed", "empty", "A bug the expectation file thinks is there"),
}


def result(case: str, check: str, verdict: Verdict = Verdict.PASS, **fields: Any) -> CaseResult:
    slug, category, title = CASES[case]
    return CaseResult(
        case=case,
        slug=slug,
        category=category,
        taxonomy=f"{category.upper()}.x",
        level="must",
        check=check,
        verdict=verdict,
        title=title,
        **fields,
    )


def all_pass(case: str) -> list[CaseResult]:
    return [result(case, check) for check in CHECKS]


LEAK = {
    "reason": "assistant gained '</think>' (a delimiter) at chunk 1",
    "chunks": [
        {"content": "<think>a</th", "reasoning": None},
        {"content": "ink>b", "reasoning": None},
    ],
    "expected": {"assistant": "b", "thinking": "a"},
    "actual": {"assistant": "</think>b", "thinking": "a"},
}
WHITESPACE = {
    "reason": "whitespace differs in assistant",
    "chunks": [{"content": "\tx <script>alert(1)</script>\r\n", "reasoning": "why\tnot"}],
    "expected": {"assistant": "\tx <script>alert(1)</script>\r\n", "thinking": "why\tnot"},
    "actual": {"assistant": "x <script>alert(1)</script>\n", "thinking": "why\tnot"},
}
EMOJI = {
    "reason": "raised ValueError: cannot handle \U0001f642\x1b[0m",
    "chunks": [{"content": "<think>\U0001f642\u200b</think>ok", "reasoning": None}],
    "expected": {"assistant": "ok", "thinking": "\U0001f642\u200b"},
    "stderr": "Traceback (most recent call last):\n  ValueError: <think> \x00 \U0001f642",
}


def buggy_results() -> list[CaseResult]:
    skip = "unsupported: stream op not implemented"
    expectation = {"reason": "known bug #12", "checks": "whole"}
    return [
        *all_pass("AAAA"),
        result("BBBB", "whole"),
        result("BBBB", "stream", Verdict.FAIL, **LEAK),
        result("BBBB", "chars", Verdict.FAIL, **LEAK),
        result("BBBB", "splits", Verdict.FAIL, **LEAK),
        *(result("CCCC", check, Verdict.NON_STRICT, **WHITESPACE) for check in CHECKS),
        result("DDDD", "whole", Verdict.ERROR, **EMOJI),
        *(result("DDDD", check) for check in CHECKS[1:]),
        result("EEEE", "whole"),
        result("EEEE", "stream", Verdict.TIMEOUT, reason="no answer within 5 s", chunks=[]),
        *(result("EEEE", check) for check in CHECKS[2:]),
        result("FFFF", "whole"),
        *(result("FFFF", check, Verdict.SKIP, reason=skip) for check in CHECKS[1:]),
        result(
            "GGGG",
            "whole",
            Verdict.XFAIL,
            reason="expected failure",
            expectation=expectation,
            **{k: v for k, v in LEAK.items() if k != "reason"},
        ),
        *(result("GGGG", check) for check in CHECKS[1:]),
        result(
            "HHHH", "whole", Verdict.XPASS, reason="passed unexpectedly", expectation=expectation
        ),
        *(result("HHHH", check) for check in CHECKS[1:]),
    ]


def reference_results() -> list[CaseResult]:
    skip = "unsupported: stream op not implemented"
    results = [r for case in CASES for r in all_pass(case)]
    # Both implementations skip the same checks of FFFF: a row the pruned view hides.
    return [
        replace(r, verdict=Verdict.SKIP, reason=skip)
        if r.case == "FFFF" and r.check != "whole"
        else r
        for r in results
    ]


def make_run(**changes: Any) -> Run:
    run = Run(
        harness_version="0.1.0",
        spec_version="1.0",
        started="2026-01-02T03:04:05+00:00",
        duration=1.5,
        selection={"checks": list(CHECKS), "categories": []},
        implementations=[
            ImplementationRun(
                ImplementationInfo("reference", "reference", "0.1.0", "python", {}, "reference"),
                reference_results(),
            ),
            ImplementationRun(
                ImplementationInfo(
                    "buggy",
                    "buggy <normalizer>",
                    "2.0",
                    "rust",
                    {"start_in_reasoning": True, "matching": "exact"},
                    "cmd:./buggy --flag",
                ),
                buggy_results(),
            ),
        ],
    )
    return replace(run, **changes)


@pytest.fixture
def run() -> Run:
    return make_run()


@pytest.fixture
def written(run: Run, tmp_path: Path) -> dict[str, Path]:
    return {path.name: path for path in write_reports(run, tmp_path / "reports")}


# --- results.json ------------------------------------------------------------------------------


def test_write_reports_writes_the_four_files(written: dict[str, Path]) -> None:
    assert sorted(written) == ["junit.xml", "report.html", "report.md", "results.json"]
    assert all(path.stat().st_size > 0 for path in written.values())


def test_results_json_is_valid_against_its_schema(written: dict[str, Path]) -> None:
    schema = _json.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = json.loads(written["results.json"].read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
    buggy = data["implementations"][1]
    assert buggy["summary"] == {
        "PASS": 18, "NON_STRICT": 4, "FAIL": 3, "ERROR": 1,
        "TIMEOUT": 1, "SKIP": 3, "XFAIL": 1, "XPASS": 1,
    }  # fmt: skip
    failure = next(r for r in buggy["results"] if r["verdict"] == "FAIL")
    assert {"case", "check", "verdict", "reason", "chunks", "expected", "actual"} <= set(failure)


def test_results_json_round_trips(run: Run, written: dict[str, Path]) -> None:
    loaded = load_results(written["results.json"])
    assert loaded == run
    assert loaded.to_json() == run.to_json()


def test_results_json_keeps_a_lone_surrogate(run: Run, tmp_path: Path) -> None:
    broken = result("AAAA", "whole", Verdict.FAIL, reason="got \ud800", chunks=[],
                    expected={"assistant": "", "thinking": ""},
                    actual={"assistant": "\ud800", "thinking": ""})  # fmt: skip
    run.implementations[1].results.append(broken)
    write_reports(run, tmp_path)
    assert (
        load_results(tmp_path / _json.FILENAME).implementations[1].results[-1].actual
        == broken.actual
    )


def test_the_schema_describes_run_to_json_exactly(run: Run) -> None:
    validator = jsonschema.Draft202012Validator(_json.schema())
    data = run.to_json()
    data["implementations"][0]["extra"] = 1
    assert not validator.is_valid(data)
    data = run.to_json()
    failure = next(r for r in data["implementations"][1]["results"] if r["verdict"] == "FAIL")
    del failure["actual"]
    assert not validator.is_valid(data)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not JSON (line 1, column 2"),
        ('{"harness_version": "1"}', "not a conformance results document"),
        ("[1, 2]", "not a conformance results document"),
    ],
)
def test_load_results_says_which_file_and_what_is_wrong(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "old.json"
    if content is not None:
        path.write_text(content, "utf-8")
    with pytest.raises(ResultsFileError) as raised:
        load_results(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_load_results_points_at_the_bad_field(run: Run, tmp_path: Path) -> None:
    data = run.to_json()
    data["implementations"][1]["results"][3]["verdict"] = "BROKEN"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(ResultsFileError, match=r"at implementations/1/results/3/verdict: 'BROKEN'"):
        load_results(path)


# --- visible text ------------------------------------------------------------------------------


def test_visible_shows_every_invisible_character() -> None:
    text = "a b\tc\r\nd\u200b\u00a0e\U0001f642␣"
    assert visible(text) == "a␣b→c␍↵\nd\\u200b\\u00a0e\U0001f642\\u2423∎"


def test_window_keeps_a_little_context_around_the_difference() -> None:
    expected = "x" * 100 + "middle" + "y" * 100
    actual = "x" * 100 + "MIDDLE" + "y" * 100
    cut = window(expected, actual, context=5)
    assert (cut.before, cut.expected, cut.actual, cut.after) == (
        "xxxxx",
        "middle",
        "MIDDLE",
        "yyyyy",
    )
    assert (cut.skipped_before, cut.skipped_after, cut.first_difference) == (95, 95, 100)


# --- report.md ---------------------------------------------------------------------------------


def _outside_fences(markdown: str) -> str:
    """The prose of a Markdown text: without fenced blocks and code spans (both literal)."""
    prose = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", markdown, flags=re.S | re.M)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", prose)


def test_markdown_has_summary_category_table_and_header(written: dict[str, Path]) -> None:
    text = written["report.md"].read_text("utf-8")
    assert "harness 0.1.0 · spec 1.0 · started 2026-01-02T03:04:05+00:00" in text
    summary = next(line for line in text.splitlines() if "`buggy`" in line and "rust" in line)
    assert "start_in_reasoning=true" in summary and "matching" not in summary
    assert re.search(
        r"\|\s*18\s*\|\s*4\s*\|\s*3\s*\|\s*1\s*\|\s*1\s*\|\s*3\s*\|\s*1\s*\|\s*1\s*\|", summary
    )
    blocks = next(line for line in text.splitlines() if line.startswith("| blocks"))
    assert re.search(r"\|\s*2/2\s*\|\s*1/2\s*\|", blocks)


def test_markdown_shows_the_whitespace_diff_of_a_failure(written: dict[str, Path]) -> None:
    text = written["report.md"].read_text("utf-8")
    assert "@@ assistant: differs from character 0 @@" in text
    assert "- →x␣<script>alert(1)</script>␍↵\n- ∎\n+ x␣<script>alert(1)</script>↵\n+ ∎" in text
    assert "@@ assistant: differs from character 0 @@\n- b∎\n+ </think>b∎" in text
    assert "<think>a</th│ink>b∎" in text  # the input as a strip split at each chunk


def test_markdown_escapes_case_text_outside_code(written: dict[str, Path]) -> None:
    prose = _outside_fences(written["report.md"].read_text("utf-8"))
    assert "<script>" not in prose and "<think>" not in prose and "</think>" not in prose
    assert "&lt;/think&gt;" in prose


def test_markdown_orders_problems_and_counts_skips(written: dict[str, Path]) -> None:
    text = written["report.md"].read_text("utf-8")
    buggy = text[text.index("## `buggy`") :]
    headings = re.findall(r"^### \S+ (\w+) · `(\w+)`", buggy, flags=re.M)
    verdicts = [verdict for verdict, _ in headings]
    assert verdicts == ["FAIL"] * 3 + ["ERROR", "TIMEOUT", "XPASS"] + ["NON_STRICT"] * 4
    assert "### Expected failures (XFAIL): 1" in buggy
    assert "### Skipped: 3" in buggy
    assert re.search(r"\| unsupported: stream op not implemented\s*\|\s*3\s*\|", buggy)
    assert "Traceback" in buggy  # stderr of the ERROR


def test_markdown_caps_the_detailed_failures(run: Run) -> None:
    many = [replace(r, case=f"{i:04d}") for i in range(120) for r in run.implementations[1].results
            if r.verdict is Verdict.FAIL][:120]  # fmt: skip
    run.implementations[1].results = many
    text = _markdown.render(run, max_details=50)
    # The detail section, after the bug classes' smallest examples (`#### ...`).
    details = [line for line in text.splitlines() if line.startswith("### ❌ FAIL")]
    assert len(details) == 50
    assert "*70 more not shown here (70 FAIL); see results.json.*" in text


# --- junit.xml ---------------------------------------------------------------------------------


def test_junit_counts_and_names(written: dict[str, Path]) -> None:
    root = ET.parse(written["junit.xml"]).getroot()
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["reference", "buggy"]
    buggy = suites["buggy"]
    cases = buggy.findall("testcase")
    assert len(cases) == 8 * len(CHECKS)
    for suite in suites.values():
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("errors")) == sum(len(c.findall("error")) for c in cases)
        assert int(suite.get("skipped")) == sum(len(c.findall("skipped")) for c in cases)
    assert (buggy.get("failures"), buggy.get("errors"), buggy.get("skipped")) == ("4", "2", "3")
    assert root.get("tests") == str(2 * 8 * len(CHECKS)) and root.get("skipped") == "6"
    by_name = {c.get("name"): c for c in buggy.findall("testcase")}
    leak = by_name["BBBB-close-tag-leak[stream]"]
    assert leak.get("classname") == "conformance.buggy.blocks"
    failure = leak.find("failure")
    assert failure.get("message").startswith("FAIL: assistant gained '</think>'")
    assert "+ </think>b∎" in failure.text
    assert by_name["HHHH-known-bug-fixed[whole]"].find("failure").get("type") == "XPASS"
    assert by_name["EEEE-slow-answer[stream]"].find("error").get("type") == "TIMEOUT"
    assert "\\u001b" in by_name["DDDD-emoji-and-invisibles[whole]"].find("error").get("message")
    xfail = by_name["GGGG-known-bug[whole]"]
    assert xfail.find("failure") is None and "XFAIL" in xfail.find("system-out").text
    assert "expectation: reason=known bug #12, checks=whole" in xfail.find("system-out").text
    assert "input and output: report.md" in xfail.find("system-out").text
    assert "</think>" not in xfail.find("system-out").text  # its channels are report.md's
    lenient = by_name["CCCC-script-and-whitespace[chars]"]
    properties = {p.get("name"): p.get("value") for p in lenient.iter("property")}
    assert properties["verdict"] == "NON_STRICT" and lenient.find("failure") is None
    options = {p.get("name"): p.get("value") for p in buggy.find("properties")}
    assert options["option.start_in_reasoning"] == "true"


def test_junit_reports_an_implementation_that_could_not_run(run: Run, tmp_path: Path) -> None:
    run.implementations[1].results = []
    run.implementations[1].failure = "exited with status 127\nsh: buggy: not found"
    write_reports(run, tmp_path)
    suite = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")[1]
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert "not found" in suite.find("testcase/error").text


# --- report.html (static) ----------------------------------------------------------------------


def test_html_is_self_contained_and_escaped(written: dict[str, Path]) -> None:
    page = written["report.html"].read_text("utf-8")
    # Links within the page only (the bug classes link to their cases in the matrix).
    assert not re.search(r"src\s*=|href\s*=\s*\"[^#]|@import|url\(|<link", page)
    assert "https://" not in page and "http://" not in page
    assert "<think>" not in page and "<script>alert" not in page
    assert page.count("<script>") == 1
    assert "&lt;/think&gt;" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "buggy &lt;normalizer&gt;" in page


def test_html_marks_the_whitespace_diff(written: dict[str, Path]) -> None:
    page = written["report.html"].read_text("utf-8")
    assert '<del><span class="ws">→</span></del>' in page
    assert "<ins>&lt;/think&gt;</ins>" in page


def test_html_gives_a_known_divergence_its_rule_and_a_failure_its_text(
    written: dict[str, Path],
) -> None:
    """An expected failure's panel: its own reason and its expectation; its input and
    channels are left to report.md (in a matrix run they are most results)."""
    page = written["report.html"].read_text("utf-8")

    def panel(case: str) -> str:
        row = page[page.index(f'id="case-{case}"') :]
        return row[: row.index("</tr>")]

    known = panel("GGGG")
    assert "Expectation: reason: known bug #12, checks: whole" in known
    assert 'class="chunks"' not in known and 'class="channels"' not in known
    assert "its input and output are in report.md" in page
    failed = panel("BBBB")
    assert 'class="chunks"' in failed and 'class="channels"' in failed
    # report.md keeps the expected failure in full.
    assert "GGGG" in written["report.md"].read_text("utf-8")


def test_html_names_a_locked_rule_once_and_its_failures_by_it(tmp_path: Path) -> None:
    """A lock's rule: each XFAIL cell shows the failure's own reason and the rule's id; the
    summary gives the rule's reason once, with how many checks it explains."""
    rule = {"reason": "drops text after an orphan </think>", "rule": "lib.orphan", "link": "-"}
    results = [
        replace(
            result(
                case, "whole", Verdict.XFAIL, **{k: v for k, v in LEAK.items() if k != "reason"}
            ),
            reason=f"expected failure ({rule['reason']}): assistant lost 'b'",
            expectation=rule,
        )
        for case in ("AAAA", "BBBB")
    ]
    run = make_run()
    run.implementations[1].results = results
    page = _html.render(run)
    assert page.count("drops text after an orphan &lt;/think&gt;") == 1
    assert "<code>lib.orphan</code> (2 checks)" in page
    assert page.count("Known divergence <code>lib.orphan</code>") == 2
    assert page.count("assistant lost &#39;b&#39;") == 2
    junit = _junit.render(run)
    assert junit.count("drops text after an orphan &lt;/think&gt;") == 2  # once per test
    assert junit.count("expectation: rule=lib.orphan, link=-") == 2


def test_html_shows_a_written_case_and_its_derived_forms_as_one_row() -> None:
    """Under a profile an implementation runs a derived form (`AAAA~one`) where another runs
    the written case: one row, each cell naming the form its checks ran on."""
    run = make_run()
    run.implementations[1].results = [
        replace(r, case=f"{r.case}~one", title=f"{r.title} [derived: one chunk]")
        for r in run.implementations[1].results
        if r.case == "AAAA"
    ]
    page = _html.render(run)
    assert page.count('id="case-AAAA"') == 1 and 'id="case-AAAA~one"' not in page
    row = page[page.index('id="case-AAAA"') :]
    row = row[: row.index("</tr>")]
    assert "Plain text passes through" in row and "[derived" not in row.split("</th>")[0]
    assert "whole (AAAA~one), stream (AAAA~one)" in row  # the derived form's passes
    assert "whole, stream, chars, splits" in row  # the reference's, on the written case


# --- report.html (in a browser) ----------------------------------------------------------------


def _dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    command = [
        chromium_path(),
        *HEADLESS_CHROMIUM,
        f"--user-data-dir={profile}",
        "--dump-dom",
        page.resolve().as_uri() + fragment,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class _Dom(HTMLParser):
    """Just enough of the rendered DOM: elements by tag with attributes, and text per row."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.rows: dict[str, dict[str, str]] = {}
        self.row_text: dict[str, list[str]] = {}
        self._row: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        self.tags.append((tag, attributes))
        if tag == "tr" and "case" in attributes.get("class", "").split():
            self._row = attributes["data-case"]
            self.rows[self._row] = attributes
            self.row_text[self._row] = []
        elif tag == "td" and self._row and "cell" in attributes.get("class", ""):
            self.rows[self._row][f"cell:{attributes['data-impl']}"] = attributes["class"]

    def handle_data(self, data: str) -> None:
        if self._row:
            self.row_text[self._row].append(data)

    def elements(self, tag: str) -> list[dict[str, str]]:
        return [attributes for name, attributes in self.tags if name == tag]


@pytest.mark.slow
def test_html_renders_in_a_browser(written: dict[str, Path], tmp_path: Path) -> None:
    page = _dump_dom(written["report.html"], tmp_path / "profile", "#all")
    dom = _Dom()
    dom.feed(page)
    assert list(dom.rows) == list(CASES)  # one row per case, grouped by category in run order
    header = [th for th in dom.elements("th") if th.get("scope") == "col"]
    assert len(header) == 3  # the case column and one per implementation
    expected = {
        "AAAA": ("PASS", "PASS"),
        "BBBB": ("PASS", "FAIL"),
        "CCCC": ("PASS", "NON_STRICT"),
        "DDDD": ("PASS", "ERROR"),
        "EEEE": ("PASS", "TIMEOUT"),
        "FFFF": ("SKIP", "SKIP"),
        "GGGG": ("PASS", "XFAIL"),
        "HHHH": ("PASS", "XPASS"),
    }
    for case, (reference, buggy) in expected.items():
        assert dom.rows[case]["cell:reference"] == f"cell v-{reference}"
        assert dom.rows[case]["cell:buggy"] == f"cell v-{buggy}"
    # Case text is text: no <think> or <script> element, the literal tag among the row's text.
    assert not dom.elements("think")
    assert len(dom.elements("script")) == 1
    assert "<think>a</th" in "".join(dom.row_text["BBBB"])
    assert "<script>alert(1)</script>" in "".join(dom.row_text["CCCC"])
    # Pruned view: the toggle exists; the rows every implementation agrees on are marked.
    assert [i for i in dom.elements("input") if i.get("id") == "prune"]
    same = [case for case, row in dom.rows.items() if "same" in row["class"].split()]
    assert same == ["AAAA", "FFFF"]
    assert not any("hidden" in row for row in dom.rows.values())
    assert "8 of 8 cases shown" in page  # the script ran


@pytest.mark.slow
def test_html_pruned_view_hides_agreeing_rows_in_a_browser(
    written: dict[str, Path], tmp_path: Path
) -> None:
    dom = _Dom()
    page = _dump_dom(written["report.html"], tmp_path / "profile", "#pruned")
    dom.feed(page)
    hidden = [case for case, row in dom.rows.items() if "hidden" in row]
    assert hidden == ["AAAA", "FFFF"]
    assert "6 of 8 cases shown" in page


@pytest.mark.slow
def test_html_opens_on_the_problems_in_a_browser(written: dict[str, Path], tmp_path: Path) -> None:
    dom = _Dom()
    page = _dump_dom(written["report.html"], tmp_path / "profile")
    dom.feed(page)
    hidden = [case for case, row in dom.rows.items() if "hidden" in row]
    assert hidden == ["AAAA", "FFFF"]  # every check passed or was skipped
    assert "6 of 8 cases shown" in page


def test_html_leads_with_bug_classes_and_counts_categories(run: Run) -> None:
    page = _html.render(run)
    # What to fix comes first, problems-only is on, and each category row counts passes.
    assert page.index('id="fix"') < page.index('id="summary"') < page.index('id="cases"')
    assert '<input type="checkbox" id="problems" checked>' in page
    assert re.search(r'<td class="count some"[^>]*>\d+/\d+ passed</td>', page)
    fix = page[page.index('id="fix"') : page.index('id="summary"')]
    assert 'data-class="delimiter-shown"' in fix and 'href="#case-BBBB"' in fix
    assert 'id="case-BBBB"' in page


def test_html_of_a_clean_run_shows_every_case(run: Run) -> None:
    run.implementations = run.implementations[:1]  # the reference: nothing to fix
    page = _html.render(run)
    assert 'id="fix"' not in page
    assert '<input type="checkbox" id="problems">' in page


# --- diff --------------------------------------------------------------------------------------


def _set(run: Run, label: str, case: str, check: str, verdict: Verdict) -> None:
    for implementation in run.implementations:
        if implementation.info.label == label:
            # A FAIL or NON_STRICT carries its input and both splits (the schema says so).
            detail = LEAK if verdict in (Verdict.FAIL, Verdict.NON_STRICT) else {}
            implementation.results = [
                replace(r, **{**detail, "verdict": verdict, "reason": f"now {verdict.value}"})
                if (r.case, r.check) == (case, check)
                else r
                for r in implementation.results
            ]


def _changed_run() -> Run:
    new = make_run(started="2026-01-03T00:00:00+00:00")
    _set(new, "reference", "AAAA", "stream", Verdict.FAIL)  # regressed
    _set(new, "buggy", "BBBB", "stream", Verdict.PASS)  # fixed
    _set(new, "buggy", "BBBB", "chars", Verdict.ERROR)  # changed: both not ok
    _set(new, "buggy", "AAAA", "whole", Verdict.NON_STRICT)  # changed: both ok
    buggy = new.implementations[1]
    buggy.results = [r for r in buggy.results if r.case != "HHHH"]  # gone
    buggy.results.append(result("AAAA", "fuzz", Verdict.FAIL, **LEAK))  # new
    return new


def test_compare_classifies_every_change() -> None:
    comparison = compare(make_run(), _changed_run())
    found = {(c.change, c.label, c.case, c.check, c.old, c.new) for c in comparison.changes}
    P, F, E, N = Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.NON_STRICT
    assert found == {
        (Change.REGRESSED, "reference", "AAAA", "stream", P, F),
        (Change.FIXED, "buggy", "BBBB", "stream", F, P),
        (Change.CHANGED, "buggy", "BBBB", "chars", F, E),
        (Change.CHANGED, "buggy", "AAAA", "whole", P, N),
        (Change.NEW, "buggy", "AAAA", "fuzz", None, F),
        *((Change.GONE, "buggy", "HHHH", check, v, None)
          for check, v in zip(CHECKS, (Verdict.XPASS, P, P, P), strict=True)),
    }  # fmt: skip
    assert comparison.regressed
    assert comparison.changes[0].change is Change.REGRESSED
    assert comparison.unchanged == 2 * 8 * len(CHECKS) - 4 - 4


def test_compare_counts_results_of_a_broken_implementation_as_regressed() -> None:
    new = make_run()
    new.implementations[1].results = []
    new.implementations[1].failure = "could not start"
    comparison = compare(make_run(), new)
    regressed = [c for c in comparison.changes if c.change is Change.REGRESSED]
    gone = [c for c in comparison.changes if c.change is Change.GONE]
    ok = sum(1 for r in make_run().implementations[1].results if r.verdict.ok)
    assert len(regressed) == ok and len(gone) == 8 * len(CHECKS) - ok
    assert "could not start" in regressed[0].reason


def test_diff_markdown_escapes_case_text() -> None:
    new = make_run()
    _set(new, "reference", "AAAA", "stream", Verdict.FAIL)
    new.implementations[0].results[1] = replace(new.implementations[0].results[1],
                                                 reason="leaked <think>|x")  # fmt: skip
    text = _diff.render(compare(make_run(), new), "markdown")
    assert "### regressed (1)" in text
    assert "leaked &lt;think&gt;\\|x" in text


def test_diff_cli_exit_codes(tmp_path: Path) -> None:
    old = write_results(make_run(), _mkdir(tmp_path / "old"))
    new = write_results(_changed_run(), _mkdir(tmp_path / "new"))
    fixed_run = make_run()
    _set(fixed_run, "buggy", "BBBB", "stream", Verdict.PASS)
    fixed = write_results(fixed_run, _mkdir(tmp_path / "fixed"))

    regressed = cli("diff", old, new)
    assert regressed.returncode == 1, regressed.stderr
    assert "REGRESSED (1)" in regressed.stdout and "FIXED (1)" in regressed.stdout
    assert "1 regressed, 1 fixed, 2 changed, 1 new, 4 gone" in regressed.stdout

    only_fixed = cli("diff", old, fixed, "--format", "markdown")
    assert only_fixed.returncode == 0, only_fixed.stderr
    assert "### fixed (1)" in only_fixed.stdout and "regressed (" not in only_fixed.stdout

    same = cli("diff", old, old)
    assert same.returncode == 0 and "0 regressed" in same.stdout

    broken = tmp_path / "broken.json"
    broken.write_text('{"implementations": 3}', "utf-8")
    for bad, message in ((broken, "not a conformance results document"),
                         (tmp_path / "missing.json", "no such file")):  # fmt: skip
        failed = cli("diff", old, bad)
        assert failed.returncode == 2
        assert f"{bad}: {message}" in failed.stderr


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- write_reports -----------------------------------------------------------------------------


def test_reports_of_an_empty_run(tmp_path: Path) -> None:
    empty = make_run(implementations=[])
    paths = write_reports(empty, tmp_path)
    assert len(paths) == 4
    assert load_results(tmp_path / "results.json") == empty
    assert ET.parse(tmp_path / "junit.xml").getroot().get("tests") == "0"
    assert "Cases <small>(0)</small>" in _html.render(empty)


def test_reports_of_one_implementation_that_could_not_run(tmp_path: Path) -> None:
    run = make_run()
    broken = run.implementations[1]
    broken.results, broken.failure = [], "exited with status 127\nsh: buggy: not found\x1b"
    run.implementations = [broken]
    write_reports(run, tmp_path)
    page = (tmp_path / "report.html").read_text("utf-8")
    assert 'id="prune"' not in page and 'id="problems"' in page  # nothing to compare
    assert "Could not run: <pre>exited with status 127\nsh: buggy: not found\\u001b</pre>" in page
    markdown = (tmp_path / "report.md").read_text("utf-8")
    assert "## `buggy`: 0 problems\n\n**Could not run:**\n\n```\nexited with status 127" in markdown
    assert "❌ could not run `buggy`" in markdown
