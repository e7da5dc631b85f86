"""report.md: the run for a pull-request comment or a CI step summary.

What to fix first: per implementation, a list of its bug signatures (bug class, category,
check) with the smallest failing input of each, then the first of them in full with their
diffs (`triage`). Then fuzzing counterexamples, the summary,
per-category pass counts, and the problems in detail. The whole stays under GitHub's comment
limit however many checks fail: blocks are kept in order while they fit, and the report says
what it left out and where the full detail is.
"""

from __future__ import annotations

from collections import Counter

from tabulate import tabulate

from conformance.model.chunks import CHANNELS
from conformance.model.results import CaseResult, FuzzResult, ImplementationRun, Run, Verdict

from ._common import (
    CASE_FILE_HINT,
    VERDICTS,
    case_rows,
    category_counts,
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
    start_times,
)
from ._fuzz_replay import replay_command
from ._md import cell, code, fence, text
from ._md_detail import ICONS, detail
from ._md_fix import fix_blocks
from ._plain import channel_lines, chunk_lines, input_title
from ._triage import severity_then_size
from ._visible import one_line, printable, visible

FILENAME = "report.md"
#: GitHub's limit on a comment and a step summary; the report stays below it with room for a
#: caller's heading around it.
GITHUB_LIMIT = 65_536
LIMIT = 60_000
#: Detailed entries per implementation; a PR comment has a size limit and a reader has patience.
MAX_DETAILS = 50
#: Order of the detailed entries: what breaks the run first, then the lenient verdicts.
PROBLEM_ORDER = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XPASS, Verdict.NON_STRICT)


def render(run: Run, *, max_details: int = MAX_DETAILS, limit: int = LIMIT) -> str:
    """The report, at most `limit` characters: what to fix first, the counts, then detail
    until the budget runs out (what was left out is said, with where to find it)."""
    out = _Budget(limit - len(_left_out_note(["x" * 40] * 4)))
    out.add(
        [
            "# Conformance report",
            "",
            f"{header_line(run)} · selection: {text(format_selection(run.selection))}",
        ]
    )
    # The smallest failing input of each bug signature leads, what is new first. Each
    # implementation's list, and its signatures in full, get a share of a third of the budget
    # each, so that every implementation's list leads.
    room = limit // 3 // max(1, len(run.implementations))
    for implementation in run.implementations:
        head, entries = fix_blocks(implementation, room)
        if head:
            out.add(["", *head])
        for block, what in entries:
            out.add(["", *block], what)
    if has_fuzz(run):
        # A fuzzing failure is a minimal input ready to become a case.
        for block, what in _fuzzing(run):
            out.add(["", *block], what)
    out.add(["", "## Summary", "", _summary_table(run)], "the summary table")
    started = start_times(run)
    if started:
        out.add(["", f"Start-up time: {text(one_line(started, 1000))}."], "the start-up times")
    if has_cases(run):
        out.add(
            [
                "",
                "## Cases passed by category",
                "",
                "Cases in which every check passed (PASS or NON_STRICT), out of the cases with at"
                " least one check that was not skipped.",
                "",
                _category_table(run),
            ],
            "the category table",
        )
    for implementation in run.implementations:
        if implementation.results or implementation.failure is not None or not implementation.fuzz:
            for block, what in _problems(implementation, max_details):
                out.add(["", *block], what)
    return out.text() + _left_out_note(out.left_out)


