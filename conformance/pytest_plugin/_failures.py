"""What the plugin prints about failures: a few lines per failing test (its bug signature, the
input and the channel that differs as the terminal report shows them, and the command that
reruns it), one line for each later failure of a signature already shown, and the grouped
summary of `conformance run` at the end of the session.

A broken normalizer fails a thousand tests; pytest prints each failure, so each must be
short, and the summary says which distinct bugs they are.
"""

from __future__ import annotations

from typing import Any

from conformance.model.options import DEFAULT, Options, OptionsError
from conformance.model.results import CaseResult, ImplementationInfo, Run
from conformance.reports._bugclass import BugClass
from conformance.reports._example import cut, example_lines
from conformance.reports._rerun import rerun_command
from conformance.reports._terminal import render_groups
from conformance.reports._triage import classify, triage
from conformance.reports._visible import printable

#: Last lines of an implementation's stderr shown under a failure.
STDERR_LINES = 8
#: Signatures the session's summary shows per implementation (the rest are counted).
SUMMARY_SIGNATURES = 12


def bug_of(info: ImplementationInfo, result: CaseResult) -> BugClass:
    try:
        grammar = Options.from_mapping(info.options).grammar
    except OptionsError:
        grammar = DEFAULT.grammar
    return classify(result, grammar)


def signature_key(info: ImplementationInfo, result: CaseResult) -> str:
    """`label|class|category|check`: failures with one key are one bug in one place."""
    bug = bug_of(info, result)
    return "|".join((info.label, bug.name, result.category, result.check))


def failure_text(info: ImplementationInfo, result: CaseResult, where: str) -> str:
    """A failing test in a few lines."""
    bug = bug_of(info, result)
    lines = [
        f"{result.verdict.value} {bug.name} ({bug.title}) in {result.category} · {result.check}",
        f"case      {result.case} {result.slug} ({where})",
        f"reason    {cut(result.reason, 200)}",
        *example_lines(result),
    ]
    if result.stderr:
        tail = printable(result.stderr).splitlines()[-STDERR_LINES:]
        lines += ["stderr (last lines):", *(f"  {line}" for line in tail)]
    lines.append(f"rerun     {rerun_command(info, result)}")
    return "\n".join(lines)


class Repeats:
    """Failures of a signature already shown become one line, naming the first one; the
    session's summary leaves them out of pytest's lists."""

    def __init__(self) -> None:
        self.first: dict[str, str] = {}
        #: The `id` of each report shortened: a later failure of a signature already shown.
        self.shown: set[int] = set()

    def shorten(self, report: Any, key: str) -> None:
        first = self.first.setdefault(key, report.nodeid)
        if first == report.nodeid:
            return
        self.shown.add(id(report))
        head = str(report.longrepr).splitlines()
        rerun = next((line for line in head if line.startswith("rerun ")), "")
        report.longrepr = (
            f"{head[0] if head else 'FAIL'}: the signature of {first}, shown in full above;"
            f" {' '.join(rerun.split())}"
        )


def summary(run: Run) -> list[str]:
    """The grouped summary: per implementation its bug signatures, as `conformance run`."""
    lines = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if groups:
            lines += render_groups(implementation.info, groups, SUMMARY_SIGNATURES)
    return lines
