"""Judging one reply against a case's expectation (SPEC.md section 8)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import sub

from conformance.model.chunks import CHANNELS, Channels
from conformance.model.grammar import Grammar
from conformance.model.results import Verdict


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    reason: str = ""
    holdback: int | None = None


_PASS = Judgement(Verdict.PASS)


def squeeze(text: str) -> str:
    """The text without whitespace: equal squeezed texts differ only in whitespace.

    `str.split()` cuts at exactly the characters `str.isspace()` names, in C: a
    character-by-character loop took seconds on a reply of megabytes."""
    return "".join(text.split())


def compare(expected: Channels, actual: Mapping[str, str], level: str) -> Judgement:
    """PASS when equal; NON_STRICT when only whitespace differs or the case is not
    must-level; FAIL otherwise."""
    if expected.assistant == actual["assistant"] and expected.thinking == actual["thinking"]:
        return _PASS  # the common case, first: this runs for every reply
    differing = [name for name in CHANNELS if getattr(expected, name) != actual[name]]
    if all(squeeze(getattr(expected, name)) == squeeze(actual[name]) for name in differing):
        return Judgement(Verdict.NON_STRICT, f"whitespace differs in {' and '.join(differing)}")
    reason = "; ".join(
        difference(name, getattr(expected, name), actual[name]) for name in differing
    )
    return graded(Verdict.FAIL, reason, level)


def graded(verdict: Verdict, reason: str, level: str) -> Judgement:
    """The verdict of a case at `level`: a FAIL of a case below MUST is NON_STRICT (SPEC.md
    8.3). Every contract's judging goes through here."""
    if verdict == Verdict.FAIL and level != "must":
        return Judgement(Verdict.NON_STRICT, f"{level}-level case differs: {reason}")
    return Judgement(verdict, reason)


def difference(name: str, want: str, got: str) -> str:
    """Where two texts part, with a little context: the full texts are in the result."""
    at = common_prefix(want, got)
    start = max(0, at - 10)
    lead = "..." if start else ""
    return (
        f"{name} differs at character {at}: expected {lead}{want[start : at + 20]!r}, "
        f"got {lead}{got[start : at + 20]!r}"
    )


def first_divergence(
    deltas: Sequence[Mapping[str, str]],
    expected: Channels,
    chunks: Sequence[Mapping[str, str | None]],
    grammar: Grammar,
) -> str:
    """Where a stream first went wrong: the step whose delta left the expected text."""
    sofar = {name: "" for name in CHANNELS}
    for step, delta in enumerate(deltas):
        for name in CHANNELS:
            sofar[name] += delta[name]
            want = getattr(expected, name)
            if not want.startswith(sofar[name]):
                at = common_prefix(sofar[name], want)
                gained = sofar[name][at:]
                where = f"chunk {step}" if step < len(chunks) else "the final flush"
                hint = ""
                if name == "assistant" and _delimiter_fragment(gained, grammar):
                    hint = " (a delimiter or a fragment of one)"
                return (
                    f"at {where} {name} gained {gained!r}{hint} where {want[at : at + 20]!r} "
                    "was expected"
                )
    missing = [name for name in CHANNELS if sofar[name] != getattr(expected, name)]
    return f"{' and '.join(missing)} ended short: text was dropped or never flushed"


def common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] != b[index]:
            return index
    return size


def _delimiter_fragment(text: str, grammar: Grammar) -> bool:
    if grammar.delimiter.search(text):
        return True
    return grammar.hold(text) < len(text)


def released(deltas: Iterable[Mapping[str, str]]) -> list[int]:
    """The characters each delta releases, both channels together."""
    return [len(delta["assistant"]) + len(delta["thinking"]) for delta in deltas]


def behind(mine: Iterable[int], theirs: Iterable[int]) -> list[int]:
    """After each step, how many characters the reference had released (`theirs`, per step)
    that the implementation (`mine`) had not; negative where it was ahead."""
    return list(map(sub, accumulate(theirs), accumulate(mine)))


def holdback(lags: Sequence[int]) -> tuple[int, int]:
    """From `behind`'s lags: the most characters held back beyond the reference at any
    step, and the first step where that happened ((0, -1) when never behind)."""
    worst = max(lags, default=0)
    return (worst, lags.index(worst)) if worst > 0 else (0, -1)
