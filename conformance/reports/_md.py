"""Markdown that renders case text literally: escaping for inline text, table cells, code
spans and fenced blocks."""

from __future__ import annotations

import re

from ._visible import one_line

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
