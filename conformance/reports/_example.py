"""One failing result in a few short lines, as the terminal, the pytest plugin and report.md's
list of signatures show it: the input as one strip, and the first channel that differs, cut
around where it differs.

    example_lines(result)
    # ["input     </thi│nk>∎",
    #  "assistant - ∎  (expected)",
    #  "          + </thi∎  (actual)"]
"""

from __future__ import annotations

from conformance.model.chunks import CHANNELS
from conformance.model.results import CaseResult

from ._plain import chunk_lines
from ._visible import ELIDED, one_line, visible, window

#: Width of one shown line: inputs and channels are cut to it.
WIDTH = 110


def input_strip(result: CaseResult, width: int = WIDTH) -> str | None:
    """The input on one line (`│` between chunks), or None when the result has none."""
    if result.chunks is None:
        return None
    return cut("".join(chunk_lines(result.chunks)), width)


def short_diff(result: CaseResult, width: int = 80) -> tuple[str, str, str] | None:
    """The first channel that differs, and its expected and actual text around the first
    difference; None when there are not two sides to compare or they agree."""
    expected, actual = result.expected, result.actual
    if expected is None or actual is None:
        return None
    for channel in CHANNELS:
        want, got = expected.get(channel, ""), actual.get(channel, "")
        if want != got:
            window_ = window(want, got, context=12, limit=width)
            lead = ELIDED if window_.skipped_before else ""
            tail = "" if window_.at_end else ELIDED
            sides = [
                cut(lead + visible(window_.before + middle + window_.after, end=window_.at_end))
                + tail
                for middle in (window_.expected, window_.actual)
            ]
            return channel, sides[0], sides[1]
    return None


def example_lines(result: CaseResult, width: int = WIDTH) -> list[str]:
    """The input, then the first differing channel (or the reason when there is none)."""
    lines = []
    strip = input_strip(result, width)
    if strip is not None:
        lines.append("input     " + strip)
    diff = short_diff(result)
    if diff is not None:
        channel, want, got = diff
        lines.append(f"{channel:<10}- {cut(want, width)}  (expected)")
        lines.append(f"{'':<10}+ {cut(got, width)}  (actual)")
    elif result.reason:
        lines.append("reason    " + cut(result.reason, width))
    return lines


def cut(text: str, width: int = WIDTH) -> str:
    # `visible` keeps a real line break after each ↵; a one-line form must not.
    return one_line(text.replace("\n", ""), width)
