"""Plain-text blocks for one result (of a case or a fuzzing property): its input chunks and
its channel diffs.

Markdown puts them in code fences, JUnit in failure bodies; both read best as fixed-width text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.model.chunks import CHANNELS
from conformance.model.results import CaseResult, FuzzResult

from ._common import CASE_FILE_HINT, diff_sides
from ._visible import ELIDED, END, NULL, SPLIT, printable, visible, window

#: A stream of content-only chunks is one strip of text with `│` at each split; past this
#: many chunks only the first and last are shown (a `chars` check has one chunk per
#: character, and the end of the stream is where flushing goes wrong).
STRIP_HEAD, STRIP_TAIL = 80, 40
#: Chunks that carry native reasoning get a line each, up to this many.
MAX_CHUNKS = 30
KEEP_CHUNKS = 12


def content_only(chunks: Sequence[Mapping[str, str | None]]) -> bool:
    return all(chunk.get("reasoning") is None for chunk in chunks)


def chunk_lines(chunks: Sequence[Mapping[str, str | None]]) -> list[str]:
    """The input of a stream: a strip split at `│`, or with native reasoning a line per chunk."""
    if content_only(chunks):
        return _strip(chunks)
    width = len(str(len(chunks)))
    shown: list[tuple[int, Mapping[str, str | None]] | None] = list(enumerate(chunks, 1))
    if len(chunks) > MAX_CHUNKS:
        shown = [*shown[:KEEP_CHUNKS], None, *shown[-KEEP_CHUNKS:]]
    lines: list[str] = []
    for entry in shown:
        if entry is None:
            lines.append(f"{'':>{width}}  {ELIDED} {len(chunks) - 2 * KEEP_CHUNKS} chunks left out")
            continue
        number, chunk = entry
        fields = [(name, chunk.get(name)) for name in ("content", "reasoning")]
        present = [(name, value) for name, value in fields if value is not None] or fields[:1]
        for index, (name, value) in enumerate(present):
            head = f"{number:>{width}}" if index == 0 else " " * width
            text = NULL if value is None else visible(value)
            lines.extend(_hanging(f"{head}  {name:<9}  ", text))
    return lines


def _strip(chunks: Sequence[Mapping[str, str | None]]) -> list[str]:
    texts = [
        NULL if chunk.get("content") is None else visible(chunk["content"] or "", end=False)
        for chunk in chunks
    ]
    if len(texts) > STRIP_HEAD + STRIP_TAIL:
        left = len(texts) - STRIP_HEAD - STRIP_TAIL
        texts = [*texts[:STRIP_HEAD], f" {ELIDED} {left} chunks {ELIDED} ", *texts[-STRIP_TAIL:]]
    return (SPLIT.join(texts) + END).split("\n")


def diff_lines(channel: str, expected: str, actual: str) -> list[str]:
    """A unified-diff-like view of one channel: shared context, then `-` expected, `+` actual."""
    if expected == actual:
        count = len(expected)
        return [f"@@ {channel}: same ({count} character{'s' if count != 1 else ''}) @@"]
    cut = window(expected, actual)
    lines = [f"@@ {channel}: differs from character {cut.first_difference} @@"]
    for sign, middle in (("-", cut.expected), ("+", cut.actual)):
        text = (ELIDED if cut.skipped_before else "") + visible(
            cut.before + middle + cut.after, end=cut.at_end
        )
        if not cut.at_end:
            text += ELIDED
        lines.extend(f"{sign} {line}" for line in text.split("\n"))
    return lines


def result_block(result: CaseResult) -> list[str]:
    """Everything about one non-PASS result as plain text lines (for JUnit bodies)."""
    lines = _head(result)
    if result.chunks is not None:
        lines += ["", input_title(result.chunks) + ":", *chunk_lines(result.chunks)]
    if result.expected is not None or result.actual is not None:
        lines += ["", *channel_lines(result.expected, result.actual)]
    if result.holdback:
        lines += ["", f"held back {result.holdback} characters more than the spec allows"]
    lines += _expectation(result.expectation)
    if result.stderr:
        lines += ["", "stderr (last lines):", *printable(result.stderr).splitlines()]
    return lines


def known_block(result: CaseResult) -> list[str]:
    """An expected failure as plain text lines: what failed and the expectation that explains
    it, its input and output left to report.md (a matrix run has tens of thousands)."""
    # Its reason holds the expectation's (ExpectedFailures.apply puts it there): not twice.
    note = {
        k: v
        for k, v in (result.expectation or {}).items()
        if k != "reason" or v not in result.reason
    }
    return [*_head(result), *_expectation(note), "", "input and output: report.md"]


def _head(result: CaseResult) -> list[str]:
    reason = printable(result.reason)
    lines = [f"{result.verdict.value}: {reason}" if reason else result.verdict.value]
    if result.title:
        lines.append(f"case: {result.case} {result.slug}: {result.title}")
    return lines


def _expectation(note: Mapping[str, str] | None) -> list[str]:
    if not note:
        return []
    return ["", "expectation: " + ", ".join(f"{k}={v}" for k, v in note.items())]


def channel_lines(
    expected: Mapping[str, str] | None,
    actual: Mapping[str, str] | None,
    sides: tuple[str, str] = ("expected", "actual"),
) -> list[str]:
    """Both channels: a diff of each when both sides exist, else the side that does."""
    if expected is not None and actual is not None:
        lines: list[str] = []
        if sides != ("expected", "actual"):
            lines.append(f"- {sides[0]}, + {sides[1]}")
        for channel in CHANNELS:
            lines += diff_lines(channel, expected.get(channel, ""), actual.get(channel, ""))
        return lines
    for side, channels in zip(sides, (expected, actual), strict=True):
        if channels is not None:
            lines = [f"{side}:"]
            for channel in CHANNELS:
                lines += _hanging(f"  {channel:<9}  ", visible(channels.get(channel, "")))
            return lines
    return []


def fuzz_block(result: FuzzResult, replay: str) -> list[str]:
    """Everything about one fuzzing property that did not pass, as plain text lines."""
    example = result.counterexample or {}
    reason = printable(example.get("reason") or result.reason)
    lines = [f"{result.verdict.value}: {reason}" if reason else result.verdict.value]
    lines.append(f"property: {result.property}, {result.examples} examples, seed {result.seed}")
    chunks = example.get("chunks")
    if chunks is not None:
        lines += ["", input_title(chunks) + ":", *chunk_lines(chunks)]
    sides = diff_sides(result.property)
    channels = channel_lines(example.get("expected"), example.get("actual"), sides)
    if channels:
        lines += ["", *channels]
    if result.case_file:
        lines += ["", f"case file: {printable(result.case_file)} ({CASE_FILE_HINT})"]
    return [*lines, "", f"replay: {replay}"]


def _hanging(head: str, text: str) -> list[str]:
    """`head` before the first line, continuation lines indented under it."""
    first, *rest = text.split("\n")
    return [head + first, *(" " * len(head) + line for line in rest)]


def input_title(chunks: Sequence[Mapping[str, str | None]]) -> str:
    count = f"{len(chunks)} chunk{'s' if len(chunks) != 1 else ''}"
    if content_only(chunks) and len(chunks) > 1:
        return f"input, {count} ({SPLIT} between chunks, {NULL} a null content)"
    return f"input, {count}"
