"""The reference normalizer as it was before its scan was made faster: the oracle the faster
one is checked against, delta for delta (tests/test_reference_oracle.py).

A frozen copy of `conformance/reference/_normalizer.py` and of the grammar compiler of
`conformance/model/grammar.py` at that point, kept only for the tests. It stops at every character
a delimiter can start with; what it emits, and when, is what the reference must emit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from conformance.model.options import Options

#: Longest run of blanks tolerant matching accepts in one gap. A bound keeps the held-back
#: suffix bounded: an unbounded run would let `<` plus a megabyte of spaces stay "possible".
MAX_BLANKS = 8
BLANKS = " \t\n\r\f"
_BLANK_RUN = f"[{re.escape(BLANKS)}]{{0,{MAX_BLANKS}}}"


@dataclass(frozen=True, slots=True)
class Grammar:
    """A compiled delimiter grammar: finds complete delimiters and held-back prefixes."""

    pairs: tuple[tuple[str, str], ...]
    tolerant: bool
    #: Matches any complete delimiter (`is_close` tells which kind a match is).
    delimiter: re.Pattern[str]
    #: Fully matches exactly the closing delimiters.
    close: re.Pattern[str]
    #: Fully matches any proper prefix of a delimiter (a suffix that may still complete).
    prefix: re.Pattern[str]
    #: Characters a delimiter can start with (held-back suffixes start with one of them).
    starts: str
    #: The longest string `prefix` can match; bounds the held-back suffix.
    max_prefix: int

    def is_close(self, delimiter: str) -> bool:
        """Whether a matched delimiter is a closing one."""
        return self.close.fullmatch(delimiter) is not None

    def holdback_start(self, text: str) -> int:
        """Index where the longest suffix of `text` that could still become a delimiter
        begins; `len(text)` when no suffix could."""
        size = len(text)
        lowest = max(0, size - self.max_prefix)
        candidates: list[int] = []
        for start in self.starts:
            at = text.rfind(start, lowest)
            while at != -1:
                candidates.append(at)
                at = text.rfind(start, lowest, at)
        for at in sorted(candidates):
            if self.prefix.fullmatch(text, at):
                return at
        return size


def _pieces(delimiter: str, tolerant: bool) -> list[str]:
    """Split a delimiter into regex pieces, one per character, with blank gaps when
    tolerant. Each piece is a unit of the prefix pattern."""
    if not tolerant or len(delimiter) < 3 or delimiter[0].isalnum() or delimiter[-1].isalnum():
        return [re.escape(ch) for ch in delimiter]
    first, middle, last = delimiter[0], delimiter[1:-1], delimiter[-1]
    pieces = [re.escape(first), _BLANK_RUN]
    if middle.startswith("/"):
        pieces += ["/", _BLANK_RUN]
        middle = middle[1:]
    pieces += [re.escape(ch) for ch in middle]
    pieces += [_BLANK_RUN, re.escape(last)]
    return pieces


def _prefix_pattern(pieces: list[str]) -> str:
    """A pattern fully matching every proper, non-empty prefix of the pieces' sequence."""
    # piece0 (?: piece1 (?: piece2 ... )? )?  without the last piece: a proper prefix.
    pattern = ""
    for piece in reversed(pieces[1:-1]):
        pattern = f"(?:{piece}{pattern})?"
    return pieces[0] + pattern


@lru_cache(maxsize=64)
def compile_grammar(pairs: tuple[tuple[str, str], ...], tolerant: bool) -> Grammar:
    opens = [_pieces(open_, tolerant) for open_, _ in pairs]
    closes = [_pieces(close, tolerant) for _, close in pairs]
    delimiter = _factored(opens + closes)
    prefixes = [_prefix_pattern(p) for p in opens + closes if len(p) > 1]
    flags = re.IGNORECASE | re.ASCII if tolerant else 0
    longest = max(len(d) for pair in pairs for d in pair)
    gaps = 3 * MAX_BLANKS if tolerant else 0
    return Grammar(
        pairs=pairs,
        tolerant=tolerant,
        delimiter=re.compile(delimiter, flags),
        close=re.compile(_alternatives(closes), flags),
        prefix=re.compile("|".join(prefixes) or "(?!)", flags),
        starts="".join(
            sorted({d[0] for pair in pairs for d in pair} | _case_twins(pairs, tolerant))
        ),
        max_prefix=longest - 1 + gaps,
    )


def _factored(delimiters: list[list[str]]) -> str:
    """Alternatives grouped by their first character: `<(?:/think>|think>|...)`. A pattern
    that starts with a literal lets the regex engine skip to candidates at C speed (about
    ten times faster than a bare alternation over text with few delimiters)."""
    by_first: dict[str, list[list[str]]] = {}
    for pieces in delimiters:
        by_first.setdefault(pieces[0], []).append(pieces[1:])
    return "|".join(f"{first}(?:{_alternatives(rests)})" for first, rests in by_first.items())


