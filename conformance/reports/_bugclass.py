"""Bug classes of failed results: those of two channels (model/bugs.py), and what a result
says when there are no channels to compare (a crash, declined inputs, another contract's
output):

    classify(result, grammar).name   # "delimiter-shown"
"""

from __future__ import annotations

from conformance.engine.declines import CONTRADICTED, DECLINED
from conformance.model.bugs import CHANNEL_CLASSES, BugClass, channel_bug
from conformance.model.grammar import Grammar
from conformance.model.results import CaseResult, Verdict

CRASH = BugClass("crash", "raises, hangs or answers malformed replies")
#: `unsupported` for some inputs of an operation the implementation answers (or the reverse):
#: dodging inputs, not a crash (engine/declines.py).
DECLINES = BugClass(
    "declines-inputs", "answers `unsupported` to some inputs of an operation it answers"
)
#: Another contract's output (a rendered stream, an egress request) that differs: these bugs
#: are not about two channels (`conformance.reports._triage` assigns it).
WRONG_OUTPUT = BugClass("wrong-output", "the output differs from the expected one")
CLASSES = (CRASH, DECLINES, *CHANNEL_CLASSES, WRONG_OUTPUT)
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
    return channel_bug(expected, actual, grammar)
