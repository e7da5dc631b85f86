"""report.html: one self-contained page comparing implementations case by case, and property
by property when the run fuzzed (each counterexample in full, ahead of the cases).

No network: the CSS and the script are inline and the page works with the script off
(panels are <details>; only the view toggles need the script). Every piece of case text goes
through html.escape: the corpus is full of `<think>` and worse, and must show literally.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

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
from ._html_assets import CSS, SCRIPT
from ._html_fix import fix_section
from ._html_parts import attr, badge, channels_html, chunks_html, esc, vis
from ._rerun import rerun_command
from ._visible import one_line, printable

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


def render(run: Run) -> str:
    labels = [implementation.info.label for implementation in run.implementations]
    grouped = case_rows(run)
    all_rows = [row for rows in grouped.values() for row in rows]
    total = len(all_rows)
    # A fuzzing session checks no cases: its page is the fuzzing section and the summary.
    show_cases = has_cases(run) or not has_fuzz(run)
    body = [
        "<header>",
        "<h1>Conformance report</h1>",
        f'<p class="meta">{esc(header_line(run))} · selection: '
        f"{esc(format_selection(run.selection))}</p>",
        "</header>",
        "<main>",
    ]
    # What to fix leads: the smallest failing input of each bug class.
    body.append(fix_section(run))
    if has_fuzz(run):
        body.append(_fuzzing(run, legend=not show_cases))
    started = one_line(start_times(run), 1000)
    start_up = [f'<p class="start-up">Start-up time: {esc(started)}.</p>'] if started else []
    body += ['<section id="summary"><h2>Summary</h2>', _summary(run), *start_up, "</section>"]
    if show_cases:
        body += [
            '<section id="cases">',
            f"<h2>Cases <small>({total})</small></h2>",
            _controls(len(labels), total, problems=any(not r.clean for r in all_rows)),
            _legend(),
            '<div class="matrix-wrap">',
            _matrix([implementation.info for implementation in run.implementations], grouped),
            "</div>",
            "</section>",
        ]
    body.append("</main>")
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>Conformance report · {esc(', '.join(labels))}</title>\n"
        f"<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )


# --- summary ---------------------------------------------------------------------------------


def _summary(run: Run) -> str:
    cases = has_cases(run) or not has_fuzz(run)
    verdicts = VERDICTS if cases else ()
    head = "".join(f"<th>{badge(v)}</th>" for v in verdicts)
    if has_fuzz(run):
        head += "<th>fuzzing properties</th>"
    columns = 5 + len(verdicts) + has_fuzz(run)
    rows = []
    for implementation in run.implementations:
        info = implementation.info
        summary = implementation.summary
        counts = "".join(f'<td class="num">{summary[v.value] or ""}</td>' for v in verdicts)
        if has_fuzz(run):
            counts += f'<td class="fuzz-counts">{_fuzz_counts(implementation)}</td>'
        status = "ok" if implementation.ok else "not-ok"
        failure = ""
        if implementation.failure is not None:
            failure = (
                f'<tr class="failure"><td colspan="{columns}">Could not run: '
                f"<pre>{esc(printable(implementation.failure))}</pre></td></tr>"
            )
        if implementation.not_run:
            failure += (
                f'<tr class="failure"><td colspan="{columns}">Incomplete: '
                f"{implementation.not_run} selected checks not run</td></tr>"
            )
        if implementation.unjudged is not None:
            failure += (
                f'<tr class="failure"><td colspan="{columns}">Judged too little: '
                f"{esc(printable(implementation.unjudged))}</td></tr>"
            )
        rows.append(
            f'<tr class="{status}"><th scope="row"><code>{esc(info.label)}</code>'
            f'<div class="spec">{esc(info.spec)}</div></th>'
            f"<td>{esc(info.name)}</td><td>{esc(info.version)}</td>"
            f"<td>{esc(info.language)}</td><td>{esc(format_options(info.options))}</td>"
            f"{counts}</tr>{failure}"
        )
    return (
        '<table class="summary"><thead><tr><th>implementation</th><th>name</th>'
        f"<th>version</th><th>language</th><th>options (non-default)</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _fuzz_counts(implementation: ImplementationRun) -> str:
    """Badges with counts, worst first; a dash for an implementation that was not fuzzed."""
    counts = Counter(result.verdict for result in implementation.fuzz)
    # A badge and its count never part across lines.
    shown = [f"<span>{badge(v)}&nbsp;{counts[v]}</span>" for v in SEVERITY if counts[v]]
    return " ".join(shown) or "&ndash;"


def _controls(implementations: int, total: int, *, problems: bool) -> str:
    """The view toggles; the page opens on the problems when there are any (`#all` in the
    address shows every case)."""
    prune = (
        '<label><input type="checkbox" id="prune"> Pruned view: hide cases where every'
        " implementation has the same verdict for every check</label>"
        if implementations > 1
        else ""
    )
    return (
        f'<div class="controls">{prune}'
        f'<label><input type="checkbox" id="problems"{" checked" if problems else ""}>'
        " Problems only: hide cases where every"
        " check passed or was skipped</label>"
        f'<span id="shown">{total} of {total} cases shown</span></div>'
    )


def _legend(about: str = "", verdicts: Sequence[Verdict] = VERDICTS) -> str:
    """The verdicts and the whitespace symbols, after a sentence on what the cells show."""
    items = "".join(
        f'<li>{badge(v)} <span class="meaning">{esc(_MEANING[v])}</span></li>' for v in verdicts
    )
    about = about or (
        "Each cell shows the worst verdict over the case's checks; click it for the input, the"
        " expected and the actual channels of every check."
    )
    return (
        f'<ul class="legend">{items}</ul>'
        f'<p class="hint">{esc(about)} Whitespace is shown'
        f" as {vis(' ', end=False)} space, {vis(chr(9), end=False)} tab, <span class=ws>↵</span>"
        f" line feed, {vis(chr(13), end=False)} carriage return, <span class=ws>∎</span> end of"
        " text; other invisible characters as <span class=esc>\\uXXXX</span>.</p>"
    )


# --- fuzzing ---------------------------------------------------------------------------------


#: The verdicts a fuzzing property can have.
_FUZZ_VERDICTS = (Verdict.PASS, Verdict.NON_STRICT, Verdict.FAIL, Verdict.ERROR)


def _fuzzing(run: Run, *, legend: bool) -> str:
    """Properties against implementations, then every counterexample in full, failures first."""
    fuzzed = [implementation for implementation in run.implementations if implementation.fuzz]
    properties = list(dict.fromkeys(r.property for i in fuzzed for r in i.fuzz))
    problems = fuzz_problems(run)
    anchors = {id(result): f"fuzz-{n}" for n, (_, result) in enumerate(problems, 1)}
    # Properties as rows and implementations as columns, like the case matrix below.
    head = "".join(f'<th scope="col"><code>{esc(i.info.label)}</code></th>' for i in fuzzed)
    by_property = [{result.property: result for result in i.fuzz} for i in fuzzed]
    rows = []
    for name in properties:
        cells = "".join(
            _fuzz_cell(i.info.label, name, results.get(name), anchors)
            for i, results in zip(fuzzed, by_property, strict=True)
        )
        rows.append(f'<tr class="fuzzed"><th scope="row"><code>{esc(name)}</code></th>{cells}</tr>')
    replay = "\n".join(replay_command(run, i) for i in fuzzed)
    seeds = ", ".join(sorted({str(session_seed(run, i)) for i in fuzzed}))
    panels = "".join(
        _fuzz_panel(run, implementation, result, anchors[id(result)])
        for implementation, result in problems
    )
    about = (
        "Each property was checked on generated inputs; a failing input is shrunk to a minimal"
        " counterexample, shown below in full and written as a case file."
    )
    return (
        '<section id="fuzzing"><h2>Fuzzing</h2>'
        + (_legend(about, _FUZZ_VERDICTS) if legend else f'<p class="hint">{esc(about)}</p>')
        + f'<table class="fuzz-grid"><thead><tr><th scope="col">property</th>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f'<div class="label">Seed {esc(seeds)}. Replay the session exactly with:</div>'
        f'<pre class="cmd">{esc(replay)}</pre>{panels}</section>'
    )


def _fuzz_cell(label: str, prop: str, result: FuzzResult | None, anchors: Mapping[int, str]) -> str:
    data = f'data-impl="{attr(label)}" data-property="{attr(prop)}"'
    if result is None:
        return f'<td class="fz v-none" {data}>&ndash;</td>'
    verdict = result.verdict.value
    plural = "s" if result.examples != 1 else ""
    rate = fuzz_rate(result)
    link = ""
    if id(result) in anchors:
        what = "counterexample" if result.counterexample else "details"
        link = f' <a href="#{anchors[id(result)]}">{what} &darr;</a>'
    return (
        f'<td class="fz v-{verdict}" {data} data-verdict="{verdict}"'
        f' title="seed {result.seed}, {result.seconds:.2f} s">{badge(result.verdict)}{link}'
        f'<div class="n">{result.examples} example{plural}'
        f"{f' · {rate}/s' if rate != '-' else ''}</div></td>"
    )


def _fuzz_panel(
    run: Run, implementation: ImplementationRun, result: FuzzResult, anchor: str
) -> str:
    example = result.counterexample or {}
    reason = example.get("reason") or result.reason
    out = [
        f'<div class="fuzz-case check v-{result.verdict.value}" id="{attr(anchor)}"'
        f' data-impl="{attr(implementation.info.label)}" data-property="{attr(result.property)}">',
        f"<h3>{badge(result.verdict)} <code>{esc(implementation.info.label)}</code> · "
        f"<code>{esc(result.property)}</code> <small>{result.examples}"
        f" example{'s' if result.examples != 1 else ''} · seed {result.seed}</small></h3>",
    ]
    if reason:
        out.append(f'<p class="reason">{esc(printable(reason))}</p>')
    if example.get("chunks") is not None:
        out.append(chunks_html(example["chunks"]))
    if example.get("expected") is not None or example.get("actual") is not None:
        sides = diff_sides(result.property)
        out.append(channels_html(example.get("expected"), example.get("actual"), sides))
    if result.case_file:
        out.append(
            f'<p class="case-file">Case file: <code>{esc(printable(result.case_file))}</code>'
            f" &mdash; {esc(CASE_FILE_HINT)}.</p>"
        )
    replay = esc(replay_command(run, implementation, result))
    out.append(
        f'<div class="label">replay this property</div><pre class="cmd">{replay}</pre></div>'
    )
    return "".join(out)


# --- matrix ----------------------------------------------------------------------------------


def _matrix(infos: Sequence[ImplementationInfo], grouped: Mapping[str, list[CaseRow]]) -> str:
    labels = [info.label for info in infos]
    head = "".join(f'<th scope="col"><code>{esc(label)}</code></th>' for label in labels)
    out = [f'<table class="matrix"><thead><tr><th scope="col">case</th>{head}</tr></thead>']
    for category, rows in grouped.items():
        out.append(f'<tbody class="category" data-category="{attr(category)}">')
        counts = "".join(_category_count(rows, label) for label in labels)
        out.append(
            f'<tr class="category-head"><th>{esc(category)}'
            f" <small>({len(rows)} case{'s' if len(rows) != 1 else ''})</small></th>{counts}</tr>"
        )
        out.extend(_row(row, infos) for row in rows)
        out.append("</tbody>")
    out.append("</table>")
    return "\n".join(out)


def _category_count(rows: Sequence[CaseRow], label: str) -> str:
    passed, total = category_counts(rows, label)
    if not total:
        return '<td class="count">&ndash;</td>'
    state = "all" if passed == total else "some"
    return f'<td class="count {state}" title="cases passed">{passed}/{total} passed</td>'


def _row(row: CaseRow, infos: Sequence[ImplementationInfo]) -> str:
    labels = [info.label for info in infos]
    vectors = {row.vector(label) for label in labels}
    same = len(vectors) == 1 and all(row.results.get(label) for label in labels)
    classes = " ".join(["case", *(["same"] if same else []), *(["clean"] if row.clean else [])])
    title = f'<div class="title">{esc(row.title)}</div>' if row.title else ""
    level = f' <span class="level">{esc(row.level)}</span>' if row.level else ""
    head = (
        f'<th scope="row" title="{attr(row.taxonomy)}"><code>{esc(row.case)}</code>'
        f' <span class="slug">{esc(row.slug)}</span>{level}{title}</th>'
    )
    cells = "".join(_cell(row, info) for info in infos)
    return (
        f'<tr class="{classes}" id="case-{attr(row.case)}" data-case="{attr(row.case)}">'
        f"{head}{cells}</tr>"
    )


def _cell(row: CaseRow, info: ImplementationInfo) -> str:
    label = info.label
    results = row.results.get(label, [])
    verdict = row.verdict(label)
    name = verdict.value if verdict else "none"
    if not results:
        return f'<td class="cell v-none" data-impl="{attr(label)}" data-verdict="none">&ndash;</td>'
    dots = "".join(f'<i class="v-{r.verdict.value}"></i>' for r in results)
    tip = ", ".join(f"{r.check}: {r.verdict.value}" for r in results)
    passed = [r.check for r in results if r.verdict is Verdict.PASS]
    # Passing checks share one line: a panel is about what went wrong.
    panel = "".join(
        f'<p class="passed">{badge(Verdict.PASS)} {esc(", ".join(passed))}</p>'
        if r is None
        else _check(r, info)
        for r in _passes_first(results)
    )
    return (
        f'<td class="cell v-{name}" data-impl="{attr(label)}" data-verdict="{name}">'
        f'<details><summary title="{attr(tip)}"><span class="worst">{name}</span>'
        f'<span class="dots">{dots}</span></summary>'
        f'<div class="panel"><div class="panel-head"><code>{esc(row.case)}</code> '
        f"{esc(row.slug)} on <code>{esc(label)}</code></div>{panel}</div></details></td>"
    )


def _passes_first(results: list[CaseResult]) -> list[CaseResult | None]:
    """The results with all PASS ones replaced by one None, placed where the first one was."""
    out: list[CaseResult | None] = []
    for result in results:
        if result.verdict is not Verdict.PASS:
            out.append(result)
        elif None not in out:
            out.append(None)
    return out


def _check(result: CaseResult, info: ImplementationInfo) -> str:
    out = [f'<div class="check v-{result.verdict.value}">']
    out.append(f"<h4>{badge(result.verdict)} {esc(result.check)}</h4>")
    if result.reason:
        out.append(f'<p class="reason">{esc(printable(result.reason))}</p>')
    if result.chunks is not None:
        out.append(chunks_html(result.chunks))
    if result.expected is not None or result.actual is not None:
        out.append(channels_html(result.expected, result.actual))
    if result.holdback:
        out.append(f"<p>Held back {result.holdback} characters more than the spec allows.</p>")
    if result.expectation:
        entry = ", ".join(f"{k}: {v}" for k, v in result.expectation.items())
        out.append(f'<p class="expectation">Expectation: {esc(printable(entry))}</p>')
    if result.stderr:
        stderr = esc(printable(result.stderr))
        out.append(f'<div class="label">stderr (last lines)</div><pre>{stderr}</pre>')
    if not result.verdict.ok:
        rerun = esc(rerun_command(info, result))
        out.append(f'<div class="label">rerun</div><pre class="cmd">{rerun}</pre>')
    out.append("</div>")
    return "".join(out)
