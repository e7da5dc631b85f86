"""Pieces of report.html shared by its sections: escaping, whitespace made visible, verdict
badges, an input's chunks and a channel diff. Every piece of case text goes through `esc`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from itertools import groupby
from operator import itemgetter

from conformance.model.chunks import CHANNELS
from conformance.model.results import Verdict

from ._plain import STRIP_HEAD, STRIP_TAIL, content_only
from ._visible import ELIDED, END, NULL, opcodes, parts, plain, window


def esc(value: object) -> str:
    """Text content: `<`, `>` and `&` escaped (quotes need no escaping outside attributes)."""
    return escape(str(value), quote=False)


def attr(value: object) -> str:
    """An attribute value, for use between double quotes."""
    return escape(str(value), quote=True)


def vis(value: str, *, end: bool = True) -> str:
    """Escaped text with whitespace and invisible characters shown as styled symbols."""
    if plain(value):  # one run of text (a `chars` check's box holds one character)
        shown = esc(value)
        return f'{shown}<span class="ws">{END}</span>' if end else shown
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


def chunks_html(chunks: Sequence[Mapping[str, str | None]]) -> str:
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


def channels_html(
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
                f"<tr><th>{channel}</th><td>{esc(side)}</td><td><pre>{long_text(text)}</pre></td></tr>"
            )
            continue
        want, got = expected.get(channel, ""), actual.get(channel, "")
        if want == got:
            rows.append(
                f'<tr class="same"><th>{channel}</th><td>same</td>'
                f"<td><pre>{long_text(want)}</pre></td></tr>"
            )
            continue
        expected_html, actual_html = diff_window(want, got)
        rows.append(
            f'<tr class="differs"><th rowspan="2">{channel}</th><td>{esc(sides[0])}</td>'
            f"<td><pre>{expected_html}</pre></td></tr>"
            f'<tr class="differs"><td>{esc(sides[1])}</td><td><pre>{actual_html}</pre></td></tr>'
        )
    return f'<table class="channels">{"".join(rows)}</table>'


def long_text(value: str, head: int = 400, tail: int = 200) -> str:
    """A text that is the same on both sides: its middle matters little when it is long."""
    if len(value) <= head + tail + 100:
        return vis(value)
    left = len(value) - head - tail
    return (
        f'{vis(value[:head], end=False)}<span class="gap"> {ELIDED} {left} characters'
        f" {ELIDED} </span>{vis(value[-tail:])}"
    )


def diff_window(expected: str, actual: str) -> tuple[str, str]:
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
