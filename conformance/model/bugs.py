"""Bug classes of two channels: what an implementation did wrong with a stream, read off the
channels it produced and the ones the spec expects.

The taxonomy says what a case is about (a split close delimiter, an orphan close); the bug
class says what the implementation did wrong with it, which is what a reader comparing
implementations wants to know, what an upstream fix changes, and what tells two fuzzing
counterexamples apart:

    channel_bug(expected, actual, grammar).name   # "delimiter-shown"

The order of `CHANNEL_CLASSES` is the order of the checks: output that both shows a delimiter
and drops text is a `delimiter-shown`, the more visible of the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from conformance.model.grammar import Grammar


@dataclass(frozen=True, slots=True)
class BugClass:
    name: str
    title: str


DELIMITER_SHOWN = BugClass("delimiter-shown", "a delimiter is shown in the answer")
DELIMITER_IN_THINKING = BugClass(
    "delimiter-in-thinking", "a delimiter is left in the thinking channel"
)
TEXT_DROPPED = BugClass("text-dropped", "text is lost (in neither channel)")
TEXT_ADDED = BugClass("text-added", "text is duplicated or added")
REASONING_SHOWN = BugClass("reasoning-shown", "reasoning is shown as the answer")
ANSWER_HIDDEN = BugClass("answer-hidden", "answer text is hidden in the thinking channel")
CHANNEL_CLASSES = (
    DELIMITER_SHOWN,
    DELIMITER_IN_THINKING,
    TEXT_DROPPED,
    TEXT_ADDED,
    REASONING_SHOWN,
    ANSWER_HIDDEN,
)


def channel_bug(
    expected: Mapping[str, str], actual: Mapping[str, str], grammar: Grammar
) -> BugClass:
    """The bug class of channels that differ from the expected ones."""
    if _delimiters(actual, "assistant", grammar) > _delimiters(expected, "assistant", grammar):
        return DELIMITER_SHOWN
    if _delimiters(actual, "thinking", grammar) > _delimiters(expected, "thinking", grammar):
        return DELIMITER_IN_THINKING
    want = len(expected["assistant"]) + len(expected["thinking"])
    got = len(actual["assistant"]) + len(actual["thinking"])
    if got < want:
        return TEXT_DROPPED
    if got > want:
        return TEXT_ADDED
    if len(actual["assistant"]) > len(expected["assistant"]):
        return REASONING_SHOWN
    return ANSWER_HIDDEN


def _delimiters(channels: Mapping[str, str], name: str, grammar: Grammar) -> int:
    return len(grammar.delimiter.findall(channels.get(name, "")))
