"""What the site shows, computed from the store's runs: each implementation as it ran in each
run (an `Entry`), its pass shares by level and category, its history, and the cases.

An implementation on the site is a label under a profile (`vllm` and `vllm--deepseek_r1` are
two): its results under one set of options compare with each other over dates and versions.
Its current entry is the one of the latest run that has it, so results of split CI jobs
(one library each) merge.

A pass is PASS or NON_STRICT; a share is passes over judged results (everything but SKIP).
An expected failure (XFAIL) is a failure here: the site says what a library does, not
whether it did what its expectation file says.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.model.cases import written_id
from conformance.model.results import LEVELS, CaseResult, ImplementationRun, Verdict, worst
from conformance.store.db import StoredRun

PASSED = frozenset({Verdict.PASS, Verdict.NON_STRICT})


@dataclass(frozen=True, slots=True)
class Share:
    passed: int = 0
    judged: int = 0

    def __add__(self, other: Share) -> Share:
        return Share(self.passed + other.passed, self.judged + other.judged)

    @property
    def percent(self) -> float | None:
        return None if not self.judged else 100.0 * self.passed / self.judged

    @property
    def text(self) -> str:
        value = self.percent
        return "n/a" if value is None else f"{value:.1f}%"


def share_of(results: Iterable[CaseResult]) -> Share:
    judged = [r for r in results if r.verdict is not Verdict.SKIP]
    return Share(sum(1 for r in judged if r.verdict in PASSED), len(judged))


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


@dataclass(slots=True)
class Entry:
    """One implementation in one run."""

    key: str
    stored: StoredRun
    implementation: ImplementationRun
    levels: dict[str, Share] = field(default_factory=dict)
    categories: dict[tuple[str, str], Share] = field(default_factory=dict)

    @property
    def info(self) -> Any:
        return self.implementation.info

    @property
    def label(self) -> str:
        return self.info.series

    @property
    def profile(self) -> str:
        profile = self.info.options.get("profile")
        return profile if isinstance(profile, str) else ""

    @property
    def started(self) -> str:
        return self.stored.started

    @property
    def total(self) -> Share:
        return sum(self.levels.values(), Share())


def key_of(implementation: ImplementationRun) -> str:
    profile = implementation.info.options.get("profile")
    label = implementation.info.series
    return slug(f"{label}--{profile}" if isinstance(profile, str) and profile else label)


def entry_of(stored: StoredRun, implementation: ImplementationRun) -> Entry:
    entry = Entry(key_of(implementation), stored, implementation)
    by_level: dict[str, list[CaseResult]] = defaultdict(list)
    by_category: dict[tuple[str, str], list[CaseResult]] = defaultdict(list)
    for result in implementation.results:
        by_level[result.level].append(result)
        by_category[(result.category, result.level)].append(result)
    entry.levels = {level: share_of(by_level[level]) for level in LEVELS if level in by_level}
    entry.categories = {key: share_of(results) for key, results in sorted(by_category.items())}
    return entry


@dataclass(slots=True)
class Site:
    """Everything the pages are made from."""

    runs: list[StoredRun]
    #: Each implementation's entries, oldest first.
    history: dict[str, list[Entry]]
    #: The latest entry of each implementation, in the order the pages list them.
    current: list[Entry]
    categories: list[str]
    levels: list[str]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The (category, level) pairs some current implementation has results for."""
        found = {pair for entry in self.current for pair in entry.categories}
        return sorted(found, key=lambda p: (p[0], LEVELS.index(p[1])))

    def entry(self, key: str) -> Entry:
        return self.history[key][-1]

    def failed_since(self, entry: Entry) -> Entry | None:
        """The latest run of `entry`'s implementation when that one could not start and a
        later one than `entry`, the run shown."""
        latest = self.history[entry.key][-1]
        return latest if latest is not entry and latest.implementation.failure else None


