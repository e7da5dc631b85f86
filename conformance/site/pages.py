"""The pages' contents: what each template is given, computed from the `Site`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.model.cases import Case, CaseIdentity
from conformance.model.results import CaseResult, Run, Verdict
from conformance.reports._common import format_options, option_value
from conformance.reports._diff import Change, Comparison, compare
from conformance.reports._rerun import rerun_command
from conformance.site.charts import Chart, history_chart
from conformance.site.model import PASSED, CaseRow, Entry, Site, slug

#: Characters of one chunk or channel shown on a case page (the rest is counted).
KEEP = 400
#: Chunks of a case's input shown on its page.
MAX_CHUNKS = 48


@dataclass(frozen=True, slots=True)
class Budget:
    """How much of each text and of each input a case page shows."""

    keep: int = KEEP
    chunks: int = MAX_CHUNKS


#: For a case page that would be over the size budget of a page with the default one.
SMALL = Budget(keep=80, chunks=6)


def clip(text: str | None, keep: int = KEEP) -> str:
    if text is None:
        return ""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}… ({len(text) - keep} more characters)"


def impl_page(entry: Entry) -> str:
    return f"impl/{entry.key}.html"


def case_page(case: str) -> str:
    return f"case/{slug(case)}.html"


def category_page(category: str) -> str:
    return f"cases/{slug(category)}.html"


def diff_page(key: str, index: int) -> str:
    return f"diff/{key}-{index}.html"


def release_diff_page(key: str, index: int) -> str:
    return f"diff/{key}-release-{index}.html"


def verdict_class(verdict: Verdict | None) -> str:
    if verdict is None:
        return "none"
    if verdict is Verdict.SKIP:
        return "skip"
    return "pass" if verdict in PASSED else "fail"


@dataclass(frozen=True, slots=True)
class OptionRow:
    name: str
    value: str
    #: What a fingerprint found it to follow, and whether that is `value`; "" where the run
    #: made no fingerprint.
    follows: str = ""
    agrees: bool = True


def options_rows(
    options: Mapping[str, Any], fingerprint: Mapping[str, Mapping[str, Any]] | None = None
) -> list[OptionRow]:
    found = fingerprint or {}
    rows = []
    for name, value in options.items():
        finding = found.get(name, {})
        follows, agrees = str(finding.get("follows", "")), bool(finding.get("agrees", True))
        rows.append(OptionRow(name, option_value(value), follows, agrees))
    return rows


def describe_options(options: Mapping[str, Any]) -> str:
    return format_options(options)


def history_charts(site: Site, key: str) -> list[Chart]:
    entries = site.history[key]
    dated = [
        (f"{e.started[:10]} {e.info.version}", e, diff_page(key, i) if i else "")
        for i, e in enumerate(entries)
    ]
    # Over versions: each point links to the changes since the release before it.
    versions = [
        (e.info.version, e, release_diff_page(key, n) if n else "")
        for n, e in enumerate(releases(entries))
    ]
    charts = [history_chart("Pass share over dates (each run)", dated, site.levels)]
    if len(versions) > 1:
        charts.append(history_chart("Pass share over library versions", versions, site.levels))
    return charts


def releases(entries: Sequence[Entry]) -> list[Entry]:
    """The latest entry of each library version, in release order."""
    latest = {e.info.version: e for e in entries}
    return [latest[v] for v in sorted(latest, key=version_key)]


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Versions in release order (`2.9.1` before `2.40.0`), whatever their form: numbers
    compare as numbers, other parts as text after them."""
    parts = re.findall(r"\d+|[^\d.]+", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def solo(entry: Entry) -> Run:
    """A run of `entry`'s implementation alone (for comparing one implementation's runs)."""
    stored = entry.stored
    return Run(
        stored.harness_version,
        stored.spec_version,
        stored.started,
        [entry.implementation],
    )


@dataclass(frozen=True, slots=True)
class DiffView:
    key: str
    page: str
    old: Entry
    new: Entry
    comparison: Comparison

    def count(self, change: str) -> int:
        return self.comparison.count(Change(change))

    def rows(self, change: str, limit: int = 300) -> list[Any]:
        return [c for c in self.comparison.changes if c.change is Change(change)][:limit]


def diff_view(key: str, page: str, old: Entry, new: Entry) -> DiffView:
    return DiffView(key, page, old, new, compare(solo(old), solo(new)))


def diffs(site: Site) -> list[DiffView]:
    """Each implementation's run against its run before."""
    return [
        diff_view(key, diff_page(key, index), entries[index - 1], entries[index])
        for key, entries in site.history.items()
        for index in range(1, len(entries))
    ]


def release_diffs(site: Site) -> list[DiffView]:
    """Each release of an implementation's library against the release before (the latest
    run of each), where there are two releases."""
    return [
        diff_view(key, release_diff_page(key, n), ordered[n - 1], ordered[n])
        for key, entries in site.history.items()
        for ordered in [releases(entries)]
        for n in range(1, len(ordered))
    ]


@dataclass(frozen=True, slots=True)
class Output:
    """One result on a case page."""

    form: str
    check: str
    verdict: Verdict
    css: str
    reason: str
    expected: Mapping[str, str] | None
    actual: Mapping[str, str] | None
    #: The input the result's run used, where the result carries it (failures).
    chunks: Sequence[tuple[str, str]]
    command: str


def outputs(entry: Entry, results: Sequence[CaseResult], budget: Budget) -> list[Output]:
    keep = budget.keep
    shown = []
    for r in sorted(results, key=lambda r: (r.case, r.check)):
        shown.append(
            Output(
                r.case,
                r.check,
                r.verdict,
                verdict_class(r.verdict),
                clip(r.reason, 600),
                {k: clip(v, keep) for k, v in r.expected.items()} if r.expected else None,
                {k: clip(v, keep) for k, v in r.actual.items()} if r.actual else None,
                [
                    (clip(c.get("content"), keep), clip(c.get("reasoning"), keep))
                    for c in (r.chunks or [])[: budget.chunks]
                ],
                rerun_command(entry.info, r),
            )
        )
    return shown


@dataclass(frozen=True, slots=True)
class Written:
    """What the corpus says of a written case: its input and expected channels."""

    chunks: list[tuple[str, str]]
    more_chunks: int
    expected: Sequence[tuple[str, Mapping[str, str]]]


def written(case: CaseIdentity | None, budget: Budget) -> Written | None:
    if not isinstance(case, Case):
        return None
    keep = budget.keep
    chunks = [
        (clip(c.content, keep), clip(c.reasoning, keep)) for c in case.chunks[: budget.chunks]
    ]
    expected = [("default options", _channels(case.expected, keep))]
    for variant in case.variants:
        when = ", ".join(f"{k}={option_value(v)}" for k, v in variant.when.items())
        if variant.expected is not None:
            expected.append((when, _channels(variant.expected, keep)))
    return Written(chunks, max(0, len(case.chunks) - budget.chunks), expected)


def _channels(channels: Any, keep: int) -> dict[str, str]:
    return {"assistant": clip(channels.assistant, keep), "thinking": clip(channels.thinking, keep)}


def case_context(
    row: CaseRow, site: Site, corpus: Mapping[str, CaseIdentity], budget: Budget = Budget()
) -> dict[str, Any]:
    return {
        "row": row,
        "written": written(corpus.get(row.id), budget),
        "implementations": [
            (
                entry,
                verdict_class(row.verdict(entry.key)),
                outputs(entry, row.results[entry.key], budget),
            )
            for entry in site.current
            if entry.key in row.results
        ],
    }