def _alternatives(delimiters: list[list[str]]) -> str:
    # Longest first, so that a delimiter is never cut short by another it starts with.
    return "|".join(sorted(("".join(pieces) for pieces in delimiters), key=len, reverse=True))


def _case_twins(pairs: tuple[tuple[str, str], ...], tolerant: bool) -> set[str]:
    """Under tolerant matching a delimiter starting with a letter may start in either case."""
    if not tolerant:
        return set()
    firsts = {d[0] for pair in pairs for d in pair}
    return {ch.swapcase() for ch in firsts if ch.isascii() and ch.isalpha()}


class Normalizer:
    """Splits one stream into channels: `feed` each chunk, then `finish` once.

    After `finish` the normalizer is back in its initial state, ready for a new stream.
    """

    __slots__ = (
        "_carry",
        "_drop_unclosed",
        "_grammar",
        "_inside",
        "_keep",
        "_native_only",
        "_native_seen",
        "_pending",
        "_start",
        "options",
    )

    def __init__(self, options: Options | Mapping[str, Any] | None = None) -> None:
        if not isinstance(options, Options):
            options = Options.from_mapping(options)
        self.options = options
        self._grammar = compile_grammar(options.pairs, options.matching == "tolerant")
        starts = self._grammar.starts
        # With one start character a substring test decides the fast path.
        self._start = starts if len(starts) == 1 else None
        self._native_only = options.native_with_tags == "native_only"
        self._drop_unclosed = options.unclosed_at_end == "drop"
        self.reset()

    def reset(self) -> None:
        self._inside = self.options.start_in_reasoning
        self._carry = ""
        self._native_seen = False
        # Body text of the open block, kept until its close under `unclosed_at_end: drop`.
        self._pending: list[str] = []
        # How many leading characters of the carry are block body that arrived before the
        # first native reasoning: they still go to thinking under `native_only`.
        self._keep = 0

    def feed(self, chunk: Mapping[str, Any]) -> dict[str, str]:
        reasoning = chunk.get("reasoning")
        content = chunk.get("content")
        thinking = ""
        if reasoning:
            if not self._native_seen:
                self._native_seen = True
                if self._inside and self._native_only:
                    self._keep = len(self._carry)
            thinking = reasoning
        if not content:
            return {"assistant": "", "thinking": thinking}
        carry = self._carry
        text = carry + content if carry else content
        start = self._start
        if start is not None and start not in text:
            # Fast path: nothing here can begin a delimiter.
            self._carry = ""
            if not self._inside:
                return {"assistant": text, "thinking": thinking}
            return {"assistant": "", "thinking": thinking + self._body(text)}
        assistant: list[str] = []
        thought: list[str] = [thinking]
        self._scan(text, assistant, thought)
        return {"assistant": "".join(assistant), "thinking": "".join(thought)}

    def finish(self) -> dict[str, str]:
        """End of stream: release everything held back, then reset."""
        text, self._carry = self._carry, ""
        assistant = ""
        thinking = ""
        if text:
            if self._inside:
                thinking = self._body(text)
            else:
                assistant = text
        # An unclosed block's pending body is dropped with the state.
        self.reset()
        return {"assistant": assistant, "thinking": thinking}

    def _scan(self, text: str, assistant: list[str], thought: list[str]) -> None:
        grammar = self._grammar
        pos = 0
        for match in grammar.delimiter.finditer(text):
            begin = match.start()
            if begin > pos:
                self._route(text[pos:begin], assistant, thought)
            if not grammar.is_close(match.group()):
                # An open inside a block does not nest: it is stripped and ignored.
                self._inside = True
            elif self._inside:
                self._inside = False
                if self._pending:
                    thought.append("".join(self._pending))
                    self._pending.clear()
            # An orphan close (outside any block) is stripped; the text before it stays.
            pos = match.end()
            self._keep = 0
        hold = pos + grammar.holdback_start(text[pos:]) if pos < len(text) else pos
        if hold > pos:
            self._route(text[pos:hold], assistant, thought)
        self._carry = text[hold:]

    def _route(self, text: str, assistant: list[str], thought: list[str]) -> None:
        if self._inside:
            thought.append(self._body(text))
        else:
            assistant.append(text)

    def _body(self, text: str) -> str:
        """Block body text: what of it reaches thinking now."""
        if self._native_seen and self._native_only:
            kept, self._keep = text[: self._keep], max(0, self._keep - len(text))
            text = kept
        if self._drop_unclosed:
            self._pending.append(text)
            return ""
        return text


def oracle_stream(
    chunks: Iterable[Mapping[str, Any]], options: Options | Mapping[str, Any] | None = None
) -> list[dict[str, str]]:
    """Every delta of a stream, the flush delta last."""
    normalizer = Normalizer(options)
    deltas = [normalizer.feed(chunk) for chunk in chunks]
    deltas.append(normalizer.finish())
    return deltas
