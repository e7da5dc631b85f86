"""report.html: one self-contained page comparing implementations case by case, and property
by property when the run fuzzed (each counterexample in full, ahead of the cases).

No network: the CSS and the script are inline and the page works with the script off
(panels are <details>; only the view toggles need the script). Every piece of case text goes
through html.escape: the corpus is full of `<think>` and worse, and must show literally.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from itertools import groupby
from operator import itemgetter
from pathlib import Path

from conformance.model.results import (
    SEVERITY,
    CaseResult,
    FuzzResult,
    ImplementationRun,
    Run,
    Verdict,
)

from ._common import (
    CASE_FILE_HINT,
    VERDICTS,
    CaseRow,
    case_rows,
    diff_sides,
    format_options,
    format_selection,
    fuzz_problems,
    fuzz_rate,
    has_cases,
    has_fuzz,
    header_line,
    session_seed,
)
from ._plain import CHANNELS, STRIP_HEAD, STRIP_TAIL, content_only
from ._visible import ELIDED, END, NULL, opcodes, parts, printable, window
from .replay import replay_command

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
    total = sum(len(rows) for rows in grouped.values())
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
    if has_fuzz(run):
        body.append(_fuzzing(run, legend=not show_cases))
    body += ['<section id="summary"><h2>Summary</h2>', _summary(run), "</section>"]
    if show_cases:
        body += [
            '<section id="cases">',
            f"<h2>Cases <small>({total})</small></h2>",
            _controls(len(labels), total),
            _legend(),
            '<div class="matrix-wrap">',
            _matrix(labels, grouped),
            "</div>",
            "</section>",
        ]
    body.append("</main>")
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>Conformance report · {esc(', '.join(labels))}</title>\n"
        f"<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{_SCRIPT}</script>\n</body>\n</html>\n"
    )


def write(run: Run, directory: Path) -> Path:
    path = directory / FILENAME
    path.write_text(render(run), "utf-8")
    return path


def esc(value: object) -> str:
    """Text content: `<`, `>` and `&` escaped (quotes need no escaping outside attributes)."""
    return escape(str(value), quote=False)


def attr(value: object) -> str:
    """An attribute value, for use between double quotes."""
    return escape(str(value), quote=True)


def vis(value: str, *, end: bool = True) -> str:
    """Escaped text with whitespace and invisible characters shown as styled symbols."""
    out = []
    for kind, group in groupby(parts(value), key=itemgetter(0)):
        # One span per run of symbols: indentation is runs of spaces.
        shown = esc("".join(text for _, text in group))
        if kind == "ws":
            # Common fonts (DejaVu, Liberation) lack U+240D: CSS draws it, the text stays ␍.
            shown = shown.replace("␍", '<span class="cr">␍</span>')
        out.append(shown if kind == "text" else f'<span class="{kind}">{shown}</span>')
    if end:
        out.append(f'<span class="ws">{END}</span>')
    return "".join(out)


def badge(verdict: Verdict | None) -> str:
    if verdict is None:
        return '<span class="badge v-none">not run</span>'
    return f'<span class="badge v-{verdict.value}">{verdict.value}</span>'


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


def _controls(implementations: int, total: int) -> str:
    prune = (
        '<label><input type="checkbox" id="prune"> Pruned view: hide cases where every'
        " implementation has the same verdict for every check</label>"
        if implementations > 1
        else ""
    )
    return (
        f'<div class="controls">{prune}'
        '<label><input type="checkbox" id="problems"> Problems only: hide cases where every'
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
        out.append(_chunks(example["chunks"]))
    if example.get("expected") is not None or example.get("actual") is not None:
        sides = diff_sides(result.property)
        out.append(_channels(example.get("expected"), example.get("actual"), sides))
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


def _matrix(labels: Sequence[str], grouped: Mapping[str, list[CaseRow]]) -> str:
    head = "".join(f'<th scope="col"><code>{esc(label)}</code></th>' for label in labels)
    out = [f'<table class="matrix"><thead><tr><th scope="col">case</th>{head}</tr></thead>']
    for category, rows in grouped.items():
        out.append(f'<tbody class="category" data-category="{attr(category)}">')
        out.append(
            f'<tr class="category-head"><th colspan="{len(labels) + 1}">{esc(category)}'
            f" <small>({len(rows)} case{'s' if len(rows) != 1 else ''})</small></th></tr>"
        )
        out.extend(_row(row, labels) for row in rows)
        out.append("</tbody>")
    out.append("</table>")
    return "\n".join(out)


def _row(row: CaseRow, labels: Sequence[str]) -> str:
    vectors = {row.vector(label) for label in labels}
    same = len(vectors) == 1 and all(row.results.get(label) for label in labels)
    fine = (Verdict.PASS, Verdict.SKIP)
    clean = all(r.verdict in fine for label in labels for r in row.results.get(label, ()))
    classes = " ".join(["case", *(["same"] if same else []), *(["clean"] if clean else [])])
    title = f'<div class="title">{esc(row.title)}</div>' if row.title else ""
    level = f' <span class="level">{esc(row.level)}</span>' if row.level else ""
    head = (
        f'<th scope="row" title="{attr(row.taxonomy)}"><code>{esc(row.case)}</code>'
        f' <span class="slug">{esc(row.slug)}</span>{level}{title}</th>'
    )
    cells = "".join(_cell(row, label) for label in labels)
    return f'<tr class="{classes}" data-case="{attr(row.case)}">{head}{cells}</tr>'


def _cell(row: CaseRow, label: str) -> str:
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
        else _check(r)
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


def _check(result: CaseResult) -> str:
    out = [f'<div class="check v-{result.verdict.value}">']
    out.append(f"<h4>{badge(result.verdict)} {esc(result.check)}</h4>")
    if result.reason:
        out.append(f'<p class="reason">{esc(printable(result.reason))}</p>')
    if result.chunks is not None:
        out.append(_chunks(result.chunks))
    if result.expected is not None or result.actual is not None:
        out.append(_channels(result.expected, result.actual))
    if result.holdback:
        out.append(f"<p>Held back {result.holdback} characters more than the spec allows.</p>")
    if result.expectation:
        entry = ", ".join(f"{k}: {v}" for k, v in result.expectation.items())
        out.append(f'<p class="expectation">Expectation: {esc(printable(entry))}</p>')
    if result.stderr:
        stderr = esc(printable(result.stderr))
        out.append(f'<div class="label">stderr (last lines)</div><pre>{stderr}</pre>')
    out.append("</div>")
    return "".join(out)


def _chunks(chunks: Sequence[Mapping[str, str | None]]) -> str:
    """The input as a row of boxes, one per chunk, so every split point shows."""
    shown: list[Mapping[str, str | None] | None] = list(chunks)
    if len(chunks) > STRIP_HEAD + STRIP_TAIL:
        shown = [*shown[:STRIP_HEAD], None, *shown[-STRIP_TAIL:]]
    boxes = []
    for chunk in shown:
        if chunk is None:
            left = len(chunks) - STRIP_HEAD - STRIP_TAIL
            boxes.append(f'<span class="gap">{ELIDED} {left} chunks {ELIDED}</span>')
            continue
        fields = []
        reasoning, content = chunk.get("reasoning"), chunk.get("content")
        # Within a chunk native reasoning is processed first, so it is shown first.
        if reasoning is not None:
            fields.append(f'<span class="r">{vis(reasoning, end=False)}</span>')
        if content is None and reasoning is None:
            fields.append(f'<span class="null">{NULL}</span>')
        elif content is not None:
            fields.append(vis(content, end=False))
        # Terse markup: a `chars` check has one box per character.
        boxes.append(f"<i>{''.join(fields)}</i>")
    count = len(chunks)
    native = "" if content_only(chunks) else "; native reasoning in blue"
    return (
        f'<div class="label">input, {count} chunk{"s" if count != 1 else ""}'
        f" (one box each{native})</div>"
        f'<div class="chunks">{"".join(boxes)}</div>'
    )


def _channels(
    expected: Mapping[str, str] | None,
    actual: Mapping[str, str] | None,
    sides: tuple[str, str] = ("expected", "actual"),
) -> str:
    """Both channels: expected against actual where both exist, else the side that does."""
    rows = []
    for channel in CHANNELS:
        if expected is None or actual is None:
            side, channels = (sides[0], expected) if expected is not None else (sides[1], actual)
            text = (channels or {}).get(channel, "")
            rows.append(
                f"<tr><th>{channel}</th><td>{esc(side)}</td><td><pre>{_long(text)}</pre></td></tr>"
            )
            continue
        want, got = expected.get(channel, ""), actual.get(channel, "")
        if want == got:
            rows.append(
                f'<tr class="same"><th>{channel}</th><td>same</td>'
                f"<td><pre>{_long(want)}</pre></td></tr>"
            )
            continue
        expected_html, actual_html = _window(want, got)
        rows.append(
            f'<tr class="differs"><th rowspan="2">{channel}</th><td>{esc(sides[0])}</td>'
            f"<td><pre>{expected_html}</pre></td></tr>"
            f'<tr class="differs"><td>{esc(sides[1])}</td><td><pre>{actual_html}</pre></td></tr>'
        )
    return f'<table class="channels">{"".join(rows)}</table>'


def _long(value: str, head: int = 400, tail: int = 200) -> str:
    """A text that is the same on both sides: its middle matters little when it is long."""
    if len(value) <= head + tail + 100:
        return vis(value)
    left = len(value) - head - tail
    return (
        f'{vis(value[:head], end=False)}<span class="gap"> {ELIDED} {left} characters'
        f" {ELIDED} </span>{vis(value[-tail:])}"
    )


def _window(expected: str, actual: str) -> tuple[str, str]:
    """Both sides cut to where they differ, the differing characters marked."""
    cut = window(expected, actual)
    lead = f'<span class="gap">{ELIDED}</span>' if cut.skipped_before else ""
    tail = f'<span class="ws">{END}</span>' if cut.at_end else f'<span class="gap">{ELIDED}</span>'
    marked_expected, marked_actual = [], []
    for op, a0, a1, b0, b1 in opcodes(cut.expected, cut.actual):
        if op == "equal":
            marked_expected.append(vis(cut.expected[a0:a1], end=False))
            marked_actual.append(vis(cut.actual[b0:b1], end=False))
            continue
        if a1 > a0:
            marked_expected.append(f"<del>{vis(cut.expected[a0:a1], end=False)}</del>")
        if b1 > b0:
            marked_actual.append(f"<ins>{vis(cut.actual[b0:b1], end=False)}</ins>")
    before, after = vis(cut.before, end=False), vis(cut.after, end=False)
    return (
        "".join([lead, before, *marked_expected, after, tail]),
        "".join([lead, before, *marked_actual, after, tail]),
    )


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--PASS:#1a7f37;--PASS-bg:#dafbe1;--NON_STRICT:#7d4e00;--NON_STRICT-bg:#fff1c2;
--FAIL:#b3261e;--FAIL-bg:#ffd8d3;--ERROR:#8a1c7c;--ERROR-bg:#f6d5f0;
--TIMEOUT:#9a4700;--TIMEOUT-bg:#ffdfbf;--SKIP:#59636e;--SKIP-bg:#eaeef2;
--XFAIL:#0b5cad;--XFAIL-bg:#dbeafe;--XPASS:#5b2bb5;--XPASS-bg:#e8dcff}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{padding:16px 24px 4px}h1{margin:0 0 4px;font-size:22px}
.meta{margin:0;color:var(--muted)}
main{padding:0 24px 40px}h2{font-size:17px;margin:22px 0 8px}h2 small{color:var(--muted)}
code,pre,.ws,.esc{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
thead th{background:var(--soft)}
.summary .num{text-align:right;font-variant-numeric:tabular-nums;min-width:3.5em}
.summary tr.not-ok th code{color:var(--FAIL)}
.summary .spec{color:var(--muted);font-size:12px;font-family:ui-monospace,monospace}
.summary tr.failure td{background:var(--FAIL-bg)}
.badge{display:inline-block;padding:0 6px;border-radius:10px;font-size:11.5px;font-weight:600;
letter-spacing:.02em;white-space:nowrap}
.v-PASS{--c:var(--PASS);--b:var(--PASS-bg)}.v-NON_STRICT{--c:var(--NON_STRICT);--b:var(--NON_STRICT-bg)}
.v-FAIL{--c:var(--FAIL);--b:var(--FAIL-bg)}.v-ERROR{--c:var(--ERROR);--b:var(--ERROR-bg)}
.v-TIMEOUT{--c:var(--TIMEOUT);--b:var(--TIMEOUT-bg)}.v-SKIP{--c:var(--SKIP);--b:var(--SKIP-bg)}
.v-XFAIL{--c:var(--XFAIL);--b:var(--XFAIL-bg)}.v-XPASS{--c:var(--XPASS);--b:var(--XPASS-bg)}
.v-none{--c:var(--muted);--b:#fff}
.badge{color:var(--c);background:var(--b);border:1px solid var(--c)}
.controls{display:flex;flex-wrap:wrap;gap:6px 20px;align-items:center;margin:6px 0}
#shown{color:var(--muted)}
.legend{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 16px}
.legend .meaning{color:var(--muted);font-size:12.5px}
.hint{color:var(--muted);font-size:12.5px;margin:4px 0 10px}
.matrix-wrap{position:relative}
.matrix{min-width:50%}
.matrix thead th{position:sticky;top:0;z-index:2}
.matrix th[scope=row]{font-weight:normal;min-width:22em;max-width:40em}
.matrix .slug{font-weight:600}.matrix .title{color:var(--muted);font-size:12.5px}
.matrix .level{font-size:11px;color:var(--muted);border:1px solid var(--line);border-radius:3px;
padding:0 3px}
.category-head th{background:#eef1f4;font-size:14px;padding-top:8px}
.category-head small{color:var(--muted);font-weight:normal}
td.cell{background:var(--b);min-width:8em;padding:0}
td.cell>details>summary{cursor:pointer;padding:5px 8px;color:var(--c);font-weight:600;
list-style:none;display:flex;gap:8px;align-items:center;justify-content:space-between}
td.cell>details>summary::-webkit-details-marker{display:none}
td.cell>details[open]>summary{outline:2px solid var(--c);outline-offset:-2px}
td.v-none{text-align:center;color:var(--muted)}
.dots{display:inline-flex;gap:2px}
.dots i{width:9px;height:9px;border-radius:2px;background:var(--c);display:inline-block}
.dots i.v-PASS{opacity:.45}
.panel{position:absolute;left:0;right:0;z-index:5;background:#fff;border:1px solid var(--line);
border-radius:6px;box-shadow:0 8px 24px rgba(0,0,0,.18);padding:10px 14px;max-height:75vh;
overflow:auto;color:var(--fg);font-weight:normal}
.panel-head{font-weight:600;margin-bottom:6px}
.check{border-left:4px solid var(--c);padding:2px 10px;margin:8px 0}
.check h4{margin:2px 0;font-size:13.5px}.passed{margin:6px 0}.reason{margin:2px 0 6px}
.label{color:var(--muted);font-size:12px;margin-top:4px}
pre{margin:0;white-space:pre-wrap;word-break:break-all}
.ws{color:#8c959f}
.cr{font-size:0}.cr::before{content:"CR";font-size:8px;line-height:1;vertical-align:1px;
border:1px solid currentColor;border-radius:2px;padding:0 1px;margin:0 1px}
.esc{color:#bf3989;background:#ffeff7}
.gap{color:var(--muted)}.null{color:var(--muted);font-style:italic}
.chunks{margin:2px 0 6px;line-height:1.9;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,
monospace;font-size:12.5px;white-space:pre-wrap;word-break:break-all}
.chunks>i{font-style:normal;border:1px solid #afb8c1;border-radius:3px;padding:1px 2px;
margin-right:2px;background:#fff}
.chunks .r{background:#dbeafe;color:#0b3d91;font-style:italic}
.chunks>.gap{margin:0 6px}
.channels{margin:4px 0 6px}.channels th{width:7em}.channels td:nth-child(2){color:var(--muted)}
.channels tr.differs th{color:var(--FAIL)}
del{background:#ffc1bd;text-decoration:line-through}ins{background:#a8f0b8;text-decoration:none}
[hidden]{display:none!important}
#fuzzing .legend{margin-top:0}
.fuzz-counts span{white-space:nowrap}
.fuzz-grid td.fz{background:var(--b);min-width:12em}
.fuzz-grid th[scope=row]{font-weight:normal}
.fuzz-grid td.v-none{text-align:center;color:var(--muted)}
.fuzz-grid .n{color:var(--muted);font-size:12px;white-space:nowrap}
.fuzz-grid a{color:var(--c)}
pre.cmd{background:var(--soft);border:1px solid var(--line);border-radius:4px;padding:4px 8px;
margin:2px 0 10px;word-break:normal;overflow-wrap:anywhere}
.fuzz-case{border:1px solid var(--line);border-left:4px solid var(--c);border-radius:4px;
padding:6px 14px;margin:12px 0;max-width:80em}
.fuzz-case h3{margin:2px 0 4px;font-size:14px}.fuzz-case h3 small{color:var(--muted);
font-weight:normal}
.fuzz-case:target{box-shadow:0 0 0 3px var(--b)}
.case-file{margin:6px 0 2px}
"""

_SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.case"));
  var prune = document.getElementById("prune");
  var problems = document.getElementById("problems");
  var shown = document.getElementById("shown");
  function update() {
    var visible = 0;
    rows.forEach(function (row) {
      var hide = (prune && prune.checked && row.classList.contains("same")) ||
                 (problems.checked && row.classList.contains("clean"));
      row.hidden = hide;
      if (!hide) visible++;
    });
    document.querySelectorAll("tbody.category").forEach(function (group) {
      group.hidden = !group.querySelector("tr.case:not([hidden])");
    });
    shown.textContent = visible + " of " + rows.length + " cases shown";
  }
  // A fuzzing session's page has no case matrix, so no view toggles.
  if (problems) {
    // A link can ask for a view: report.html#pruned, #problems or #pruned,problems.
    var asked = location.hash.slice(1).split(",");
    if (prune && asked.indexOf("pruned") >= 0) prune.checked = true;
    if (asked.indexOf("problems") >= 0) problems.checked = true;
    if (prune) prune.addEventListener("change", update);
    problems.addEventListener("change", update);
    update();
  }
  // One panel at a time: an open panel covers the rows below it.
  document.addEventListener("toggle", function (event) {
    var opened = event.target;
    if (!opened.open || !opened.closest("td.cell")) return;
    document.querySelectorAll("td.cell details[open]").forEach(function (other) {
      if (other !== opened) other.open = false;
    });
  }, true);
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    document.querySelectorAll("td.cell details[open]").forEach(function (d) { d.open = false; });
  });
})();
"""
