"""What to fix first: an implementation's failing checks grouped by bug class, each class led
by its smallest failing input, the classes ordered by requirement level (MUST first) and then
by the size of that input.

Every report leads with this (report.md, report.html, the terminal), so a reader starts from
the smallest input that shows each distinct bug rather than from corpus order:

    for group in triage(implementation):
        group.bug.name, group.count, group.example   # "delimiter-shown", 120, CaseResult
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from conformance.model.grammar import Grammar
from conformance.model.options import DEFAULT, Options, OptionsError
from conformance.model.results import LEVELS, CaseResult, ImplementationRun, Verdict

from . import _bugclass
from ._bugclass import CLASSES, BugClass

#: The verdicts that are bugs to fix (XFAIL is a known one, NON_STRICT only whitespace).
FAILING = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT)
#: Requirement levels, most severe first; a level not listed ranks after these.


@dataclass(frozen=True, slots=True)
class BugGroup:
    """One bug class of one implementation: its failing checks, the representative first."""

    bug: BugClass
    results: list[CaseResult]

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


def triage(implementation: ImplementationRun) -> list[BugGroup]:
    """The implementation's failing checks by bug class, in the order to fix them."""
    grammar = grammar_of(implementation)
    by_class: dict[BugClass, list[CaseResult]] = {}
    for result in implementation.results:
        if result.verdict in FAILING:
            by_class.setdefault(classify(result, grammar), []).append(result)
    groups = [
        BugGroup(bug, sorted(results, key=severity_then_size)) for bug, results in by_class.items()
    ]
    return sorted(groups, key=lambda g: (*severity_then_size(g.example)[:3], CLASSES.index(g.bug)))
