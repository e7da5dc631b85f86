"""What to fix first: an implementation's failing checks grouped by bug signature, each led by
its smallest failing input, the signatures that show something new first.

A signature is what went wrong (the bug class), in which category of cases, under which check
(whole, stream, chars, splits...), and whether the case's whole form passes (the bug shows
only when the input is split). One bug class found in many places is many signatures: a
close delimiter split across chunks leaking is not hidden behind a smaller orphan close of
the same class.

Every report leads with this (report.md, report.html, the terminal, the pytest plugin), so a
reader starts from the smallest input of each distinct bug rather than from corpus order:

    for group in triage(implementation):
        group.bug.name, group.category, group.check, group.count, group.example
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from conformance.model.cuts import cuts_delimiter
from conformance.model.grammar import Grammar
from conformance.model.options import DEFAULT, Options, OptionsError
from conformance.model.results import LEVELS, CaseResult, ImplementationRun, Verdict

from . import _bugclass
from ._bugclass import CLASSES, BugClass

#: The verdicts that are bugs to fix (XFAIL is a known one, NON_STRICT only whitespace).
FAILING = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT)
#: The check of a case's unsplit form: a failure elsewhere whose whole form passes is a
#: bug of chunking.
WHOLE = "whole"
#: The check of every two-chunk split: it knows which of its failures cut a delimiter.
SPLITS = "splits"


@dataclass(frozen=True, slots=True)
class Signature:
    """What went wrong, in which category, under which check; `split_only` when the case's
    whole form was checked and did not fail with this bug class."""

    bug: BugClass
    category: str
    check: str
    split_only: bool = False

    @property
    def where(self) -> str:
        """`split-delimiters · stream (whole passes)`."""
        return f"{self.category} · {self.check}" + (" (whole passes)" if self.split_only else "")


@dataclass(frozen=True, slots=True)
class BugGroup:
    """The failing checks of one signature, the representative (smallest) first."""

    signature: Signature
    results: list[CaseResult]
    #: Every one of its checks fails only where a delimiter is cut (`delimiter_cut_only`).
    cut_only: bool = False

    @property
    def where(self) -> str:
        """The signature's `where`, with `only when a delimiter is cut` when that holds."""
        if self.cut_only:
            return self.signature.where.removesuffix(")") + ", only when a delimiter is cut)"
        return self.signature.where

    @property
    def bug(self) -> BugClass:
        return self.signature.bug

    @property
    def category(self) -> str:
        return self.signature.category

    @property
    def check(self) -> str:
        return self.signature.check

    @property
    def example(self) -> CaseResult:
        return self.results[0]

    @property
    def count(self) -> int:
        return len(self.results)

    @property
    def cases(self) -> int:
        return len({result.case for result in self.results})

    @property
    def level(self) -> str:
        return self.example.level.upper()

    @property
    def counts(self) -> str:
        """`3 checks in 2 cases`."""
        checks = f"{self.count} check{'s' if self.count != 1 else ''}"
        return f"{checks} in {self.cases} case{'s' if self.cases != 1 else ''}"


def level_rank(level: str) -> int:
    low = level.lower()
    return LEVELS.index(low) if low in LEVELS else len(LEVELS)


def input_size(result: CaseResult) -> tuple[int, int]:
    """Characters of input, then chunks; a result without its input sorts last."""
    if result.chunks is None:
        return (1 << 62, 0)
    characters = sum(
        len(c.get("content") or "") + len(c.get("reasoning") or "") for c in result.chunks
    )
    return characters, len(result.chunks)


def severity_then_size(result: CaseResult) -> tuple[int, int, int, str, str]:
    return (level_rank(result.level), *input_size(result), result.case, result.check)


def grammar_of(implementation: ImplementationRun) -> Grammar:
    try:
        return Options.from_mapping(implementation.info.options).grammar
    except OptionsError:
        # Options this harness does not know: judge delimiters by the spec's default grammar.
        return DEFAULT.grammar


def classify(result: CaseResult, grammar: Grammar) -> BugClass:
    """The bug class, for any contract: outputs that are not two channels have their own."""
    if result.verdict not in (Verdict.ERROR, Verdict.TIMEOUT) and not (
        _channels(result.expected) and _channels(result.actual)
    ):
        return _bugclass.WRONG_OUTPUT
    return _bugclass.classify(result, grammar)


def _channels(value: Mapping[str, str] | None) -> bool:
    return isinstance(value, Mapping) and "assistant" in value and "thinking" in value


