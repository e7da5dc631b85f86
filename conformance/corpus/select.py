"""Choosing cases and checks: by category, taxonomy entry, ID, level, check, or a `-k`
expression. A selection that matches nothing is an error, never an empty success."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.contracts import all_checks
from conformance.errors import UsageError
from conformance.model.cases import CaseIdentity


@dataclass(frozen=True, slots=True)
class Selection:
    categories: tuple[str, ...] = ()
    #: Entries or prefixes: `SPLIT` selects every `SPLIT.*` entry.
    taxonomy: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    checks: tuple[str, ...] = field(default_factory=all_checks)
    keyword: str | None = None
    _matcher: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name in ("categories", "taxonomy", "ids", "levels"):
            if getattr(self, name):
                data[name] = list(getattr(self, name))
        data["checks"] = list(self.checks)
        if self.keyword:
            data["keyword"] = self.keyword
        return data

    def apply(self, cases: Sequence[CaseIdentity]) -> list[CaseIdentity]:
        known = all_checks()
        unknown = sorted(set(self.checks) - set(known))
        if unknown:
            raise UsageError(
                f"unknown check {', '.join(unknown)}; the checks are {', '.join(known)}"
            )
        matches = keyword_matcher(self.keyword) if self.keyword else None
        # A derived case's ID (`K7QF~start.glued`, SPEC 5.6) selects its written case, and
        # only that derived form of it.
        derived: dict[str, list[str]] = {}
        for wanted in self.ids:
            base, sep, _ = wanted.partition("~")
            if sep:
                derived.setdefault(base, []).append(wanted)
        chosen = [
            replace(case, only=tuple(derived[case.id]))
            if case.id in derived and case.id not in self.ids
            else case
            for case in cases
            if (not self.categories or case.category in self.categories)
            and (not self.taxonomy or any(_entry_matches(case.taxonomy, t) for t in self.taxonomy))
            and (not self.ids or case.id in self.ids or case.id in derived)
            and (not self.levels or case.level in self.levels)
            and (matches is None or matches(searchable(case)))
        ]
        if not chosen:
            raise UsageError(
                f"the selection {self.to_json()} matches no case "
                f"(of {len(cases)}); check the names with `conformance dump`"
            )
        return chosen


def searchable(case: CaseIdentity) -> str:
    return f"{case.id} {case.slug} {case.category} {case.taxonomy} {case.level}".lower()


def _entry_matches(entry: str, wanted: str) -> bool:
    return entry == wanted or entry.startswith(wanted.rstrip(".") + ".")


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _clipped(expression: str, limit: int = 60) -> str:
    return expression if len(expression) <= limit else expression[:limit] + "..."


def keyword_matcher(expression: str) -> Callable[[str], bool]:
    """Compile a pytest-style `-k` expression: words (case-insensitive substrings) joined
    with `and`, `or`, `not` and parentheses."""
    tokens = _TOKEN.findall(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise UsageError(f"-k {expression!r}: the expression ends too early")
        position += 1
        return tokens[position - 1]

    def disjunction() -> Callable[[str], bool]:
        parts = [conjunction()]
        while peek() == "or":
            take()
            parts.append(conjunction())
        return lambda text: any(part(text) for part in parts)

    def conjunction() -> Callable[[str], bool]:
        parts = [negation()]
        while peek() == "and":
            take()
            parts.append(negation())
        return lambda text: all(part(text) for part in parts)

    def negation() -> Callable[[str], bool]:
        if peek() == "not":
            take()
            inner = negation()
            return lambda text: not inner(text)
        token = take()
        if token == "(":
            inner = disjunction()
            if take() != ")":
                raise UsageError(f"-k {expression!r}: a `(` is not closed")
            return inner
        if token in (")", "and", "or"):
            raise UsageError(f"-k {expression!r}: unexpected {token!r}")
        word = token.lower()
        return lambda text: word in text

    try:
        matcher = disjunction()
    except RecursionError:
        # Each `(` or `not` is a level of recursion: thousands of them exhaust the stack.
        raise UsageError(
            f"-k {_clipped(expression)!r}: nested too deeply; write it with fewer parentheses"
        ) from None
    if peek() is not None:
        raise UsageError(f"-k {expression!r}: unexpected {peek()!r}")
    return matcher
