"""The top of the list for a terminal: per implementation, each failing bug class in the order
to fix it, with its smallest failing input and where its channels differ, a few lines each.

    print(render_top(run), end="")    # what `conformance run` prints after the counts
"""

from __future__ import annotations

from conformance.model.chunks import CHANNELS
from conformance.model.results import CaseResult, Run

from ._plain import chunk_lines
from ._triage import triage
from ._visible import ELIDED, one_line, visible, window

#: Width of one shown line: inputs and channels are cut to it.
WIDTH = 110
#: Bug classes shown per implementation; the rest are counted.
MAX_CLASSES = 8


def render_top(run: Run, *, max_classes: int = MAX_CLASSES, report: str = "") -> str:
    """Nothing when no check failed; else a short block per implementation that failed."""
    out: list[str] = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if not groups:
            continue
        total = sum(group.count for group in groups)
        out.append(
            f"{implementation.info.label}: {total} failing check{'s' if total != 1 else ''}"
            f" in {len(groups)} bug class{'es' if len(groups) != 1 else ''}, most severe first:"
        )
        for number, group in enumerate(groups[:max_classes], 1):
            example = group.example
            out.append(
                f"  {number}. {group.bug.name} ({group.level}): {group.bug.title}"
                f" · {group.count} check{'s' if group.count != 1 else ''} in {group.cases}"
                f" case{'s' if group.cases != 1 else ''}"
            )
            out.append(f"     smallest: {example.case} {example.slug} [{example.check}]")
            out += [f"     {line}" for line in _example_lines(example)]
        if len(groups) > max_classes:
            left = sum(group.count for group in groups[max_classes:])
            out.append(f"  ... {len(groups) - max_classes} more classes ({left} checks)")
    if out and report:
        out.append(f"every failure in full: {report}")
    return "\n".join(out) + "\n" if out else ""


def _example_lines(result: CaseResult) -> list[str]:
    lines = []
    if result.chunks is not None:
        lines.append("input     " + _cut("".join(chunk_lines(result.chunks))))
    expected, actual = result.expected, result.actual
    if expected is not None and actual is not None:
        for channel in CHANNELS:
            want, got = expected.get(channel, ""), actual.get(channel, "")
            if want != got:
                cut = window(want, got, context=12, limit=80)
                lead = ELIDED if cut.skipped_before else ""
                for sign, middle, side in (
                    ("-", cut.expected, "expected"),
                    ("+", cut.actual, "actual"),
                ):
                    shown = visible(cut.before + middle + cut.after, end=cut.at_end)
                    tail = "" if cut.at_end else ELIDED
                    head = channel if sign == "-" else ""
                    lines.append(f"{head:<10}{sign} {_cut(lead + shown + tail)}  ({side})")
                break
    elif result.reason:
        lines.append("reason    " + _cut(result.reason))
    return lines


def _cut(text: str) -> str:
    # `visible` keeps a real line break after each ↵; a terminal line must not.
    return one_line(text.replace("\n", ""), WIDTH)
