"""report.html's first section when anything failed: per implementation, each failing bug
class with its smallest failing input in full, most severe first, and links to every case of
the class in the matrix below."""

from __future__ import annotations

from conformance.model.results import Run

from ._html_parts import attr, badge, channels_html, chunks_html, esc
from ._triage import BugGroup, triage
from ._visible import printable

#: Case links listed per bug class; the rest are counted.
MAX_LINKS = 60


def fix_section(run: Run) -> str:
    """The section, or nothing when no check failed."""
    blocks = []
    for implementation in run.implementations:
        groups = triage(implementation)
        if not groups:
            continue
        label = implementation.info.label
        total = sum(group.count for group in groups)
        blocks.append(
            f'<h3 class="fix-impl">What to fix in <code>{esc(label)}</code> <small>{total}'
            f" failing check{'s' if total != 1 else ''} in {len(groups)} bug"
            f" class{'es' if len(groups) != 1 else ''}</small></h3>"
        )
        blocks += [_group(number, group) for number, group in enumerate(groups, 1)]
    if not blocks:
        return ""
    about = (
        "Each bug class is what an implementation did wrong, read off the expected and actual"
        " channels. Classes are ordered by requirement level (MUST first), then by the size of"
        " their smallest failing input, which is shown in full."
    )
    return (
        f'<section id="fix"><h2>What to fix</h2><p class="hint">{esc(about)}</p>'
        + "".join(blocks)
        + "</section>"
    )


def _group(number: int, group: BugGroup) -> str:
    example = group.example
    cases = list(dict.fromkeys(result.case for result in group.results))
    links = " ".join(
        f'<a href="#case-{attr(case)}"><code>{esc(case)}</code></a>' for case in cases[:MAX_LINKS]
    )
    if len(cases) > MAX_LINKS:
        links += f" and {len(cases) - MAX_LINKS} more"
    out = [
        f'<div class="fix check v-{example.verdict.value}" data-class="{attr(group.bug.name)}">',
        f"<h4>{number}. <code>{esc(group.bug.name)}</code> {esc(group.bug.title)}"
        f" <small>{esc(group.level)} · {group.count} check{'s' if group.count != 1 else ''}"
        f" in {group.cases} case{'s' if group.cases != 1 else ''}</small></h4>",
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
    out.append(f'<div class="label">cases of this class</div><p class="fix-cases">{links}</p>')
    out.append("</div>")
    return "".join(out)
