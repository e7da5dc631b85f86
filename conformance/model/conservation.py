"""Conservation (SPEC.md invariant 6): every input character ends up in exactly one channel,
except delimiters and what an option in force drops. `conformance check` proves it of every
expectation, and the normalizer's `conservation` fuzz property of every implementation."""

from __future__ import annotations

import re
from collections import Counter

from conformance.model import harmony
from conformance.model.chunks import Channels
from conformance.model.options import Options


def kept_text(options: Options, content: str) -> str:
    """The content less what is not text under `options`: delimiters, but not tool markers
    and, under `sections: one`, not what follows the one block; under harmony framing, its
    tokens and headers, but not a tool call's."""
    if options.framing == "harmony":
        return _harmony_text(content)
    grammar = options.grammar
    one = options.sections == "one"
    inside = options.start_in_reasoning
    out: list[str] = []
    pos = 0
    for begin, end, close in grammar.occurrences(content):
        marker = close and grammar.is_marker(content[begin:end])
        if not marker:
            out.append(content[pos:begin])
            pos = end
        ended = close and inside
        inside = not close or (inside and not ended)
        if ended and one:
            break
    out.append(content[pos:])
    return "".join(out)


def _harmony_text(content: str) -> str:
    """`kept_text` under harmony, by a parse of the whole content (the reference streams it
    by another route, `reference/_harmony.py`)."""
    out: list[str] = []
    pos = 0
    header: int | None = None  # where the header being read began
    tool = False
    for begin, end, _ in harmony.token_grammar().occurrences(content):
        token = content[begin:end]
        if header is not None:
            if token == harmony.START:
                header = begin
            elif token == harmony.MESSAGE:
                tool = harmony.route(content[header:end]) == "tool"
                if tool:
                    out.append(content[header:end])
                header = None
            elif token in harmony.ENDS:
                header, tool = None, False
        else:
            out.append(content[pos:begin])
            if tool and token not in harmony.HEADS:
                out.append(token)
            if token in harmony.HEADS:
                header, tool = begin, False
            elif token in harmony.ENDS:
                tool = False
        pos = end
    if header is None:
        out.append(content[pos:])
    return "".join(out)


def may_drop(options: Options, native: str) -> bool:
    """Whether an option in force may drop input text: an unclosed block under
    `unclosed_at_end: drop`, or tag bodies under `native_only` once native reasoning came."""
    return options.unclosed_at_end == "drop" or (
        options.native_with_tags == "native_only" and bool(native)
    )


def unaccounted(
    kept: str,
    native: str,
    channels: Channels,
    dropping: bool,
    delimiter: re.Pattern[str] | None = None,
) -> str | None:
    """What breaks conservation in `channels`, or None. `kept`: the content less its
    delimiters; `native`: the native reasoning; `dropping`: whether an option in force may
    drop text (`may_drop`); `delimiter`: named when one is left in a channel."""
    if not _is_subsequence(channels.assistant, kept):
        return "the assistant text is not the content, in order, less delimiters and thinking"
    if not _is_subsequence(native, channels.thinking):
        return "the thinking text does not hold the native reasoning, in order"
    have = Counter(kept) + Counter(native)
    out = Counter(channels.assistant) + Counter(channels.thinking)
    invented = out - have
    if invented:
        # A delimiter left in a channel is input text, not invented text: say which it is.
        left = delimiter.findall(channels.assistant + "\0" + channels.thinking) if delimiter else []
        if left and not invented - Counter("".join(left)):
            return f"delimiters left in a channel (a delimiter is not text): {', '.join(left)}"
        return f"characters that are not in the input: {''.join(sorted(invented.elements()))!r}"
    lost = have - out
    if lost and not dropping:
        return (
            f"input characters in neither channel: {''.join(sorted(lost.elements()))!r} "
            "(no option in force drops text)"
        )
    return None


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(char in it for char in needle)
