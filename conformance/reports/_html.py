"""report.html: one self-contained page comparing implementations case by case, and property
by property when the run fuzzed (each counterexample in full, ahead of the cases).

The page renders through the templates it shares with the results site (`_jinja`): this
module works out what they show. No network: the stylesheets and the script are inline and
the page works with the script off (panels are <details>; only the view toggles need the
script). Autoescape is on: every piece of case text shows literally.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from markupsafe import Markup

from conformance.model.cases import written_id
from conformance.model.results import (
    SEVERITY,
    CaseResult,
    FuzzResult,
    ImplementationInfo,
    ImplementationRun,
    Run,
    Verdict,
)

from ._common import (
    CASE_FILE_HINT,
    VERDICTS,
    CaseRow,
    case_rows,
    category_counts,
    diff_sides,
    format_options,
    format_selection,
    fuzz_problems,
    fuzz_rate,
    has_cases,
    has_fuzz,
    header_line,
    session_seed,
    start_times,
)
from ._fuzz_replay import replay_command
from ._html_fix import fixes
from ._jinja import STYLESHEET, reports_environment, source
from ._rerun import rerun_command
from ._visible import one_line

FILENAME = "report.html"

_MEANING = {
    Verdict.PASS: "as the spec says",
    Verdict.NON_STRICT: "differs only in whitespace",
    Verdict.FAIL: "wrong output",
    Verdict.ERROR: "the implementation reported or caused an error",
    Verdict.TIMEOUT: "no answer in time",
    Verdict.SKIP: "not run (unsupported or not applicable)",
    Verdict.XFAIL: "failed, as an expectation file says it does",
    Verdict.XPASS: "passed, though an expectation file says it fails",
}

#: The verdicts a fuzzing property can have.
_FUZZ_VERDICTS = (Verdict.PASS, Verdict.NON_STRICT, Verdict.FAIL, Verdict.ERROR)


#: What the templates say of verdicts, and the helpers they call.
def failed_because(result: CaseResult) -> str:
    """An expected failure's own reason, without the expectation's that `apply` put first."""
    note = result.expectation or {}
    prefix = f"expected failure ({note.get('reason', '')}): "
    return result.reason[len(prefix) :] if result.reason.startswith(prefix) else result.reason


_WORDS: Mapping[str, Any] = {
    "meaning": _MEANING,
    "verdicts": VERDICTS,
    "fuzz_verdicts": _FUZZ_VERDICTS,
    "case_file_hint": CASE_FILE_HINT,
    "rerun": rerun_command,
    "PASS": Verdict.PASS,
    "XFAIL": Verdict.XFAIL,
    "failed_because": failed_because,
    "written_id": written_id,
}


@cache
def _inline() -> tuple[Markup, Markup]:
    """The shared stylesheet and the report's own rules, and the script: files of ours, put
    in the page as they are (escaping would break them)."""
    env = reports_environment()
    css = source(env, STYLESHEET) + source(env, "report.css")
    return Markup(css), Markup(source(env, "report.js"))


@cache
def _badges() -> dict[Verdict, Markup]:
    """Each verdict's badge, drawn once by the macro the results site draws its badges with:
    a large run shows thousands of them."""
    badge = reports_environment().get_template("_verdicts.html").module.badge  # type: ignore[attr-defined]
    return {verdict: badge(verdict) for verdict in Verdict}


def render(run: Run) -> str:
    css, script = _inline()
    infos = [implementation.info for implementation in run.implementations]
    # A written case and its derived forms are one row: under profiles a matrix has ten
    # thousand forms, each run by the few implementations whose options derive it.
    grouped = case_rows(run, forms_together=True)
    all_rows = [row for rows in grouped.values() for row in rows]
    cases = has_cases(run) or not has_fuzz(run)
    # A fuzzing session checks no cases: its page is the fuzzing section and the summary.
    template = reports_environment().get_template("report.html")
    return template.render(
        inline_css=css,
        inline_js=script,
        labels=[info.label for info in infos],
        header=header_line(run),
        selection=format_selection(run.selection),
        # What to fix leads: the smallest failing input of each bug class.
        fix=fixes(run),
        fuzzing=_fuzzing(run) if has_fuzz(run) else None,
        summary=[_summary_row(implementation) for implementation in run.implementations],
        verdicts_shown=VERDICTS if cases else (),
        started=one_line(start_times(run), 1000),
        matrix=_matrix(infos, grouped) if cases else None,
        total=len(all_rows),
        # The page opens on the problems when there are any (`#all` shows every case).
        problems=any(not row.clean for row in all_rows),
        badges=_badges(),
        **_WORDS,
    )


# --- summary ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _SummaryRow:
    implementation: ImplementationRun
    options: str
    #: Fuzzing properties by verdict, worst first.
    fuzz: list[tuple[Verdict, int]]
    #: The rules of its expectation file its XFAILs come under: (rule, reason, checks).
    rules: list[tuple[str, str, int]]


def _summary_row(implementation: ImplementationRun) -> _SummaryRow:
    counts = Counter(result.verdict for result in implementation.fuzz)
    rules: Counter[tuple[str, str]] = Counter(
        (r.expectation["rule"], r.expectation.get("reason", ""))
        for r in implementation.results
        if r.verdict is Verdict.XFAIL and r.expectation and "rule" in r.expectation
    )
    return _SummaryRow(
        implementation,
        format_options(implementation.info.options),
        [(verdict, counts[verdict]) for verdict in SEVERITY if counts[verdict]],
        [(rule, reason, n) for (rule, reason), n in sorted(rules.items())],
    )


# --- fuzzing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _FuzzCell:
    label: str
    result: FuzzResult | None
    #: Where its counterexample or details are on the page, if it has a panel.
    anchor: str = ""
    rate: str = "-"


@dataclass(frozen=True, slots=True)
class _FuzzPanel:
    label: str
    result: FuzzResult
    anchor: str
    example: Mapping[str, Any]
    reason: str | None
    sides: tuple[str, str]
    replay: str


@dataclass(frozen=True, slots=True)
class _Fuzzing:
    labels: list[str]
    #: Properties as rows and implementations as columns, like the case matrix below.
    rows: list[tuple[str, list[_FuzzCell]]]
    seeds: str
    replay: str
    panels: list[_FuzzPanel]


def _fuzzing(run: Run) -> _Fuzzing:
    """Properties against implementations, then every counterexample in full, failures first."""
    fuzzed = [implementation for implementation in run.implementations if implementation.fuzz]
    properties = list(dict.fromkeys(r.property for i in fuzzed for r in i.fuzz))
    problems = fuzz_problems(run)
    anchors = {id(result): f"fuzz-{n}" for n, (_, result) in enumerate(problems, 1)}
    by_property = [{result.property: result for result in i.fuzz} for i in fuzzed]
    pairs = list(zip(fuzzed, by_property, strict=True))
    rows = [
        (name, [_fuzz_cell(i.info.label, results.get(name), anchors) for i, results in pairs])
        for name in properties
    ]
    panels = [
        _fuzz_panel(run, implementation, result, anchors[id(result)])
        for implementation, result in problems
    ]
    return _Fuzzing(
        [i.info.label for i in fuzzed],
        rows,
        ", ".join(sorted({str(session_seed(run, i)) for i in fuzzed})),
        "\n".join(replay_command(run, i) for i in fuzzed),
        panels,
    )


def _fuzz_cell(label: str, result: FuzzResult | None, anchors: Mapping[int, str]) -> _FuzzCell:
    if result is None:
        return _FuzzCell(label, None)
    return _FuzzCell(label, result, anchors.get(id(result), ""), fuzz_rate(result))


def _fuzz_panel(
    run: Run, implementation: ImplementationRun, result: FuzzResult, anchor: str
) -> _FuzzPanel:
    example = result.counterexample or {}
    return _FuzzPanel(
        implementation.info.label,
        result,
        anchor,
        example,
        example.get("reason") or result.reason,
        diff_sides(result.property),
        replay_command(run, implementation, result),
    )


# --- matrix ----------------------------------------------------------------------------------


class _Cell(NamedTuple):
    info: ImplementationInfo
    results: list[CaseResult]
    #: The worst verdict's name, and each check's verdict for the tooltip.
    verdict: str
    tip: str
    #: The checks in the panel: the passing ones as one None where the first one was.
    panel: list[CaseResult | None]
    passed: str


class _Line(NamedTuple):
    row: CaseRow
    classes: str
    cells: list[_Cell]


@dataclass(frozen=True, slots=True)
class _Category:
    name: str
    rows: list[_Line]
    #: Cases passed and cases run, per implementation.
    counts: list[tuple[int, int]]


def _matrix(
    infos: Sequence[ImplementationInfo], grouped: Mapping[str, list[CaseRow]]
) -> list[_Category]:
    labels = [info.label for info in infos]
    return [
        _Category(
            category,
            [_line(row, infos) for row in rows],
            [category_counts(rows, label) for label in labels],
        )
        for category, rows in grouped.items()
    ]


def _line(row: CaseRow, infos: Sequence[ImplementationInfo]) -> _Line:
    labels = [info.label for info in infos]
    vectors = {row.vector(label) for label in labels}
    same = len(vectors) == 1 and all(row.results.get(label) for label in labels)
    classes = " ".join(["case", *(["same"] if same else []), *(["clean"] if row.clean else [])])
    return _Line(row, classes, [_cell(row, info) for info in infos])


def _cell(row: CaseRow, info: ImplementationInfo) -> _Cell:
    results = row.results.get(info.label, [])
    verdict = row.verdict(info.label)
    return _Cell(
        info,
        results,
        verdict.value if verdict else "none",
        ", ".join(f"{_named(r, row.case)}: {r.verdict.value}" for r in results),
        _passes_first(results),
        ", ".join(_named(r, row.case) for r in results if r.verdict is Verdict.PASS),
    )


def _named(result: CaseResult, row: str) -> str:
    """A check as a cell names it: with its form, when that is not the row's written case."""
    return result.check if result.case == row else f"{result.check} ({result.case})"


def _passes_first(results: list[CaseResult]) -> list[CaseResult | None]:
    """The results with all PASS ones replaced by one None, placed where the first one was."""
    out: list[CaseResult | None] = []
    for result in results:
        if result.verdict is not Verdict.PASS:
            out.append(result)
        elif None not in out:
            out.append(None)
    return out
