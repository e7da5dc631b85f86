"""The geometry of the site's pictures, made at build time: history charts, per-category bars
and badges. Only numbers here; the templates (`templates/_charts.html`, `badge.svg`) draw
them, so the pages carry plain inline SVG and need no script to show a chart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.site.model import Entry, Share

#: Badge colours by share (shields.io's names, with their hex values for the SVG badge).
COLOURS = (
    (99.0, "brightgreen", "#2f8f3a"),
    (90.0, "green", "#4b7f0c"),
    (75.0, "yellow", "#8a6d00"),
    (50.0, "orange", "#b8501a"),
    (0.0, "red", "#c0392b"),
)


def colour(percent: float | None) -> tuple[str, str]:
    """(shields.io name, hex) for a share; grey when nothing was judged."""
    if percent is None:
        return "lightgrey", "#6b6b6b"
    for floor, name, hex_ in COLOURS:
        if percent >= floor:
            return name, hex_
    return COLOURS[-1][1:]


@dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    label: str
    title: str
    href: str


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    css: str
    points: tuple[Point, ...]

    @property
    def path(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    series: tuple[Series, ...]
    #: (y, label) of the horizontal grid lines.
    grid: tuple[tuple[float, str], ...]
    #: (x, label) under the axis.
    ticks: tuple[tuple[float, str], ...]
    title: str


WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 860, 250, 48, 120, 12, 60


def history_chart(
    title: str, points: Sequence[tuple[str, Entry, str]], levels: Sequence[str]
) -> Chart:
    """One line per level over `points` (x label, entry, link of the point), in order."""
    n = len(points)
    span = WIDTH - LEFT - RIGHT
    plot = HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (span / 2 if n == 1 else span * i / (n - 1))

    def y(percent: float) -> float:
        return TOP + plot * (1 - percent / 100)

    series = []
    for level in levels:
        made = []
        for i, (label, entry, href) in enumerate(points):
            share = entry.levels.get(level, Share())
            if share.percent is None:
                continue
            tip = (
                f"{level.upper()} {share.text} ({share.passed}/{share.judged}) — "
                f"{entry.label} {entry.info.version}, {entry.started[:10]}"
            )
            made.append(Point(x(i), y(share.percent), label, tip, href))
        if made:
            series.append(Series(level.upper(), f"level-{level}", tuple(made)))
    grid = tuple((y(p), f"{p}%") for p in (0, 25, 50, 75, 100))
    ticks = tuple((x(i), label) for i, (label, _, _) in enumerate(points))
    return Chart(WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM, tuple(series), grid, ticks, title)


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    y: float
    #: (css class, width, share text) per level.
    parts: tuple[tuple[str, float, str], ...]


@dataclass(frozen=True, slots=True)
class Bars:
    width: int
    height: int
    left: int
    scale: float
    bars: tuple[Bar, ...]
    title: str


ROW = 26


def category_bars(entry: Entry, categories: Sequence[str], levels: Sequence[str]) -> Bars:
    """Two thin bars per category (one per level that has results), share of 100%."""
    left, span = 190, 460
    bars: list[Bar] = []
    for category in categories:
        parts = []
        for level in levels:
            share = entry.categories.get((category, level))
            if share is None or share.percent is None:
                continue
            parts.append((f"level-{level}", span * share.percent / 100, share.text))
        if parts:
            bars.append(Bar(category, len(bars) * ROW, tuple(parts)))
    return Bars(
        left + span + 150,
        max(1, len(bars)) * ROW + 4,
        left,
        span / 100,
        tuple(bars),
        f"Pass share by category of {entry.label}",
    )


@dataclass(frozen=True, slots=True)
class Badge:
    label: str
    message: str
    colour: str
    colour_name: str
    label_width: int
    message_width: int

    @property
    def width(self) -> int:
        return self.label_width + self.message_width


def text_width(text: str) -> int:
    """An estimate of the width of `text` at 11 px in a sans-serif face (the badge's own
    font-family list), generous enough that no glyph runs past its box."""
    narrow = sum(1 for c in text if c in "iljtf.,:;!|'() ")
    wide = sum(1 for c in text if c in "mwMW%@")
    return round(7 * (len(text) - narrow - wide) + 4 * narrow + 10 * wide) + 12


def badge(label: str, share: Share, level: str) -> Badge:
    name, hex_ = colour(share.percent)
    message = f"{level.upper()} {share.text}" if share.judged else "not judged"
    return Badge(label, message, hex_, name, text_width(label), text_width(message))
