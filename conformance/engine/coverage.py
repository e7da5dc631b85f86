"""How much of an implementation's run was judged: the one definition behind "never green
without judging", for `run`, `fuzz`, `replay`, `matrix` and the pytest plugin alike.

A check is judged when the implementation's output was compared with what the spec expects
(PASS, NON_STRICT, FAIL, XFAIL, XPASS). SKIP does not count either way: the case does not
apply under the implementation's options, or the implementation lacks the operation as a
whole (engine/declines.py). Every other check is applicable but unjudged: ERROR (declined
after answering others, among other reasons), TIMEOUT, or not run at all. An implementation
whose judged share of its applicable checks is under the minimum (90% unless changed)
fails the run, as does one that judged nothing at all, every check SKIP.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from conformance.engine.declines import CONTRADICTED, DECLINED
from conformance.model.results import CaseResult, FuzzResult, ImplementationRun, Verdict

#: The share of its applicable checks an implementation must judge, in percent.
DEFAULT_MIN_JUDGED = 90.0

_JUDGED = {Verdict.PASS, Verdict.NON_STRICT, Verdict.FAIL, Verdict.XFAIL, Verdict.XPASS}


@dataclass(frozen=True, slots=True)
class Coverage:
    """One implementation's checks: how many, how many applicable, judged, and why not."""

    total: int
    applicable: int
    judged: int
    #: Why applicable checks went unjudged: reason -> count, most first.
    unjudged: dict[str, int]
    #: The reason of the first SKIP, to say why a run that judged nothing skipped.
    first_skip: str = ""

    @property
    def percent(self) -> float:
        """The judged share of the applicable checks, rounded down to a tenth of a percent
        (so 89.99% never shows as 90%); 0 when nothing was applicable."""
        if not self.applicable:
            return 0.0
        return math.floor(1000 * self.judged / self.applicable) / 10

    def short_of(self, minimum: float) -> bool:
        """Whether this is less judging than `minimum` percent asks for."""
        if self.total == 0 or minimum <= 0:
            return False
        return self.judged == 0 or self.judged * 100 < minimum * self.applicable

    def reasons(self) -> str:
        return ", ".join(f"{count} {reason}" for reason, count in self.unjudged.items())


def coverage(run: ImplementationRun) -> Coverage:
    outcomes: list[CaseResult | FuzzResult] = [*run.results, *run.fuzz]
    reasons: Counter[str] = Counter()
    judged = skipped = 0
    first_skip = ""
    for outcome in outcomes:
        if outcome.verdict in _JUDGED:
            judged += 1
        elif outcome.verdict == Verdict.SKIP:
            skipped += 1
            first_skip = first_skip or outcome.reason
        else:
            reasons[_why(outcome)] += 1
    if run.not_run:
        reasons["not run"] += run.not_run
    total = len(outcomes) + run.not_run
    return Coverage(total, total - skipped, judged, dict(reasons.most_common()), first_skip)


def _why(outcome: CaseResult | FuzzResult) -> str:
    if outcome.verdict == Verdict.ERROR:
        if DECLINED in outcome.reason:
            return f"ERROR, {DECLINED}"
        if CONTRADICTED in outcome.reason:
            return f"ERROR, {CONTRADICTED}"
    return outcome.verdict.value


def unjudged_problem(run: ImplementationRun, minimum: float) -> str | None:
    """What to say of an implementation that judged too little, or None when it judged
    enough (or could not start, which is its own failure)."""
    if run.failure is not None:
        return None
    seen = coverage(run)
    if not seen.short_of(minimum):
        return None
    label = run.info.label
    if seen.applicable == 0:
        return (
            f"{label} judged nothing: all {seen.total} results are SKIP ({seen.first_skip}); "
            "pass --min-judged 0 (or --allow-unjudged) to accept that"
        )
    return (
        f"{label} judged {seen.judged} of {seen.applicable} applicable checks "
        f"({_percent(seen.percent)}%, under the minimum of {_percent(minimum)}%); "
        f"unjudged: {seen.reasons()} (--min-judged PERCENT sets the minimum)"
    )


def _percent(value: float) -> str:
    return f"{value:g}"
