"""Text made visible for a reader, and the part of two texts where they differ.

Whitespace-only differences are a verdict of their own (NON_STRICT), so a report must show
every space, tab and line break. Both the Markdown and the HTML report render through here so
they agree on the symbols.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from conformance.model.characters import INVISIBLE
from conformance.model.judge import common_prefix

#: Shown instead of a whitespace character; LF keeps a real line break after its symbol.
MARKERS = {" ": "␣", "\t": "→", "\n": "↵\n", "\r": "␍"}
#: Marks the real end of a text, so trailing whitespace cannot hide.
END = "∎"
#: Marks text left out of a window.
ELIDED = "⋯"
#: Between two chunks of a stream, and in place of a null field.
SPLIT = "│"
NULL = "∅"
#: The symbols themselves are escaped when the text contains them, so a literal `␣` is never
#: mistaken for a space.
_SYMBOLS = frozenset("␣→↵␍∎⋯│∅")
#: Categories of characters that print as nothing or as blank space.
_CONTROL = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
#: In a text that `str.isprintable` (no control, format, separator or unassigned character),
#: what is left to mark: the space and the symbols (the split keeps each as a piece of its own).
_MARKED = re.compile("([ ␣→↵␍∎⋯│∅])")
#: What prose keeps as it is though `str.isprintable` says no.
_PROSE_BREAKS = re.compile("[\n\t]")

Kind = Literal["text", "ws", "esc"]


def escape_char(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def plain(text: str) -> bool:
    """Whether the text shows as it is: nothing in it to mark or escape."""
    return text.isprintable() and _MARKED.search(text) is None


def parts(text: str) -> Iterator[tuple[Kind, str]]:
    """The text as runs of plain text, whitespace symbols and escapes, for styled output."""
    if text.isprintable():  # the common case, without a look at each character
        for index, piece in enumerate(_MARKED.split(text)):
            if index % 2 == 0:
                if piece:
                    yield "text", piece
            elif piece == " ":
                yield "ws", MARKERS[piece]
            else:
                yield "esc", escape_char(piece)
        return
    run: list[str] = []
    for char in text:
        kind: Kind
        if char in MARKERS:
            kind, shown = "ws", MARKERS[char]
        elif char in _SYMBOLS or unicodedata.category(char) in INVISIBLE:
            kind, shown = "esc", escape_char(char)
        else:
            run.append(char)
            continue
        if run:
            yield "text", "".join(run)
            run = []
        yield kind, shown
    if run:
        yield "text", "".join(run)


def visible(text: str, *, end: bool = True) -> str:
    """`a b\\n` -> `a␣b↵` + newline + `∎`: every invisible character shown."""
    shown = "".join(shown for _, shown in parts(text))
    return shown + END if end else shown


@dataclass(frozen=True, slots=True)
class Window:
    """Two texts cut down to where they differ, with a little shared context either side."""

    #: Characters of the common prefix left out before `before`.
    skipped_before: int
    before: str
    expected: str
    actual: str
    after: str
    #: Characters left out after `after` (or after a middle cut at `limit`).
    skipped_after: int
    #: Index of the first differing character (0-based).
    first_difference: int

    @property
    def at_end(self) -> bool:
        """Whether the window reaches the real end of both texts."""
        return self.skipped_after == 0


def window(expected: str, actual: str, *, context: int = 24, limit: int = 240) -> Window:
    """The differing middle of two texts, each middle cut at `limit` characters."""
    prefix = common_prefix(expected, actual)
    room = min(len(expected), len(actual)) - prefix
    suffix = common_prefix(expected[::-1], actual[::-1])
    suffix = min(suffix, room)
    before = expected[max(0, prefix - context) : prefix]
    middle_expected = expected[prefix : len(expected) - suffix]
    middle_actual = actual[prefix : len(actual) - suffix]
    after = expected[len(expected) - suffix :][:context]
    skipped_after = suffix - len(after)
    if len(middle_expected) > limit or len(middle_actual) > limit:
        # A long middle makes the shared tail meaningless: cut there and count the rest.
        skipped_after = max(len(middle_expected), len(middle_actual)) - limit + suffix
        middle_expected, middle_actual, after = middle_expected[:limit], middle_actual[:limit], ""
    return Window(
        skipped_before=prefix - len(before),
        before=before,
        expected=middle_expected,
        actual=middle_actual,
        after=after,
        skipped_after=skipped_after,
        first_difference=prefix,
    )


def opcodes(expected: str, actual: str) -> Sequence[tuple[str, int, int, int, int]]:
    """Character-level edit operations between two (short) window middles."""
    return SequenceMatcher(None, expected, actual, autojunk=False).get_opcodes()


def printable(text: str) -> str:
    """Free text (a reason, stderr) with control and invisible characters escaped.

    Line breaks and tabs stay as they are: this text is prose, not channel data.
    """
    if all(piece.isprintable() for piece in _PROSE_BREAKS.split(text)):
        return text  # nothing to escape (the common case), without a look at each character
    return "".join(
        char if char in "\n\t" or unicodedata.category(char) not in _CONTROL else escape_char(char)
        for char in text
    )


def one_line(text: str, limit: int = 300) -> str:
    """A reason or message squeezed onto one printable line, for table cells and attributes."""
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
