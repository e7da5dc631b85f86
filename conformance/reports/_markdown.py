"""report.md: the run for a pull-request comment or a CI step summary.

Fuzzing first when the run fuzzed (each counterexample in full), then the summary, then
per-category pass counts, then the problems with enough detail to act on without opening
another file. Long runs stay readable: detailed entries are capped per
implementation and the rest counted.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tabulate import tabulate

from conformance.model.results import CaseResult, FuzzResult, ImplementationRun, Run, Verdict

from ._common import (
    CASE_FILE_HINT,
    VERDICTS,
    case_rows,
    diff_sides,
    format_options,
    format_selection,
    fuzz_counts,
    fuzz_problems,
    fuzz_rate,
    has_cases,
    has_fuzz,
    header_line,
    session_seed,
)
from ._plain import CHANNELS, channel_lines, chunk_lines, input_title
from ._visible import one_line, printable, visible
from .replay import replay_command

FILENAME = "report.md"
#: Detailed entries per implementation; a PR comment has a size limit and a reader has patience.
MAX_DETAILS = 50
#: Order of the detailed entries: what breaks the run first, then the lenient verdicts.
PROBLEM_ORDER = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XPASS, Verdict.NON_STRICT)
_ICONS = {
    Verdict.FAIL: "❌",
    Verdict.ERROR: "💥",
    Verdict.TIMEOUT: "⏱️",
    Verdict.XPASS: "❗",
    Verdict.NON_STRICT: "⚠️",
}


def render(run: Run, *, max_details: int = MAX_DETAILS) -> str:
    out = [
        "# Conformance report",
        "",
        f"{header_line(run)} · selection: {text(format_selection(run.selection))}",
    ]
    if has_fuzz(run):
        # A fuzzing failure is a minimal input ready to become a case: it leads.
        out += ["", *_fuzzing(run)]
    out += ["", "## Summary", "", _summary_table(run)]
    if has_cases(run):
        out += [
            "",
            "## Cases passed by category",
            "",
            "Cases in which every check passed (PASS or NON_STRICT), out of the cases with at"
            " least one check that was not skipped.",
            "",
            _category_table(run),
        ]
    for implementation in run.implementations:
        if implementation.results or implementation.failure is not None or not implementation.fuzz:
            out += ["", *_problems(implementation, max_details)]
    return "\n".join(out) + "\n"


def write(run: Run, directory: Path) -> Path:
    path = directory / FILENAME
    path.write_text(render(run), "utf-8")
    return path


def _summary_table(run: Run) -> str:
    if not run.implementations:
        return "No implementation ran."
    # A fuzzing session checks no cases: a row of empty case counts would say nothing.
    cases = has_cases(run) or not has_fuzz(run)
    rows = []
    for implementation in run.implementations:
        info = implementation.info
        summary = implementation.summary
        if implementation.failure is not None:
            status = "❌ could not run"
        else:
            status = "✅" if implementation.ok else "❌"
        row = [
            f"{status} {code(info.label)}",
            cell(f"{info.name} {info.version}".strip()),
            cell(info.language),
            cell(format_options(info.options)),
        ]
        if cases:
            row += [summary[v.value] or "" for v in VERDICTS]
        if has_fuzz(run):
            row.append(fuzz_counts(implementation) or "-")
        rows.append(row)
    headers = ["implementation", "name and version", "language", "options"]
    if cases:
        headers += [v.value for v in VERDICTS]
    if has_fuzz(run):
        headers.append("fuzzing properties")
    return tabulate(rows, headers, tablefmt="github", disable_numparse=True)


def _category_table(run: Run) -> str:
    labels = [implementation.info.label for implementation in run.implementations]
    rows = []
    for category, cases in case_rows(run).items():
        row = [cell(category)]
        for label in labels:
            passed = total = 0
            for case in cases:
                verdicts = {r.verdict for r in case.results.get(label, ())}
                if not verdicts or verdicts == {Verdict.SKIP}:
                    continue
                total += 1
                passed += verdicts <= {Verdict.PASS, Verdict.NON_STRICT, Verdict.SKIP}
            row.append(f"{passed}/{total}" if total else "-")
        rows.append(row)
    headers = ["category", *(code(label) for label in labels)]
    return tabulate(rows, headers, tablefmt="github", disable_numparse=True)


def _problems(implementation: ImplementationRun, max_details: int) -> list[str]:
    label = implementation.info.label
    by_verdict: dict[Verdict, list[CaseResult]] = {}
    for result in implementation.results:
        by_verdict.setdefault(result.verdict, []).append(result)
    detailed = [r for v in PROBLEM_ORDER for r in by_verdict.get(v, ())]
    xfails = by_verdict.get(Verdict.XFAIL, [])
    skips = by_verdict.get(Verdict.SKIP, [])
    count = len(detailed)
    out = [f"## {code(label)}: {count} problem{'s' if count != 1 else ''}"]
    if implementation.failure is not None:
        out += ["", "**Could not run:**", "", *fence(printable(implementation.failure))]
    if not implementation.results and implementation.failure is None:
        out += ["", "No checks ran."]
    elif not detailed and not xfails and not skips and implementation.failure is None:
        out += ["", "Every check passed."]
    for result in detailed[:max_details]:
        out += ["", *_detail(result)]
    if count > max_details:
        left = Counter(r.verdict.value for r in detailed[max_details:])
        listing = ", ".join(f"{n} {v}" for v, n in left.items())
        out += ["", f"*{count - max_details} more not shown here ({listing}); see results.json.*"]
    if xfails:
        out += ["", f"### Expected failures (XFAIL): {len(xfails)}", "", _xfail_table(xfails)]
    if skips:
        reasons = Counter(one_line(r.reason, 120) or "(no reason given)" for r in skips)
        table = tabulate(
            [[cell(reason), n] for reason, n in reasons.most_common()],
            ["reason", "checks"],
            tablefmt="github",
            disable_numparse=True,
        )
        out += ["", f"### Skipped: {len(skips)}", "", table]
    return out


def _detail(result: CaseResult) -> list[str]:
    icon = _ICONS.get(result.verdict, "")
    out = [
        f"### {icon} {result.verdict.value} · {code(result.case)} {text(result.slug)}"
        f" · {code(result.check)}",
        "",
    ]
    about = f"*{text(result.title)}.* " if result.title else ""
    out.append(about + (text(one_line(result.reason)) if result.reason else ""))
    if result.chunks is not None:
        title = input_title(result.chunks)
        out += ["", text(title[:1].upper() + title[1:]) + ":", ""]
        out += fence("\n".join(chunk_lines(result.chunks)), "text")
    if result.expected is not None and result.actual is not None:
        lines = channel_lines(result.expected, result.actual)
        out += ["", "Expected (`-`) and actual (`+`):", "", *fence("\n".join(lines), "diff")]
    elif result.expected is not None:
        lines = [f"{c}: {visible(result.expected.get(c, ''))}" for c in CHANNELS]
        out += ["", "Expected:", "", *fence("\n".join(lines), "text")]
    if result.holdback:
        out += ["", f"Held back {result.holdback} characters more than the spec allows."]
    if result.expectation:
        entry = ", ".join(f"{k}: {v}" for k, v in result.expectation.items())
        out += ["", f"Expectation: {text(one_line(entry))}"]
    if result.stderr:
        out += ["", "Stderr (last lines):", "", *fence(printable(result.stderr), "text")]
    return out


def _xfail_table(results: list[CaseResult]) -> str:
    rows = [
        [code(r.case), cell(r.slug), code(r.check), cell(one_line(r.reason, 160))]
        for r in results[:MAX_DETAILS]
    ]
    table = tabulate(rows, ["case", "slug", "check", "reason"], tablefmt="github")
    if len(results) > MAX_DETAILS:
        table += f"\n\n*{len(results) - MAX_DETAILS} more not shown here; see results.json.*"
    return table


# --- fuzzing -----------------------------------------------------------------------------------


def _fuzzing(run: Run) -> list[str]:
    """The properties as a table, then every counterexample in full, failures first."""
    fuzzed = [implementation for implementation in run.implementations if implementation.fuzz]
    out = [
        "## Fuzzing",
        "",
        "Each property was checked on generated inputs; a failing input is shrunk to a minimal"
        " counterexample and written as a case file.",
        "",
    ]
    rows = [
        [
            code(implementation.info.label),
            code(result.property),
            f"{_ICONS.get(result.verdict, '✅')} {result.verdict.value}",
            str(result.examples),
            fuzz_rate(result),
            str(result.seed),
        ]
        for implementation in fuzzed
        for result in implementation.fuzz
    ]
    headers = ["implementation", "property", "verdict", "examples", "examples/s", "seed"]
    out.append(tabulate(rows, headers, tablefmt="github", disable_numparse=True))
    seeds = sorted({str(session_seed(run, i)) for i in fuzzed})
    out += [
        "",
        f"Seed {', '.join(seeds)}. Replay the session exactly with:",
        "",
        *fence("\n".join(replay_command(run, i) for i in fuzzed), "sh"),
    ]
    for implementation, result in fuzz_problems(run):
        out += ["", *_fuzz_detail(run, implementation, result)]
    return out


def _fuzz_detail(run: Run, implementation: ImplementationRun, result: FuzzResult) -> list[str]:
    icon = _ICONS.get(result.verdict, "")
    out = [
        f"### {icon} {result.verdict.value} · {code(implementation.info.label)}"
        f" · {code(result.property)}",
    ]
    example = result.counterexample or {}
    reason = example.get("reason") or result.reason
    if reason:
        out += ["", text(one_line(reason, 1000))]
    chunks = example.get("chunks")
    if chunks is not None:
        title = input_title(chunks)
        out += ["", text(title[:1].upper() + title[1:]) + ":", ""]
        out += fence("\n".join(chunk_lines(chunks)), "text")
    expected, actual = example.get("expected"), example.get("actual")
    minus, plus = diff_sides(result.property)
    if expected is not None and actual is not None:
        lines = channel_lines(expected, actual)
        caption = f"{minus[:1].upper()}{minus[1:]} (`-`) and {plus} (`+`):"
        out += ["", caption, "", *fence("\n".join(lines), "diff")]
    elif expected is not None or actual is not None:
        side, channels = (minus, expected) if expected is not None else (plus, actual)
        lines = [f"{c}: {visible(channels.get(c, ''))}" for c in CHANNELS]
        out += ["", f"{side[:1].upper()}{side[1:]}:", "", *fence("\n".join(lines), "text")]
    if result.case_file:
        out += ["", f"Case file: {code(result.case_file)} — {CASE_FILE_HINT}."]
    out += [
        "",
        f"Seed {result.seed}, {result.examples} example{'s' if result.examples != 1 else ''}."
        " Replay:",
        "",
        *fence(replay_command(run, implementation, result), "sh"),
    ]
    return out


# --- Markdown escaping: case text is full of `<think>`, which GitHub would take as HTML.

#: Backslash-escaped where they could start Markdown syntax; `_` only at a word edge, since
#: GitHub leaves `start_in_reasoning` alone and escapes there would clutter the raw file.
_SPECIAL = re.compile(r"([\\`*\[\]|~#]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")


def text(value: str) -> str:
    """Inline text that renders literally: HTML-like tags and Markdown syntax escaped."""
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", value)


def cell(value: str) -> str:
    """Text for a table cell: one line, literal."""
    return text(one_line(value, 200))


def code(value: str) -> str:
    """A code span that survives any backticks inside and a table's `|`."""
    value = one_line(value, 200).replace("|", "\\|")
    ticks = "`" * (_longest_run(value, "`") + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def fence(body: str, info: str = "") -> list[str]:
    """A fenced block longer than any backtick run in `body`, so the body cannot close it."""
    ticks = "`" * max(3, _longest_run(body, "`") + 1)
    return [ticks + info, *body.split("\n"), ticks]


def _longest_run(value: str, char: str) -> int:
    runs = re.findall(f"{re.escape(char)}+", value)
    return max((len(run) for run in runs), default=0)
