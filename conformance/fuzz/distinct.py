"""Each distinct bug of an implementation reported once, across its properties.

Several properties often find the same bug (a delimiter shown in the answer breaks the
differential, discipline and conservation properties alike). Results are kept as each
property ends, so an interrupted session keeps what it found; a bug whose signature an
earlier property reported is not written again, and a later, smaller counterexample of it
replaces the earlier one (file and result), so the smallest is kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from conformance.fuzz.signatures import size
from conformance.model.results import FuzzResult


def same_bug(result: FuzzResult, kept: FuzzResult) -> FuzzResult:
    """`result` as a pointer to the result that reports its bug: still a failure of its
    property, without a counterexample or case file of its own."""
    return dataclasses.replace(
        result,
        reason=f"the same bug ({kept.bug}) as the {kept.property} property's counterexample",
        counterexample=None,
        case_file=None,
    )


@dataclass(slots=True)
class DistinctBugs:
    """The bugs of one implementation, by signature: the result reporting each."""

    #: Writes a result's case file and returns the result naming it (`record_found`).
    record: Callable[[FuzzResult], FuzzResult]
    kept: dict[str, FuzzResult] = field(default_factory=dict)

    def add(self, results: list[FuzzResult], reported: list[FuzzResult]) -> list[FuzzResult]:
        """One property's results, to be reported: each new bug written, each bug already
        reported a pointer to it. `reported` (the results reported so far) is updated in
        place when one of this property's counterexamples is smaller than a kept one."""
        out = []
        for result in results:
            bug = result.bug
            if bug is None or result.counterexample is None:
                out.append(self.record(result))
                continue
            old = self.kept.get(bug)
            if old is not None and size(old.counterexample) <= size(result.counterexample):
                out.append(same_bug(result, old))
                continue
            new = self.record(result)
            self.kept[bug] = new
            if old is not None:
                _forget(old)
                for index, earlier in enumerate(reported):
                    if earlier.bug == bug and (earlier is old or earlier.counterexample is None):
                        reported[index] = same_bug(earlier, new)
            out.append(new)
        return out


def _forget(result: FuzzResult) -> None:
    if result.case_file:
        Path(result.case_file).unlink(missing_ok=True)
