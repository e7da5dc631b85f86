"""Case text as the templates draw it: runs of text, each with the class that styles it, so
whitespace and invisible characters show (templates/_report_text.html turns them into
markup, escaped).

A token is `(css, text)`, `css` empty for plain text; a segment is `(wrap, tokens)`, `wrap`
empty, `r` for a chunk's native reasoning, or `del`/`ins` for the characters a diff marks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

from conformance.model.chunks import CHANNELS

from ._plain import STRIP_HEAD, STRIP_TAIL, content_only
from ._visible import ELIDED, END, MARKERS, NULL, opcodes, parts, plain, window

Token = tuple[str, str]
Segment = tuple[str, list[Token]]

_CR = MARKERS["\r"]


def vis(value: str, *, end: bool = True) -> list[Token]:
    """The text with whitespace and invisible characters as styled symbols."""
    if plain(value):  # one run of text (a `chars` check's box holds one character)
        return [("", value), ("ws", END)] if end else [("", value)]
    out: list[Token] = []
    for kind, group in groupby(parts(value), key=itemgetter(0)):
        # One token per run of symbols: indentation is runs of spaces.
        shown = "".join(text for _, text in group)
        if kind == "ws" and _CR in shown:
            # Common fonts (DejaVu, Liberation) lack U+240D: CSS draws it, the text stays ␍.
            for index, piece in enumerate(shown.split(_CR)):
                if index:
                    out.append(("ws cr", _CR))
                if piece:
                    out.append(("ws", piece))
            continue
        out.append(("" if kind == "text" else kind, shown))
    if end:
        out.append(("ws", END))
    return out


class Box(NamedTuple):
    """One chunk of an input: its native reasoning (wrapped `r`) before its content, as
    within a chunk native reasoning is processed first; or the chunks left out (`left`).
    A tuple, like the rows below: the templates unpack them rather than look up attributes,
    which costs more per box than its markup."""

    segments: list[Segment]
    left: int = 0


@dataclass(frozen=True, slots=True)
class Boxes:
    boxes: list[Box]
    count: int
    native: bool


def chunk_boxes(chunks: Sequence[Mapping[str, str | None]]) -> Boxes:
    """The input as a row of boxes, one per chunk, so every split point shows."""
    shown: list[Mapping[str, str | None] | None] = list(chunks)
    if len(chunks) > STRIP_HEAD + STRIP_TAIL:
        shown = [*shown[:STRIP_HEAD], None, *shown[-STRIP_TAIL:]]
    boxes = []
    for chunk in shown:
        if chunk is None:
            boxes.append(Box([], left=len(chunks) - STRIP_HEAD - STRIP_TAIL))
            continue
        segments: list[Segment] = []
        reasoning, content = chunk.get("reasoning"), chunk.get("content")
        if reasoning is not None:
            segments.append(("r", vis(reasoning, end=False)))
        if content is not None:
            segments.append(("", vis(content, end=False)))
        elif reasoning is None:
            segments.append(("", [("null", NULL)]))
        boxes.append(Box(segments))
    return Boxes(boxes, len(chunks), not content_only(chunks))


class ChannelRow(NamedTuple):
    """One channel: one line per side shown (one when both sides agree or only one exists),
    each with the rows its heading spans (on the first line only)."""

    channel: str
    css: str
    lines: list[tuple[str, list[Segment], int]]


def channel_rows(
    expected: Mapping[str, str] | None,
    actual: Mapping[str, str] | None,
    sides: Sequence[str] = ("expected", "actual"),
) -> list[ChannelRow]:
    """Both channels: expected against actual where both exist, else the side that does."""
    rows = []
    for channel in CHANNELS:
        if expected is None or actual is None:
            side, channels = (sides[0], expected) if expected is not None else (sides[1], actual)
            text = (channels or {}).get(channel, "")
            rows.append(ChannelRow(channel, "", [(side, [("", long_text(text))], 1)]))
            continue
        want, got = expected.get(channel, ""), actual.get(channel, "")
        if want == got:
            rows.append(ChannelRow(channel, "same", [("same", [("", long_text(want))], 1)]))
            continue
        marked_expected, marked_actual = diff_window(want, got)
        lines = [(sides[0], marked_expected, 2), (sides[1], marked_actual, 0)]
        rows.append(ChannelRow(channel, "differs", lines))
    return rows


def long_text(value: str, head: int = 400, tail: int = 200) -> list[Token]:
    """A text that is the same on both sides: its middle matters little when it is long."""
    if len(value) <= head + tail + 100:
        return vis(value)
    left = len(value) - head - tail
    gap = ("gap", f" {ELIDED} {left} characters {ELIDED} ")
    return [*vis(value[:head], end=False), gap, *vis(value[-tail:])]


def diff_window(expected: str, actual: str) -> tuple[list[Segment], list[Segment]]:
    """Both sides cut to where they differ, the differing characters marked."""
    cut = window(expected, actual)
    lead: list[Token] = [("gap", ELIDED)] if cut.skipped_before else []
    tail: Token = ("ws", END) if cut.at_end else ("gap", ELIDED)
    before = ("", [*lead, *vis(cut.before, end=False)])
    marked_expected: list[Segment] = [before]
    marked_actual: list[Segment] = [before]
    for op, a0, a1, b0, b1 in opcodes(cut.expected, cut.actual):
        if op == "equal":
            marked_expected.append(("", vis(cut.expected[a0:a1], end=False)))
            marked_actual.append(("", vis(cut.actual[b0:b1], end=False)))
            continue
        if a1 > a0:
            marked_expected.append(("del", vis(cut.expected[a0:a1], end=False)))
        if b1 > b0:
            marked_actual.append(("ins", vis(cut.actual[b0:b1], end=False)))
    after = ("", [*vis(cut.after, end=False), tail])
    return [*marked_expected, after], [*marked_actual, after]
