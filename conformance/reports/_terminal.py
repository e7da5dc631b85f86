"""The top of the list for a terminal: per implementation, its bug signatures in the order to
read them (`triage`: each bug class first, then what fails only when split, by check, by
category), each with its smallest failing input, where its channels differ, and the command
that reruns it, a few lines each. The list is capped; what it leaves out is counted by class.

    print(render_top(run), end="")    # what `conformance run` prints after the counts
"""

from __future__ import annotations

from collections import Counter

from conformance.model.results import ImplementationInfo, Run

from ._example import cut, example_lines
from ._rerun import rerun_command
from ._triage import BugGroup, bug_classes, cut_only_note, triage

#: Signatures shown per implementation; the rest are counted.
MAX_SIGNATURES = 8


def render_top(run: Run, *, max_signatures: int = MAX_SIGNATURES, report: str = "") -> str:
    """Nothing when no check failed; else a short block per implementation that failed."""
    out: list[str] = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if groups:
            out += render_groups(implementation.info, groups, max_signatures)
    if out and report:
        out.append(f"every failure in full: {report}")
    return "\n".join(out) + "\n" if out else ""


def render_groups(info: ImplementationInfo, groups: list[BugGroup], limit: int) -> list[str]:
    """One implementation's block: a heading, then `limit` signatures at most."""
    total = sum(group.count for group in groups)
    classes = len(bug_classes(groups))
    out = [
        f"{info.label}: {total} failing check{'s' if total != 1 else ''},"
        f" {classes} bug class{'es' if classes != 1 else ''}"
        f" in {len(groups)} signature{'s' if len(groups) != 1 else ''}"
        " (class · category · check), each with its smallest failing input:"
    ]
    note = cut_only_note(groups)
    if note:
        out.insert(1, "  " + note)
    for number, group in enumerate(groups[:limit], 1):
        lines = group_lines(info, group)
        head = f"  {number}. "
        out += [head + lines[0], *(" " * len(head) + line for line in lines[1:])]
    out += left_out(groups[limit:])
    return out


def group_lines(info: ImplementationInfo, group: BugGroup) -> list[str]:
    """A signature in a few lines: what and where, the input, the diff, the rerun command."""
    example = group.example
    return [
        f"{group.bug.name} ({group.level}): {group.bug.title}",
        f"in {group.where}: {group.counts}; smallest {example.case} {example.slug}",
        *example_lines(example),
        "rerun     " + cut(rerun_command(info, example), 1000),
    ]


def left_out(groups: list[BugGroup]) -> list[str]:
    """The line that counts the signatures not shown, by bug class; none when none is."""
    if not groups:
        return []
    checks = sum(group.count for group in groups)
    by_class = Counter(group.bug.name for group in groups)
    listing = ", ".join(f"{name} {count}" for name, count in by_class.items())
    return [
        f"  ... {len(groups)} more signature{'s' if len(groups) != 1 else ''}"
        f" ({checks} check{'s' if checks != 1 else ''}) not shown, by class: {listing}"
    ]
