"""report.md's lead: per implementation, a list of every bug signature (bug class, category,
check) with its smallest failing input on one line, what is new first (`triage`), then the
first signatures in full. The list is capped, and says what it leaves out."""

from __future__ import annotations

from tabulate import tabulate

from conformance.model.results import ImplementationRun

from ._example import input_strip, short_diff
from ._md import code, text
from ._md_detail import detail
from ._rerun import rerun_command
from ._triage import BugGroup, bug_classes, cut_only_note, triage

#: Signatures listed per implementation; the rest are counted by class.
MAX_LISTED = 25
#: Signatures shown in full (input, diff, rerun command) after the list.
MAX_DETAILED = 8
#: Characters of an input or a channel in a list row.
ROW_WIDTH = 60


def fix_blocks(
    implementation: ImplementationRun, room: int
) -> tuple[list[str], list[tuple[list[str], str]]]:
    """The heading and list (empty when nothing failed), the list within about `room`
    characters, and the detail blocks with what a reader misses without each."""
    groups = triage(implementation)
    if not groups:
        return [], []
    rows = _rows(implementation, groups[:MAX_LISTED])
    listed = 1
    # Rows while they fit (the first always): each implementation of a run gets its share.
    while listed < len(rows) and _width(rows[: listed + 1]) * (listed + 1) <= room:
        listed += 1
    total = sum(group.count for group in groups)
    classes = len(bug_classes(groups))
    head = [
        f"## What to fix in {code(implementation.info.label)}",
        "",
        f"{total} failing check{'s' if total != 1 else ''}, {classes} bug"
        f" class{'es' if classes != 1 else ''} in {len(groups)} signature"
        f"{'s' if len(groups) != 1 else ''} (class · category · check). Each signature's"
        " smallest failing input; first each bug class, then what fails only when split,"
        " then each category:",
        "",
        tabulate(rows[:listed], HEADERS, tablefmt="github", disable_numparse=True),
    ]
    note = cut_only_note(groups)
    if note:
        head[3:3] = ["", note]
    left = groups[listed:]
    if left:
        checks = sum(group.count for group in left)
        head += [
            "",
            f"*{len(left)} more signatures ({checks} checks) not listed here; every failure is"
            " in `report.html` and `results.json`.*",
        ]
    entries: list[tuple[list[str], str]] = []
    used = 0
    # The first signatures in full, within this implementation's share too.
    for number, group in enumerate(groups[:MAX_DETAILED], 1):
        block = _entry(implementation, number, group)
        used += sum(len(line) + 1 for line in block)
        if used > room:
            break
        entries.append((block, f"signature {number}"))
    return head, entries


HEADERS = ["#", "bug class", "where", "checks", "smallest", "input", "expected → actual", "rerun"]


def _width(rows: list[list[str]]) -> int:
    """The width of a table row: tabulate pads each column to its widest cell."""
    return sum(max(len(row[column]) for row in rows) + 3 for column in range(len(HEADERS)))


def _rows(implementation: ImplementationRun, groups: list[BugGroup]) -> list[list[str]]:
    rows = []
    for number, group in enumerate(groups, 1):
        example = group.example
        strip = input_strip(example, ROW_WIDTH)
        diff = short_diff(example, ROW_WIDTH)
        rows.append(
            [
                str(number),
                f"{code(group.bug.name)} {group.level}",
                text(group.where),
                str(group.count),
                f"{code(example.case)} {text(example.slug)}",
                "" if strip is None else code(strip),
                "" if diff is None else f"{diff[0]}: {code(diff[1])} → {code(diff[2])}",
                code(rerun_command(implementation.info, example)),
            ]
        )
    return rows


def _entry(implementation: ImplementationRun, number: int, group: BugGroup) -> list[str]:
    return [
        f"### {number}. {code(group.bug.name)} in {text(group.where)}:"
        f" {text(group.bug.title)} · {group.level} · {group.counts}",
        "",
        *detail(group.example, implementation.info, heading="####"),
    ]
