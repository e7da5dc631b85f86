"""Bug classes of two channels: what an implementation did wrong with a stream, read off the
channels it produced and the ones the spec expects.

The taxonomy says what a case is about (a split close delimiter, an orphan close); the bug
class says what the implementation did wrong with it, which is what a reader comparing
implementations wants to know, what an upstream fix changes, and what tells two fuzzing
counterexamples apart:

    channel_bug(expected, actual, grammar).name   # "delimiter-shown"

The order of `CHANNEL_CLASSES` is the order of the checks: output that both shows a delimiter
and drops text is a `delimiter-shown`, the more visible of the two. A piece of a delimiter in
the answer (`</thi` left over when `</think>` was split across chunks) is a
`delimiter-fragment-shown`, not text added; the right text in each channel in another order
(native reasoning after a tag's body) is `text-reordered`, not an answer hidden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from conformance.model.grammar import Grammar
from conformance.model.judge import common_prefix


@dataclass(frozen=True, slots=True)
class BugClass:
    name: str
    title: str


DELIMITER_SHOWN = BugClass("delimiter-shown", "a delimiter is shown in the answer")
DELIMITER_FRAGMENT_SHOWN = BugClass(
    "delimiter-fragment-shown", "a piece of a delimiter is shown in the answer"
)
DELIMITER_IN_THINKING = BugClass(
    "delimiter-in-thinking", "a delimiter is left in the thinking channel"
)
TEXT_DROPPED = BugClass("text-dropped", "text is lost (in neither channel)")
TEXT_ADDED = BugClass("text-added", "text is duplicated or added")
REASONING_SHOWN = BugClass("reasoning-shown", "reasoning is shown as the answer")
ANSWER_HIDDEN = BugClass("answer-hidden", "answer text is hidden in the thinking channel")
TEXT_REORDERED = BugClass("text-reordered", "each channel has the right text in another order")
TEXT_CHANGED = BugClass("text-changed", "text is changed (other characters, same length)")
CHANNEL_CLASSES = (
    DELIMITER_SHOWN,
    DELIMITER_FRAGMENT_SHOWN,
    DELIMITER_IN_THINKING,
    TEXT_DROPPED,
    TEXT_ADDED,
    REASONING_SHOWN,
    ANSWER_HIDDEN,
    TEXT_REORDERED,
    TEXT_CHANGED,
)

#: Longest differing middles of two answers whose added text is found by aligning them
#: (quadratic at worst); longer ones are judged by counting delimiter pieces.
ALIGN_LIMIT = 400


def channel_bug(
    expected: Mapping[str, str], actual: Mapping[str, str], grammar: Grammar
) -> BugClass:
    """The bug class of channels that differ from the expected ones."""
    if _delimiters(actual, "assistant", grammar) > _delimiters(expected, "assistant", grammar):
        return DELIMITER_SHOWN
    want_answer, got_answer = expected.get("assistant", ""), actual.get("assistant", "")
    if fragment_shown(want_answer, got_answer, grammar):
        return DELIMITER_FRAGMENT_SHOWN
    if _delimiters(actual, "thinking", grammar) > _delimiters(expected, "thinking", grammar):
        return DELIMITER_IN_THINKING
    want_thinking, got_thinking = expected.get("thinking", ""), actual.get("thinking", "")
    want = len(want_answer) + len(want_thinking)
    got = len(got_answer) + len(got_thinking)
    if got < want:
        return TEXT_DROPPED
    if got > want:
        return TEXT_ADDED
    if len(got_answer) > len(want_answer):
        return REASONING_SHOWN
    if len(got_answer) < len(want_answer):
        return ANSWER_HIDDEN
    if Counter(got_answer) == Counter(want_answer) and Counter(got_thinking) == Counter(
        want_thinking
    ):
        return TEXT_REORDERED
    return TEXT_CHANGED


def fragment_shown(expected: str, actual: str, grammar: Grammar) -> bool:
    """Whether the answer `actual` holds a proper piece of a delimiter (a prefix such as
    `</thi`, or a suffix such as `nk>`) that `expected` lacks: a piece of two characters or
    more that overlaps text added to the answer, or added text that is a piece on its own
    (a lone `<`, or several)."""
    pieces = _pieces(grammar)
    more = any(actual.count(piece) > expected.count(piece) for piece in pieces)
    if not more and not any(actual.count(c) > expected.count(c) for c in _single(grammar)):
        # Nothing that could be a piece was added: no need to align.
        return False
    # Only the middle where the two differ is aligned (quadratic at worst).
    head = common_prefix(expected, actual)
    room = min(len(expected), len(actual)) - head
    tail = min(common_prefix(expected[::-1], actual[::-1]), room)
    middle = (expected[head : len(expected) - tail], actual[head : len(actual) - tail])
    if len(middle[0]) + len(middle[1]) > 2 * ALIGN_LIMIT:
        # Too long to align: a piece found more often than expected.
        return more
    added = [(head + start, head + end) for start, end in _added(*middle)]
    if not added:
        return False
    single = _single(grammar)
    # A lone first character added, or several (`<<`: the same split leak twice).
    if any(set(actual[start:end]) <= single for start, end in added):
        return True
    marked = bytearray(len(actual))
    for start, end in added:
        marked[start:end] = b"\1" * (end - start)
    for piece in pieces:
        at = actual.find(piece)
        while at >= 0:
            if any(marked[at : at + len(piece)]):
                return True
            at = actual.find(piece, at + 1)
    return False


def _added(expected: str, actual: str) -> list[tuple[int, int]]:
    """Where `actual` has text that `expected` lacks, as an alignment of the two finds."""
    matcher = SequenceMatcher(None, expected, actual, autojunk=False)
    return [
        (start, end)
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag in ("insert", "replace")
    ]


@lru_cache(maxsize=64)
def _pieces(grammar: Grammar) -> frozenset[str]:
    """The proper prefixes and suffixes of the grammar's delimiters, two characters or more
    (one, such as `<` or `>`, is too common in text to name a delimiter on its own)."""
    return frozenset(
        piece
        for pair in grammar.pairs
        for delimiter in pair
        for cut in range(2, len(delimiter))
        for piece in (delimiter[:cut], delimiter[-cut:])
    )


def _single(grammar: Grammar) -> set[str]:
    """Pieces of one character that name a delimiter when added alone: a first character
    (`<`, the start a stream holds back)."""
    return {delimiter[0] for pair in grammar.pairs for delimiter in pair}


def _delimiters(channels: Mapping[str, str], name: str, grammar: Grammar) -> int:
    return len(grammar.delimiter.findall(channels.get(name, "")))