def build_site(runs: Sequence[StoredRun]) -> Site:
    history: dict[str, list[Entry]] = defaultdict(list)
    for stored in runs:
        for implementation in stored.run.implementations:
            entry = entry_of(stored, implementation)
            history[entry.key].append(entry)
    for entries in history.values():
        entries.sort(key=lambda e: (e.started, e.stored.id))
    # A run in which the implementation could not start (an old version the adapter no
    # longer fits) says nothing of its behaviour: the latest run that judged it is shown.
    current = [
        next((e for e in reversed(entries) if e.implementation.failure is None), entries[-1])
        for entries in history.values()
    ]
    # The reference first, then by label and profile.
    current.sort(key=lambda e: (e.label != "reference", e.label, e.profile))
    categories = sorted({c for e in current for c, _ in e.categories})
    levels = [lv for lv in LEVELS if any(lv in e.levels for e in current)]
    return Site(list(runs), dict(history), current, categories, levels)


@dataclass(frozen=True, slots=True)
class CaseRow:
    """One written case: its results on each current implementation (all forms, checks)."""

    id: str
    slug: str
    title: str
    category: str
    level: str
    taxonomy: str
    #: key -> results of that implementation for this case.
    results: dict[str, list[CaseResult]]

    def verdict(self, key: str) -> Verdict | None:
        """The case's verdict on one implementation: the worst judged one (SKIP only when
        nothing was judged); None when it did not run the case."""
        results = self.results.get(key)
        if not results:
            return None
        judged = [r.verdict for r in results if r.verdict is not Verdict.SKIP]
        return worst(judged) if judged else Verdict.SKIP

    def mark(self, key: str) -> str:
        verdict = self.verdict(key)
        if verdict is None:
            return "none"
        if verdict is Verdict.SKIP:
            return "skip"
        return "pass" if verdict in PASSED else "fail"

    def disagree(self, keys: Iterable[str]) -> bool:
        marks = {self.mark(k) for k in keys} - {"none", "skip"}
        return len(marks) > 1


def case_rows(current: Sequence[Entry]) -> list[CaseRow]:
    found: dict[str, dict[str, list[CaseResult]]] = defaultdict(lambda: defaultdict(list))
    first: dict[str, CaseResult] = {}
    for entry in current:
        for result in entry.implementation.results:
            written = written_id(result.case)
            found[written][entry.key].append(result)
            if written not in first or result.case == written:
                first[written] = result
    rows = []
    for written, results in found.items():
        sample = first[written]
        title = sample.title.partition(" [derived")[0]
        rows.append(
            CaseRow(
                written,
                sample.slug,
                title,
                sample.category,
                sample.level,
                sample.taxonomy,
                dict(results),
            )
        )
    rows.sort(key=lambda r: (r.category, r.id))
    return rows


@dataclass(frozen=True, slots=True)
class Divergence:
    """A known divergence: the expectation rule behind XFAIL results, with its link."""

    rule: str
    reason: str
    link: str
    count: int
    cases: tuple[str, ...]


def divergences(entry: Entry) -> list[Divergence]:
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result in entry.implementation.results:
        if result.verdict in (Verdict.XFAIL, Verdict.XPASS) and result.expectation:
            rule = result.expectation.get("rule") or result.expectation.get("reason", "")
            groups[rule].append(result)
    found = []
    for rule, results in groups.items():
        expectation = results[0].expectation or {}
        cases = tuple(sorted({written_id(r.case) for r in results}))
        found.append(
            Divergence(
                rule,
                str(expectation.get("reason", "")),
                str(expectation.get("link", "")),
                len(results),
                cases,
            )
        )
    found.sort(key=lambda d: -d.count)
    return found


def unexpected(entry: Entry) -> list[CaseResult]:
    """Failures no expectation explains (FAIL, ERROR, TIMEOUT, XPASS)."""
    bad = {Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT, Verdict.XPASS}
    return [r for r in entry.implementation.results if r.verdict in bad]
