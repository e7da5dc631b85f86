"""Bug classes: what went wrong in a failed result, read off its expected and actual channels.

The taxonomy says what a case is about (a split close delimiter, an orphan close); the bug
class says what the implementation did wrong with it, which is what a reader comparing
implementations wants to know and what an upstream fix changes:

    classify(result, grammar).name   # "delimiter-shown"

The order of `CLASSES` is the order of the checks: a result that both shows a delimiter and
drops text is a `delimiter-shown`, the more visible of the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from conformance.engine.declines import CONTRADICTED, DECLINED
from conformance.model.grammar import Grammar
from conformance.model.results import CaseResult, Verdict


@dataclass(frozen=True, slots=True)
class BugClass:
    name: str
    title: str


CRASH = BugClass("crash", "raises, hangs or answers malformed replies")
#: `unsupported` for some inputs of an operation the implementation answers (or the reverse):
#: dodging inputs, not a crash (engine/declines.py).
DECLINES = BugClass(
    "declines-inputs", "answers `unsupported` to some inputs of an operation it answers"
)
DELIMITER_SHOWN = BugClass("delimiter-shown", "a delimiter is shown in the answer")
DELIMITER_IN_THINKING = BugClass(
    "delimiter-in-thinking", "a delimiter is left in the thinking channel"
)
TEXT_DROPPED = BugClass("text-dropped", "text is lost (in neither channel)")
TEXT_ADDED = BugClass("text-added", "text is duplicated or added")
REASONING_SHOWN = BugClass("reasoning-shown", "reasoning is shown as the answer")
ANSWER_HIDDEN = BugClass("answer-hidden", "answer text is hidden in the thinking channel")
#: Another contract's output (a rendered stream, an egress request) that differs: these bugs
#: are not about two channels (`conformance.reports._triage` assigns it).
WRONG_OUTPUT = BugClass("wrong-output", "the output differs from the expected one")
CLASSES = (
    CRASH,
    DECLINES,
    DELIMITER_SHOWN,
    DELIMITER_IN_THINKING,
    TEXT_DROPPED,
    TEXT_ADDED,
    REASONING_SHOWN,
    ANSWER_HIDDEN,
    WRONG_OUTPUT,
)
BY_NAME = {bug.name: bug for bug in CLASSES}


def classify(result: CaseResult, grammar: Grammar) -> BugClass:
    """The bug class of a failed result (FAIL, ERROR, TIMEOUT, or their XFAIL)."""
    expected, actual = result.expected, result.actual
    if result.verdict == Verdict.ERROR and (
        DECLINED in result.reason or CONTRADICTED in result.reason
    ):
        return DECLINES
    if result.verdict in (Verdict.ERROR, Verdict.TIMEOUT) or expected is None or actual is None:
        return CRASH
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
