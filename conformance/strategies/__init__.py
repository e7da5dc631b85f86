"""Layer 2 (reference): Hypothesis strategies for reasoning-channel normalizers, for
anyone's own property tests.

    from hypothesis import given
    from conformance import strategies as cs

    @given(cs.streams())
    def test_my_normalizer_matches_the_reference(chunks):
        ...

Every strategy takes the `Options` of the grammar to aim at (default: the spec's defaults), so
delimiters, near-misses and split points are those of the grammar under test: its tool markers
too (SPEC.md 5.7), and under harmony framing gpt-oss messages (5.8). Under
`atomic_delimiters` no chunk boundary falls inside a delimiter (5.11). Chunks are plain dicts,
as in the protocol: `{"content": str | None, "reasoning": str | None}`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.model.options import DEFAULT, Options
from conformance.strategies._vocabulary import (
    HARMONY_BODIES,
    by_length,
    delimiters,
    inside_delimiters,
    partials,
    vocabulary,
)

Chunk = dict[str, Any]

# Every pool is ordered simplest first: Hypothesis shrinks a choice from a list towards its
# first element, so a counterexample keeps a word only where the bug needs that word, and
# otherwise ends up with a single neutral letter (or nothing at all).
_PROSE = [
    "a",
    "b",
    "x",
    "ab",
    "a b",
    "so",
    "plan:",
    "The result is 42.",
    "caf\u00e9",
    "Z\u00fcrich",
    "\u2014",
    "\u00bfpor qu\u00e9?",
    "\u041f\u0440\u0438\u0432\u0435\u0442",
]
_ANGLES = ["<", ">", "<<", ">>", "a < b", "b > a", "->", "<=", "Vec<T>", "<div>", "</p>", "<br/>"]
_UNICODE = ["\u00e9", "e\u0301", "\U0001f600", "\u05d0\u05d1", "\u200f", "\u4e2d", "\ufeff"]
_BLANKS = ["", " ", "\n", "\r\n", "\t", "  "]
_NATIVE = ["", "R", "plan ", " ", "<think>n</think>", "\U0001f914"]
# Characters for short random strings. Strings are built from single characters rather than
# drawn with st.text(), whose draws Hypothesis also fills with string constants found in
# whatever local modules are imported, which made examples (and shrinking) depend on them.
_CHARS = "ab <>/[]=-\n\t\r\u00e9\u0301\u00a0\u200b\u200f\u05d0\u4e2d\uff1c\U0001f600kT"
_SHORT_TEXT = st.lists(st.sampled_from(_CHARS), max_size=3).map("".join)
_REASONING = st.sampled_from(_NATIVE) | _SHORT_TEXT
_COIN = st.booleans()
_UP_TO_3 = st.integers(0, 3)
# Shrinks towards False (Hypothesis shrinks integers towards 0), so minimal examples lose
# the extra cuts and empty chunks they do not need.
_ONE_IN_FOUR = st.integers(0, 3).map(lambda n: n == 3)


@functools.cache
def segments(options: Options = DEFAULT) -> st.SearchStrategy[str]:
    """One piece of a document: prose, angle brackets, near-misses, real delimiters, whole
    blocks (nested, unclosed, empty, orphan closes), Unicode, line endings; tool markers
    inside and outside blocks; under harmony framing, whole messages (tool calls too), lone
    headers and tokens."""
    opens, closes, others = vocabulary(options)
    # One draw from a fixed pool is much cheaper than composing strategies, and fuzzing
    # speed is examples per second: most pieces come from the pool. Simplest first: a
    # letter, then the delimiters, then everything that only looks like one.
    pool = st.sampled_from(
        _PROSE + by_length(opens + closes) + others + _ANGLES + _UNICODE + _BLANKS
    )
    body = pool | _SHORT_TEXT
    if options.framing == "harmony":
        body = body | st.sampled_from(HARMONY_BODIES)
    block = st.tuples(st.sampled_from(opens), body, st.sampled_from(closes)).map("".join)
    nested = st.tuples(st.sampled_from(opens), body, st.sampled_from(closes)).map(
        lambda p: p[0] + p[0] + p[1] + p[2] + p[2]
    )
    # A proper prefix of a delimiter: what a stream may end with, or a near-miss.
    partial = st.sampled_from(partials(opens + closes + list(options.tool_markers)))
    # An unclosed block, often ending in part of a close: a stream cut off mid-delimiter.
    unclosed = st.tuples(st.sampled_from(opens), body, st.just("") | partial).map("".join)
    # Text next to a delimiter comes from neighbouring segments: a cut inside a delimiter
    # then shares its chunk with that text, and shrinking can drop the text on its own.
    pieces = [pool, pool, _SHORT_TEXT, block, nested, unclosed, partial]
    if options.tool_markers:
        # A tool call begun inside a block (it ends the block), after one, and outside any.
        marker = st.sampled_from(options.tool_markers)
        pieces.append(st.tuples(st.sampled_from(opens), body, marker, body).map("".join))
        pieces.append(st.tuples(block, marker, body).map("".join))
        pieces.append(st.tuples(marker, body).map("".join))
    return st.one_of(pieces)


@functools.cache
def documents(options: Options = DEFAULT, *, max_segments: int = 8) -> st.SearchStrategy[str]:
    """Whole content strings built from `segments`."""
    return st.lists(segments(options), max_size=max_segments).map("".join)


def _interesting_points(text: str, options: Options) -> list[int]:
    """Cut points inside delimiters and at their first and last characters, and next to
    every character a delimiter can start with."""
    grammar = options.grammar
    points: set[int] = set()
    for match in grammar.delimiter.finditer(text):
        points.update(range(match.start(), match.end() + 1))
    for index, char in enumerate(text):
        if char in grammar.starts:
            points.update((index, index + 1))
    return sorted(points)


@st.composite
def chunkings(draw: st.DrawFn, text: str, options: Options = DEFAULT) -> list[str]:
    """The text cut into pieces (joined, they give `text` back): cut points biased towards
    delimiters, runs of one-character pieces, empty pieces, and sometimes one long piece."""
    size = len(text)
    # One draw per cut: an index into the interesting points, then into every position, so
    # cuts land inside delimiters far more often than uniform positions would.
    points = _interesting_points(text, options) + list(range(size + 1))
    cuts = set(draw(st.lists(st.sampled_from(points), max_size=min(size, 8))))
    if size > 1 and draw(_ONE_IN_FOUR):
        start = draw(st.integers(0, size - 1))
        cuts.update(range(start, min(size, start + 6) + 1))
    cuts -= inside_delimiters(text, options).keys()
    bounds = [0, *sorted(cuts - {0, size}), size]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    if draw(_ONE_IN_FOUR):
        pieces.insert(draw(st.integers(0, len(pieces))), "")
    return pieces


@functools.cache
def _cut_patterns(size: int) -> st.SearchStrategy[tuple[int, ...]]:
    """Where to cut a segment of `size` characters, in one draw: nowhere (what shrinking
    prefers), once, twice or (in short segments) three times anywhere, or before every
    character."""
    positions = range(size + 1)
    patterns: list[tuple[int, ...]] = [()]
    patterns += [(a,) for a in positions]
    patterns += [(a, b) for a in positions for b in positions if a < b]
    if size <= 16:
        patterns += list(itertools.combinations(positions, 3))
    if size > 1:
        patterns.append(tuple(range(1, size)))
    return st.sampled_from(patterns)


#: What happens at a cut, in one draw: (native step, reasoning text, empty chunk after).
#: Mostly nothing, which is also what shrinking prefers.
_AT_CUT = st.sampled_from(
    [(None, "", False)] * 6
    + [(None, "", True)] * 2
    + [(step, text, False) for step in ("attach", "own") for text in _NATIVE]
)


@functools.cache
def _endings(options: Options) -> st.SearchStrategy[str]:
    """What a stream ends with: mostly nothing, one time in four a proper prefix of a
    delimiter (shrinking towards none, and then towards the shortest)."""
    ends = partials(delimiters(options))
    return st.one_of(st.just(""), st.just(""), st.just(""), st.sampled_from(ends))


@st.composite
def _planned_segment(
    draw: st.DrawFn, options: Options, native: bool
) -> tuple[str, list[tuple[int, tuple[str | None, str, bool]]]]:
    """A segment with where to cut it and what happens at each cut."""
    segment = draw(segments(options))
    cuts = draw(_cut_patterns(len(segment)))
    return segment, [(cut, draw(_AT_CUT) if native else (None, "", False)) for cut in cuts]


@st.composite
def streams(draw: st.DrawFn, options: Options = DEFAULT, *, native: bool = True) -> list[Chunk]:
    """A document from `segments`, cut into chunks, with native reasoning interleaved.

    Cut points are drawn inside each segment (segments are short, so many land inside
    delimiters); sometimes every character of a segment is its own chunk; empty chunks and
    native reasoning (in a chunk of its own, or next to content in the chunk just cut) appear
    at cuts. Each segment carries its own cuts, so shrinking can drop a segment whole.
    """
    chunks: list[Chunk] = []
    current = ""
    for segment, plan in draw(st.lists(_planned_segment(options, native), max_size=6)):
        start = 0
        for cut, (step, reasoning, empty_after) in plan:
            current += segment[start:cut]
            start = cut
            chunks.append(
                {"content": current, "reasoning": reasoning or None if step == "attach" else None}
            )
            current = ""
            if step == "own":
                chunks.append({"content": None, "reasoning": reasoning})
            if empty_after:
                chunks.append({"content": "", "reasoning": None})
        current += segment[start:]
    ending = draw(_endings(options))
    if ending:
        # The stream ends in the middle of a delimiter (in a chunk of its own or not): what
        # an end-of-stream flush must release as text (SPEC invariant 5).
        if draw(_ONE_IN_FOUR):
            chunks.append({"content": current, "reasoning": None})
            current = ""
        current += ending
    chunks.append({"content": current, "reasoning": None})
    if native and draw(_ONE_IN_FOUR):
        chunks.insert(0, {"content": None, "reasoning": draw(_REASONING)})
    return _atomic(chunks, options)


def _atomic(chunks: list[Chunk], options: Options) -> list[Chunk]:
    """The chunks with each delimiter cut across chunks moved whole into the chunk where it
    begins, under `atomic_delimiters` (a delimiter can also form where two segments meet)."""
    inside = inside_delimiters("".join(c["content"] or "" for c in chunks), options)
    offset = 0
    last: Chunk | None = None  # the last chunk with content so far
    for chunk in chunks:
        text = chunk["content"]
        if not text:
            continue
        if offset in inside and last is not None:
            moved = inside[offset] - offset
            last["content"] += text[:moved]
            chunk["content"] = text[moved:]
        offset += len(text)
        last = chunk if chunk["content"] else last
    return chunks


def flatten(chunks: Sequence[Chunk]) -> list[tuple[str, str]]:
    """The stream's text in order, as (field, character): reasoning before content within a
    chunk. Two streams with the same flattening must give the same channels."""
    out: list[tuple[str, str]] = []
    for chunk in chunks:
        out += [("reasoning", char) for char in chunk.get("reasoning") or ""]
        out += [("content", char) for char in chunk.get("content") or ""]
    return out


@st.composite
def rechunkings(
    draw: st.DrawFn, chunks: Sequence[Chunk], options: Options = DEFAULT
) -> list[Chunk]:
    """Another chunking of the same stream: the same characters in the same order (under
    `atomic_delimiters`, no delimiter cut)."""
    flat = flatten(chunks)
    starts = set(draw(st.lists(st.integers(0, max(0, len(flat) - 1)), max_size=12)))
    inside = inside_delimiters("".join(c.get("content") or "" for c in chunks), options)
    if inside:
        content = itertools.accumulate((name == "content" for name, _ in flat), initial=0)
        starts -= {index for index, offset in enumerate(content) if offset in inside}
    out: list[Chunk] = []
    for index, (name, char) in enumerate(flat):
        last = out[-1] if out else None
        # Within a chunk reasoning comes first, so reasoning never joins a chunk with content.
        if (
            last is not None
            and index not in starts
            and (last[name] is not None or (name == "content" and last["content"] is None))
            and not (name == "reasoning" and last["content"] is not None)
        ):
            last[name] = (last[name] or "") + char
        else:
            out.append({"content": None, "reasoning": None, name: char})
    return out


# --- the other contracts (docs/contracts.md) ------------------------------------------------

_RENDER_TEXT = st.sampled_from(["plan", "answer", "step 1", "\n", "---", "\u00e9"]) | _SHORT_TEXT


def render_events() -> st.SearchStrategy[dict[str, Any]]:
    """Render requests: thinking, progress, text and turn-end events in any order."""
    event = st.sampled_from(["thinking", "progress", "text", "turn_end"]).flatmap(
        lambda kind: (
            st.just({"type": kind, "text": ""})
            if kind == "turn_end"
            else _RENDER_TEXT.map(lambda text: {"type": kind, "text": text})
        )
    )
    return st.lists(event, max_size=10).map(lambda events: {"events": events})


_THINKING_BLOCK = st.sampled_from(["plan", "", "check the tool", "\u00e9"]) | _SHORT_TEXT


@st.composite
def _stored_message(draw: st.DrawFn, index: int) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant", "assistant", "tool", "system"]))
    message: dict[str, Any] = {"role": role, "content": draw(st.none() | _RENDER_TEXT)}
    if role == "assistant":
        if draw(_COIN):
            message["thinking"] = draw(st.lists(_THINKING_BLOCK, max_size=3))
        if draw(_ONE_IN_FOUR):
            message["tool_calls"] = [
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": "{}"},
                }
            ]
    elif role == "tool":
        message["tool_call_id"] = f"call_{index}"
    return message


@st.composite
def egress_requests(draw: st.DrawFn) -> dict[str, Any]:
    """Egress requests: a stored history with thinking blocks and tool calls, and settings,
    now and then invalid ones (which must be rejected)."""
    size = draw(st.integers(0, 6))
    history = [draw(_stored_message(index)) for index in range(size)]
    settings: dict[str, Any] = {}
    if draw(_COIN):
        settings["includeInContext"] = draw(_COIN)
    if draw(_COIN):
        settings["stripFromContext"] = draw(st.sampled_from(["all", "allButLast", "none"]))
    if draw(_ONE_IN_FOUR):
        settings[draw(st.sampled_from(["stripFromContext", "format", "includeInContext"]))] = draw(
            st.sampled_from(["xml", 1, None, "some"])
        )
    return {"history": history, "settings": settings}


__all__ = [
    "chunkings",
    "documents",
    "egress_requests",
    "flatten",
    "rechunkings",
    "render_events",
    "segments",
    "streams",
]
