"""report.md: the run for a pull-request comment or a CI step summary.

Summary first, then per-category pass counts, then the problems with enough detail to act on
without opening another file. Long runs stay readable: detailed entries are capped per
implementation and the rest counted.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tabulate import tabulate

from .._results import CaseResult, ImplementationRun, Run, Verdict
from ._common import VERDICTS, case_rows, format_options, format_selection, header_line
from ._plain import CHANNELS, chunk_lines, diff_lines, input_title
from ._visible import one_line, printable, visible

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
        "",
        "## Summary",
        "",
        _summary_table(run),
        "",
        "## Cases passed by category",
        "",
        "Cases in which every check passed (PASS or NON_STRICT), out of the cases with at least"
        " one check that was not skipped.",
        "",
        _category_table(run),
    ]
    for implementation in run.implementations:
        out += ["", *_problems(implementation, max_details)]
    return "\n".join(out) + "\n"


def write(run: Run, directory: Path) -> Path:
    path = directory / FILENAME
    path.write_text(render(run), "utf-8")
    return path


def _summary_table(run: Run) -> str:
    rows = []
    for implementation in run.implementations:
        info = implementation.info
        summary = implementation.summary
        if implementation.failure is not None:
            status = "❌ could not run"
        else:
            status = "✅" if implementation.ok else "❌"
        rows.append(
            [
                f"{status} {code(info.label)}",
                cell(f"{info.name} {info.version}".strip()),
                cell(info.language),
                cell(format_options(info.options)),
                *(summary[v.value] or "" for v in VERDICTS),
            ]
        )
    headers = [
        "implementation",
        "name and version",
        "language",
        "options",
        *(v.value for v in VERDICTS),
    ]
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
    if not detailed and not xfails and not skips and implementation.failure is None:
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
        lines = []
        for channel in CHANNELS:
            lines += diff_lines(
                channel, result.expected.get(channel, ""), result.actual.get(channel, "")
            )
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
