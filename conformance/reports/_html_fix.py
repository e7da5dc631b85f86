"""report.html's first section when anything failed: per implementation, each bug signature
(bug class, category, check) with its smallest failing input in full, the command that reruns
it, and links to every case of the signature in the matrix below; in the order of `triage`
(each bug class first, then what fails only when split, then each category). The first
signatures are open, the rest folded. `_report_fix.html` draws it."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.model.results import Run

from ._rerun import rerun_command
from ._triage import BugGroup, bug_classes, triage

#: Case links listed per signature; the rest are counted.
MAX_LINKS = 60
#: Signatures shown open per implementation; the rest are folded (one click away).
OPEN = 8


@dataclass(frozen=True, slots=True)
class Signature:
    number: int
    group: BugGroup
    #: The cases linked, and how many more there are.
    cases: list[str]
    more: int
    rerun: str

    @property
    def open(self) -> bool:
        return self.number <= OPEN


@dataclass(frozen=True, slots=True)
class Fixes:
    """What to fix in one implementation."""

    label: str
    #: Failing checks, and the bug classes among the signatures.
    total: int
    classes: int
    groups: list[Signature]


def fixes(run: Run) -> list[Fixes]:
    """The section's content, empty when no check failed."""
    found = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if not groups:
            continue
        signatures = []
        for number, group in enumerate(groups, 1):
            cases = list(dict.fromkeys(result.case for result in group.results))
            rerun = rerun_command(implementation.info, group.example)
            more = max(0, len(cases) - MAX_LINKS)
            signatures.append(Signature(number, group, cases[:MAX_LINKS], more, rerun))
        found.append(
            Fixes(
                implementation.info.label,
                sum(group.count for group in groups),
                len(bug_classes(groups)),
                signatures,
            )
        )
    return found
