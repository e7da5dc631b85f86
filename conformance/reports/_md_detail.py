"""One result in full for report.md: what failed, its input, the channel diff, and the
command that reruns just that case and check."""

from __future__ import annotations

from conformance.model.chunks import CHANNELS
from conformance.model.results import CaseResult, ImplementationInfo, Verdict

from ._md import code, fence, text
from ._plain import channel_lines, chunk_lines, input_title
from ._rerun import rerun_command
from ._visible import one_line, printable, visible

ICONS = {
    Verdict.FAIL: "❌",
    Verdict.ERROR: "💥",
    Verdict.TIMEOUT: "⏱️",
    Verdict.XPASS: "❗",
    Verdict.NON_STRICT: "⚠️",
}


def detail(result: CaseResult, info: ImplementationInfo, heading: str = "###") -> list[str]:
    icon = ICONS.get(result.verdict, "")
    out = [
        f"{heading} {icon} {result.verdict.value} · {code(result.case)} {text(result.slug)}"
        f" · {code(result.check)}",
        "",
    ]
    about = f"*{text(result.title)}.* " if result.title else ""
    out.append(about + (text(one_line(result.reason)) if result.reason else ""))
    if result.chunks is not None:
        title = input_title(result.chunks)
        out += ["", text(title[:1].upper() + title[1:]) + ":", ""]
        out += fence("\n".join(chunk_lines(result.chunks)), "text")
    if result.expected is not None and result.actual is not None:
        lines = channel_lines(result.expected, result.actual)
        out += ["", "Expected (`-`) and actual (`+`):", "", *fence("\n".join(lines), "diff")]
    elif result.expected is not None:
        lines = [f"{c}: {visible(result.expected.get(c, ''))}" for c in CHANNELS]
        out += ["", "Expected:", "", *fence("\n".join(lines), "text")]
    if result.holdback:
        out += ["", f"Held back {result.holdback} characters more than the spec allows."]
    if result.expectation:
        entry = ", ".join(f"{k}: {v}" for k, v in result.expectation.items())
        out += ["", f"Expectation: {text(one_line(entry))}"]
    if result.stderr:
        out += ["", "Stderr (last lines):", "", *fence(printable(result.stderr), "text")]
    if not result.verdict.ok:
        out += ["", "Rerun this case and check:", "", *fence(rerun_command(info, result), "sh")]
    return out
