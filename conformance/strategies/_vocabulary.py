"""What the strategies draw from, per grammar: its delimiters and what only looks like one,
tool markers (SPEC.md 5.7), gpt-oss messages under harmony framing (5.8), and the points
inside delimiters where `atomic_delimiters` forbids a chunk boundary (5.11)."""

from __future__ import annotations

from conformance.model import harmony
from conformance.model.grammar import PRESETS
from conformance.model.options import Options

# Harmony framing (SPEC.md 5.8): the headers gpt-oss writes, simplest first: analysis, final
# and commentary, with and without `<|start|>assistant`, then tool calls (a recipient in the
# header, after the channel or before it).
HEADERS = [
    "<|channel|>final<|message|>",
    "<|channel|>analysis<|message|>",
    "<|channel|>commentary<|message|>",
    "<|start|>assistant<|channel|>final<|message|>",
    "<|start|>assistant<|channel|>analysis<|message|>",
    "<|start|>assistant<|channel|>commentary<|message|>",
    "<|channel|>commentary to=functions.lookup<|message|>",
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
    "<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>",
]
# What looks like harmony's tokens but is not: `<|chan` next to `ce` is `<|chance`, next to
# `nel|>` a token whose halves came from two pieces; headers that never reach `<|message|>`.
HARMONY_NEAR = [
    *["ce", "|>", "<|", "nel|>", "<|chan", "<|end|", "<| end|>", "<|END|>", "<|chance"],
    *["<|message", "<|channel|>analysis", "<|start|>assistant", "<|start|>assistant<|channel|>"],
]
#: Message bodies besides prose: a tool call's arguments, text that starts like a token.
HARMONY_BODIES = ["We need to answer.", '{"city": "Paris"}', "x <| y"]


def near_misses(options: Options) -> list[str]:
    """Strings that look like the grammar's delimiters but are not, under its matching."""
    out: set[str] = set()
    for open_, close in options.pairs:
        for delimiter in (open_, close):
            out.update(
                {
                    delimiter[:-1],
                    delimiter[:-1] + delimiter[-2] + delimiter[-1],
                    delimiter[:-1] + " " + delimiter[-1] + "x",
                    delimiter[:1] + " " + delimiter[1:],
                    delimiter[:-1] + "er" + delimiter[-1],
                }
            )
            if options.matching == "exact":
                out.update({delimiter.upper(), delimiter[:1] + " " + delimiter[1:]})
    for marker in options.tool_markers:
        out.update({marker[:-1], marker[:1] + " " + marker[1:], marker.upper()})
    for pairs in PRESETS.values():
        if pairs != options.pairs:
            out.update(d for pair in pairs[:1] for d in pair)
    delimiters = {d for pair in options.pairs for d in pair}
    grammar = options.grammar
    return sorted(s for s in out if s not in delimiters and not grammar.delimiter.fullmatch(s))


def by_length(strings: list[str]) -> list[str]:
    return sorted(dict.fromkeys(strings), key=len)


def partials(delimiters: list[str]) -> list[str]:
    """Every proper prefix of the delimiters, shortest first: what a stream cut off in the
    middle of a delimiter ends with."""
    return by_length([d[:size] for d in delimiters for size in range(1, len(d))])


def vocabulary(options: Options) -> tuple[list[str], list[str], list[str]]:
    """What begins a block (under harmony a message header), what ends one, and the other
    strings that matter to the grammar (its tool markers, near-misses, stray tokens)."""
    if options.framing == "harmony":
        tokens = [harmony.START, harmony.CHANNEL, harmony.MESSAGE, harmony.CONSTRAIN]
        return HEADERS, list(harmony.ENDS), by_length(tokens + HARMONY_NEAR)
    opens = by_length([pair[0] for pair in options.pairs])
    closes = by_length([pair[1] for pair in options.pairs])
    return opens, closes, by_length([*options.tool_markers, *near_misses(options)])


def delimiters(options: Options) -> list[str]:
    """Every string the grammar scans for: a proper prefix of one is held back."""
    if options.framing == "harmony":
        return list(harmony.TOKENS)
    return [d for pair in options.pairs for d in pair] + list(options.tool_markers)


def inside_delimiters(text: str, options: Options) -> dict[int, int]:
    """Under `atomic_delimiters`, each point of `text` strictly inside a delimiter, with
    where that delimiter ends: a chunk boundary may not fall there (SPEC.md 5.11)."""
    if not options.atomic_delimiters:
        return {}
    occurrences = options.grammar.occurrences(text)
    return {point: end for begin, end, _ in occurrences for point in range(begin + 1, end)}