def signatures(implementation: ImplementationRun) -> dict[int, Signature]:
    """The signature of each failing result, by the result's `id`."""
    grammar = grammar_of(implementation)
    bugs = {
        id(result): classify(result, grammar)
        for result in implementation.results
        if result.verdict in FAILING
    }
    # The bug class of each case's whole form, and which cases had one checked at all.
    whole: dict[str, BugClass | None] = {}
    for result in implementation.results:
        if result.check == WHOLE and result.verdict is not Verdict.SKIP:
            whole[result.case] = bugs.get(id(result))
    found = {}
    for result in implementation.results:
        bug = bugs.get(id(result))
        if bug is None:
            continue
        split_only = result.check != WHOLE and result.case in whole and whole[result.case] != bug
        found[id(result)] = Signature(bug, result.category, result.check, split_only)
    return found


def cut_only_results(
    implementation: ImplementationRun, signed: Mapping[int, Signature]
) -> set[int]:
    """The `id` of each failing result whose whole form passes and that fails only where a
    delimiter is cut."""
    grammar = grammar_of(implementation)
    cut_splits = {r.case for r in implementation.results if r.check == SPLITS and r.cut_only}
    return {
        id(result)
        for result in implementation.results
        if id(result) in signed
        and signed[id(result)].split_only
        and delimiter_cut_only(result, cut_splits, grammar)
    }


def delimiter_cut_only(result: CaseResult, cut_splits: set[str], grammar: Grammar) -> bool:
    """Whether a failure shows only where a delimiter is cut (SPEC.md 5.11: under atomic
    delimiters no check feeds such a chunking). A `splits` check knows it of itself: every
    split that failed cut inside a delimiter. A check of one chunking (`stream`, `chars`)
    has no uncut chunking to compare with: it counts when its chunking cuts inside a
    delimiter and every split of the same case that cuts none passed."""
    if result.check == SPLITS:
        return bool(result.cut_only)
    if result.case not in cut_splits or result.chunks is None or result.digests:
        return False  # no evidence, or an input kept only in part
    return cuts_delimiter((chunk.get("content") for chunk in result.chunks), grammar)


def triage(implementation: ImplementationRun) -> list[BugGroup]:
    """The implementation's failing checks by signature, in the order to read them: first
    the most severe signature of each bug class, then of each class the first that fails only
    when split, then one per category, then the rest; within each of
    these the most severe and smallest input first."""
    by_signature: dict[Signature, list[CaseResult]] = {}
    signed = signatures(implementation)
    for result in implementation.results:
        signature = signed.get(id(result))
        if signature is not None:
            by_signature.setdefault(signature, []).append(result)
    cut = cut_only_results(implementation, signed)
    groups = sorted(
        (
            BugGroup(
                key,
                sorted(rows, key=severity_then_size),
                all(id(row) in cut for row in rows),
            )
            for key, rows in by_signature.items()
        ),
        key=_order,
    )
    novelty: list[Callable[[BugGroup], Hashable]] = [
        lambda g: g.bug,
        lambda g: (g.bug, True) if g.signature.split_only else None,
        lambda g: (g.bug, g.category),
    ]
    tiers: list[list[BugGroup]] = [[] for _ in range(len(novelty) + 1)]
    seen: list[set[Hashable]] = [set() for _ in novelty]
    for group in groups:
        tier = len(novelty)
        for number, key in enumerate(novelty):
            value = key(group)
            if value is not None and value not in seen[number]:
                tier = min(tier, number)
        for number, key in enumerate(novelty):
            value = key(group)
            if value is not None:
                seen[number].add(value)
        tiers[tier].append(group)
    return [group for tier in tiers for group in tier]


def _order(group: BugGroup) -> tuple[int, int, int, int]:
    return (*severity_then_size(group.example)[:3], CLASSES.index(group.bug))


def bug_classes(groups: list[BugGroup]) -> list[BugClass]:
    """The bug classes of some groups, in the order the groups first show them."""
    return list(dict.fromkeys(group.bug for group in groups))


def cut_only_note(groups: list[BugGroup]) -> str:
    """A sentence counting the failing checks that show only where a delimiter is cut, or
    nothing when there are none."""
    checks = sum(group.count for group in groups if group.cut_only)
    if not checks:
        return ""
    return (
        f"{checks} of them fail only when a delimiter is cut: with atomic_delimiters (a model"
        " that emits each delimiter as one token, SPEC.md 5.11) no check feeds such a chunking."
    )