class _Budget:
    """Blocks of lines kept in order while they fit; the ones that do not are named."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.used = 0
        self.left_out: list[str] = []

    def add(self, lines: list[str], what: str = "") -> None:
        block = "\n".join(lines)
        if self.used + len(block) + 1 > self.limit or (self.left_out and what):
            # Once something is left out, so is what follows it: a reader sees a prefix.
            self.left_out.append(what or "a section")
            return
        self.parts.append(block)
        self.used += len(block) + 1

    def text(self) -> str:
        return "\n".join(self.parts) + "\n"


def _left_out_note(left_out: list[str]) -> str:
    if not left_out:
        return ""
    shown = ", ".join(left_out[:3]) + (
        f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
    )
    return (
        f"\n*This report stops here to stay within GitHub's comment limit ({GITHUB_LIMIT:,}"
        f" characters); left out: {text(shown)}. Every result in full is in `report.html`"
        " and `results.json`, next to this file.*\n"
    )


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
            row += [str(summary[v.value] or "") for v in VERDICTS]
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
            passed, total = category_counts(cases, label)
            row.append(f"{passed}/{total}" if total else "-")
        rows.append(row)
    headers = ["category", *(code(label) for label in labels)]
    return tabulate(rows, headers, tablefmt="github", disable_numparse=True)


def _problems(implementation: ImplementationRun, max_details: int) -> list[tuple[list[str], str]]:
    """The detail of every problem, as blocks: (lines, what a reader misses without them)."""
    label = implementation.info.label
    by_verdict: dict[Verdict, list[CaseResult]] = {}
    for result in implementation.results:
        by_verdict.setdefault(result.verdict, []).append(result)
    # By verdict, and within one the smallest input of the most severe level first.
    detailed = [
        r for v in PROBLEM_ORDER for r in sorted(by_verdict.get(v, ()), key=severity_then_size)
    ]
    xfails = by_verdict.get(Verdict.XFAIL, [])
    skips = by_verdict.get(Verdict.SKIP, [])
    # Judging too little, and stopping early, fail the run as a failing check does.
    count = len(detailed) + (implementation.unjudged is not None) + bool(implementation.not_run)
    head = [f"## {code(label)}: {count} problem{'s' if count != 1 else ''}"]
    if implementation.failure is not None:
        head += ["", "**Could not run:**", "", *fence(printable(implementation.failure))]
    if implementation.not_run:
        head += ["", f"**Incomplete:** {implementation.not_run} selected checks not run."]
    if implementation.unjudged is not None:
        head += ["", f"**Judged too little:** {text(one_line(implementation.unjudged))}"]
    if not implementation.results and implementation.failure is None:
        head += ["", "No checks ran."]
    elif not count and not xfails and not skips and implementation.failure is None:
        head += ["", "Every check passed."]
    blocks = [(head, f"the problems of {label}")]
    for result in detailed[:max_details]:
        blocks.append((detail(result, implementation.info), f"{label} detail"))
    if count > max_details:
        left = Counter(r.verdict.value for r in detailed[max_details:])
        listing = ", ".join(f"{n} {v}" for v, n in left.items())
        note = f"*{count - max_details} more not shown here ({listing}); see results.json.*"
        blocks.append(([note], f"{label} detail"))
    if xfails:
        table = _xfail_table(xfails)
        blocks.append(([f"### Expected failures (XFAIL): {len(xfails)}", "", table], "XFAIL"))
    if skips:
        reasons = Counter(one_line(r.reason, 120) or "(no reason given)" for r in skips)
        table = tabulate(
            [[cell(reason), n] for reason, n in reasons.most_common()],
            ["reason", "checks"],
            tablefmt="github",
            disable_numparse=True,
        )
        blocks.append(([f"### Skipped: {len(skips)}", "", table], "skips"))
    return blocks


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


def _fuzzing(run: Run) -> list[tuple[list[str], str]]:
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
            f"{ICONS.get(result.verdict, '✅')} {result.verdict.value}",
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
    blocks = [(out, "the fuzzing table")]
    for implementation, result in fuzz_problems(run):
        what = f"fuzzing {implementation.info.label} {result.property}"
        blocks.append((_fuzz_detail(run, implementation, result), what))
    return blocks


def _fuzz_detail(run: Run, implementation: ImplementationRun, result: FuzzResult) -> list[str]:
    icon = ICONS.get(result.verdict, "")
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
        lines = [f"{c}: {visible((channels or {}).get(c, ''))}" for c in CHANNELS]
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
