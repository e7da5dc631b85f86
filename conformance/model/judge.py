"""Judging one reply against a case's expectation (SPEC.md section 8)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from conformance.model.chunks import CHANNELS, Channels
from conformance.model.grammar import Grammar
from conformance.model.results import Verdict


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    reason: str = ""
    holdback: int | None = None


def squeeze(text: str) -> str:
    """The text without whitespace: equal squeezed texts differ only in whitespace."""
    return "".join(ch for ch in text if not ch.isspace())


def compare(expected: Channels, actual: Mapping[str, str], level: str) -> Judgement:
    """PASS when equal; NON_STRICT when only whitespace differs or the case is not
    must-level; FAIL otherwise."""
    differing = [name for name in CHANNELS if getattr(expected, name) != actual[name]]
    if not differing:
        return Judgement(Verdict.PASS)
    if all(squeeze(getattr(expected, name)) == squeeze(actual[name]) for name in differing):
        return Judgement(Verdict.NON_STRICT, f"whitespace differs in {' and '.join(differing)}")
    reason = "; ".join(
        _difference(name, getattr(expected, name), actual[name]) for name in differing
    )
    if level != "must":
        return Judgement(Verdict.NON_STRICT, f"{level}-level case differs: {reason}")
    return Judgement(Verdict.FAIL, reason)


def _difference(name: str, want: str, got: str) -> str:
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


def holdback(
    deltas: Sequence[Mapping[str, str]], reference: Sequence[Mapping[str, str]]
) -> tuple[int, int]:
    """The most characters the implementation had released fewer of than the reference,
    at any step, and the first step where that happened."""
    worst, worst_step = 0, -1
    mine = theirs = 0
    for step, (delta, ref) in enumerate(zip(deltas, reference, strict=True)):
        mine += len(delta["assistant"]) + len(delta["thinking"])
        theirs += len(ref["assistant"]) + len(ref["thinking"])
        if theirs - mine > worst:
            worst, worst_step = theirs - mine, step
    return worst, worst_step
