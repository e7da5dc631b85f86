"""Compare two runs: what regressed, what got fixed, what else changed, appeared or went away.

Results are matched by (implementation label, case, check), then, among those left over, by
(implementation label, written case, check), so a run under other options (whose derived
case IDs differ: `K7QF~start+think_only`) is compared case by case. The label is taken
without a release it names (`ImplementationInfo.series`): `vercel-ai@6.0.0` and
`vercel-ai@7.0.123` are one implementation at two releases. "ok" is the verdict's own notion
(PASS, NON_STRICT, SKIP, XFAIL): going from ok to not ok is a regression whatever the verdicts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tabulate import tabulate

from conformance.model.cases import written_id
from conformance.model.results import CaseResult, Run, Verdict, worst

from ._markdown import cell, text
from ._visible import one_line

Key = tuple[str, str, str]


class Change(enum.StrEnum):
    REGRESSED = "regressed"
    FIXED = "fixed"
    CHANGED = "changed"
    NEW = "new"
    GONE = "gone"


@dataclass(frozen=True, slots=True)
class VerdictChange:
    change: Change
    label: str
    case: str
    slug: str
    check: str
    old: Verdict | None
    new: Verdict | None
    #: Why the new verdict is what it is (or why the result is missing).
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Comparison:
    changes: list[VerdictChange]
    #: Results present in both runs with the same verdict.
    unchanged: int
    old: Run
    new: Run

    @property
    def regressed(self) -> bool:
        return any(c.change is Change.REGRESSED for c in self.changes)

    def count(self, change: Change) -> int:
        return sum(1 for c in self.changes if c.change is change)


def compare(old: Run, new: Run) -> Comparison:
    """Results match by (implementation, case, check); those left over match by written case
    instead (`K7QF~start+one` and `K7QF~start.glued` are both `K7QF`), so a run under other
    options compares like with like: the forms a written case takes under each run's options
    stand for it, by their worst judged verdict."""
    before = _index(old)
    after = _index(new)
    # An implementation that could not run at all in the new run has no results: its missing
    # results are regressions, not cases that went away.
    broken = {
        run.info.series: run.failure for run in new.implementations if run.failure is not None
    }
    pairs = [(before[key], after[key], key) for key in before if key in after]
    gone = _by_written(before, after)
    added = _by_written(after, before)
    for key in [key for key in gone if key in added]:
        was, now = _standing(gone.pop(key)), _standing(added.pop(key))
        pairs.append((was, now, key))
    changes: list[VerdictChange] = []
    unchanged = 0
    for key, results in gone.items():
        label, case, check = key
        was = _standing(results)
        failure = broken.get(label)
        if failure is not None and was.verdict.ok:
            reason = f"implementation could not run: {one_line(failure)}"
            changes.append(
                VerdictChange(
                    Change.REGRESSED, label, case, was.slug, check, was.verdict, None, reason
                )
            )
        else:
            changes.append(
                VerdictChange(Change.GONE, label, case, was.slug, check, was.verdict, None)
            )
    for was, now, (label, case, check) in pairs:
        if now.verdict is was.verdict:
            unchanged += 1
            continue
        if was.verdict.ok and not now.verdict.ok:
            change = Change.REGRESSED
        elif not was.verdict.ok and now.verdict.ok:
            change = Change.FIXED
        else:
            change = Change.CHANGED
        reason = now.reason if now.case == case else f"{now.case}: {now.reason}"
        changes.append(
            VerdictChange(change, label, case, now.slug, check, was.verdict, now.verdict, reason)
        )
    for (label, case, check), results in added.items():
        now = _standing(results)
        changes.append(
            VerdictChange(Change.NEW, label, case, now.slug, check, None, now.verdict, now.reason)
        )
    order = list(Change)
    # New results that fail matter more than new ones that pass: they come first.
    changes.sort(key=lambda c: (order.index(c.change), c.new is not None and c.new.ok))
    return Comparison(changes, unchanged, old, new)


def _index(run: Run) -> dict[Key, CaseResult]:
    index: dict[Key, CaseResult] = {}
    for implementation in run.implementations:
        series = implementation.info.series
        index.update(((series, r.case, r.check), r) for r in implementation.results)
    return index


def _by_written(
    index: dict[Key, CaseResult], leave: dict[Key, CaseResult]
) -> dict[Key, list[CaseResult]]:
    """The results of `index` whose key `leave` lacks, grouped by their written case."""
    groups: dict[Key, list[CaseResult]] = {}
    for (label, case, check), result in index.items():
        if (label, case, check) not in leave:
            groups.setdefault((label, written_id(case), check), []).append(result)
    return groups


def _standing(results: list[CaseResult]) -> CaseResult:
    """The result that stands for a written case's forms: the worst judged one (a form not
    judged, SKIP, stands only when no form was judged)."""
    judged = [r for r in results if r.verdict is not Verdict.SKIP] or results
    verdict = worst(r.verdict for r in judged)
    return next(r for r in judged if r.verdict is verdict)


# --- rendering -------------------------------------------------------------------------------

#: Beyond this many rows of one kind, the rest is counted (adding a category makes hundreds of
#: "new" results). Regressions are always listed in full.
MAX_ROWS = 50


def summary_line(comparison: Comparison) -> str:
    counts = ", ".join(f"{comparison.count(c)} {c.value}" for c in Change)
    return f"{counts}; {comparison.unchanged} unchanged"


def render(comparison: Comparison, format_: str = "text") -> str:
    """The comparison as plain text (`text`) or GitHub Markdown (`markdown`)."""
    markdown = format_ == "markdown"
    tablefmt = "github" if markdown else "simple"
    old, new = comparison.old, comparison.new
    bullet = "- " if markdown else ""
    out = ["## Changes since the previous run", ""] if markdown else []
    literal = text if markdown else str
    out += [f"{bullet}old: {literal(_describe(old))}", f"{bullet}new: {literal(_describe(new))}"]
    if old.spec_version != new.spec_version:
        out.append(
            f"{bullet}note: the spec version changed ({old.spec_version} -> {new.spec_version}),"
            " so some changes may be intended"
        )
    old_labels = [run.info.series for run in old.implementations]
    new_labels = [run.info.series for run in new.implementations]
    for labels, where in (
        ([label for label in new_labels if label not in old_labels], "new"),
        ([label for label in old_labels if label not in new_labels], "old"),
    ):
        if labels:
            out.append(f"{bullet}only in the {where} run: {literal(', '.join(labels))}")
    out += ["", summary_line(comparison)]
    for change in Change:
        rows = [c for c in comparison.changes if c.change is change]
        if not rows:
            continue
        limit = len(rows) if change is Change.REGRESSED else MAX_ROWS
        table = tabulate(
            [_row(c, markdown) for c in rows[:limit]],
            ["implementation", "case", "check", "old", "new", "reason"],
            tablefmt=tablefmt,
            disable_numparse=True,
        )
        title = f"{change.value} ({len(rows)})"
        out += ["", f"### {title}" if markdown else title.upper(), "", table]
        if len(rows) > limit:
            out += ["", f"... and {len(rows) - limit} more {change.value}"]
    return "\n".join(out) + "\n"


def _describe(run: Run) -> str:
    labels = ", ".join(implementation.info.label for implementation in run.implementations)
    return f"{run.started} (harness {run.harness_version}, spec {run.spec_version}; {labels})"


def _row(change: VerdictChange, markdown: bool) -> list[str]:
    old = change.old.value if change.old else "-"
    new = change.new.value if change.new else "-"
    cells = [
        change.label,
        f"{change.case} {change.slug}",
        change.check,
        old,
        new,
        one_line(change.reason, 120),
    ]
    # Reasons quote case text (`<think>`): keep GitHub from reading it as HTML or table syntax.
    return [cell(c) for c in cells] if markdown else cells


def exit_status(comparison: Comparison) -> int:
    return 1 if comparison.regressed else 0
