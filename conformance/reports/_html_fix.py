"""report.html's first section when anything failed: per implementation, each bug signature
(bug class, category, check) with its smallest failing input in full, the command that reruns
it, and links to every case of the signature in the matrix below; in the order of `triage`
(each bug class first, then what fails only when split, then each category). The first
signatures are open, the rest folded."""

from __future__ import annotations

from conformance.model.results import ImplementationInfo, Run

from ._html_parts import attr, badge, channels_html, chunks_html, esc
from ._rerun import rerun_command
from ._triage import BugGroup, bug_classes, triage
from ._visible import printable

#: Case links listed per signature; the rest are counted.
MAX_LINKS = 60
#: Signatures shown open per implementation; the rest are folded (one click away).
OPEN = 8


def fix_section(run: Run) -> str:
    """The section, or nothing when no check failed."""
    blocks = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if not groups:
            continue
        label = implementation.info.label
        total = sum(group.count for group in groups)
        classes = len(bug_classes(groups))
        blocks.append(
            f'<h3 class="fix-impl">What to fix in <code>{esc(label)}</code> <small>{total}'
            f" failing check{'s' if total != 1 else ''}, {classes} bug"
            f" class{'es' if classes != 1 else ''} in {len(groups)}"
            f" signature{'s' if len(groups) != 1 else ''}</small></h3>"
        )
        blocks += [
            _group(implementation.info, number, group) for number, group in enumerate(groups, 1)
        ]
    if not blocks:
        return ""
    about = (
        "A bug signature is what an implementation did wrong (its bug class, read off the"
        ' expected and actual channels), in which category of cases, under which check; "whole'
        " passes\" when the case's unsplit form does not fail so. First comes each bug class,"
        " then what fails only when split, then each category, the rest after; within each,"
        " the most severe (MUST) and smallest failing input first, shown in full."
    )
    return (
        f'<section id="fix"><h2>What to fix</h2><p class="hint">{esc(about)}</p>'
        + "".join(blocks)
        + "</section>"
    )


def _group(info: ImplementationInfo, number: int, group: BugGroup) -> str:
    example = group.example
    cases = list(dict.fromkeys(result.case for result in group.results))
    links = " ".join(
        f'<a href="#case-{attr(case)}"><code>{esc(case)}</code></a>' for case in cases[:MAX_LINKS]
    )
    if len(cases) > MAX_LINKS:
        links += f" and {len(cases) - MAX_LINKS} more"
    out = [
        f'<details class="fix check v-{example.verdict.value}" data-class="{attr(group.bug.name)}"'
        f' data-category="{attr(group.category)}" data-check="{attr(group.check)}"'
        f"{' open' if number <= OPEN else ''}>",
        f"<summary><h4>{number}. <code>{esc(group.bug.name)}</code> in"
        f" {esc(group.where)} <small>{esc(group.bug.title)} · {esc(group.level)}"
        f" · {esc(group.counts)}</small></h4></summary>",
        f'<div class="label">smallest failing input: {badge(example.verdict)}'
        f' <a href="#case-{attr(example.case)}"><code>{esc(example.case)}</code></a>'
        f" {esc(example.slug)} · {esc(example.check)}</div>",
    ]
    if example.reason:
        out.append(f'<p class="reason">{esc(printable(example.reason))}</p>')
    if example.chunks is not None:
        out.append(chunks_html(example.chunks))
    if example.expected is not None or example.actual is not None:
        out.append(channels_html(example.expected, example.actual))
    out.append(
        '<div class="label">rerun this case and check</div>'
        f'<pre class="cmd">{esc(rerun_command(info, example))}</pre>'
    )
    out.append(f'<div class="label">cases of this signature</div><p class="fix-cases">{links}</p>')
    out.append("</details>")
    return "".join(out)
