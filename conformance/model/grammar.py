"""Delimiter grammars as data, compiled into the matchers the normalizer scans with.

A grammar is a tuple of (open, close) pairs. Matching is `exact` (the literal strings) or
`tolerant` (ASCII case ignored, and up to MAX_BLANKS ASCII blanks after the first character,
after a `/` that follows it, and before the last character: `< Think >`, `</ think>`).

`Grammar.scan` is the one question the normalizer asks of a text. Exact grammars answer it in
C (`_scan.c`) where the package was installed with a C compiler; the regular expressions
answer it otherwise, and under tolerant matching, to the same results (tests/test_c_scan.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from conformance.model.c_scan import c_scan_of

#: Named grammars. The first is the spec's default.
PRESETS: dict[str, tuple[tuple[str, str], ...]] = {
    "think": (("<think>", "</think>"), ("<thinking>", "</thinking>")),
    "extended": tuple(
        (f"<{name}>", f"</{name}>")
        for name in ("think", "thinking", "thought", "reasoning", "reflection")
    ),
    # The one pair most normalizers know (vLLM's and SGLang's parsers, the Vercel AI SDK's
    # default tagName, LiteLLM's stream iterators): declaring it judges them on their bugs,
    # not on `<thinking>`, a name they never chose to recognise.
    "think_only": (("<think>", "</think>"),),
    "bracket": (("[THINK]", "[/THINK]"),),
    "kimi": (("\u25c1think\u25b7", "\u25c1/think\u25b7"),),
}

#: Most delimiter pairs a grammar may have, and the longest a delimiter may be: a grammar is
#: declared by an implementation (its `hello`), and compiling and scanning with it costs in
#: proportion to its size, so a declaration must not be able to make the harness unbounded.
#: The largest preset has 5 pairs of at most 12 characters.
MAX_PAIRS = 256
MAX_DELIMITER_LENGTH = 64

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
    #: Finds where a delimiter may be, faster than `delimiter` (see `_anchored`): each match
    #: lies in a delimiter occurrence that starts at most `back` characters before it.
    #: `delimiter` itself when no faster pattern exists (`back` is then 0).
    candidate: re.Pattern[str]
    back: int
    #: When no two occurrences can overlap, `candidate` matches exactly at the occurrences:
    #: its group i (`match.lastindex`) matched a delimiter of length `direct[i][0]` ending
    #: at `match.end()`, closing if `direct[i][1]`. None otherwise.
    direct: tuple[tuple[int, bool], ...] | None
    #: The longest string `delimiter` can match.
    span: int
    #: `scan` in C (`_scan.c`), for exact grammars when the module is built.
    c_scan: Callable[[str], Scan] | None
    #: Matches the longest suffix that is a proper prefix of a delimiter (`prefix` up to
    #: the end of the text): searched only in the last `max_prefix` characters.
    tail: re.Pattern[str]
    #: The closing delimiters under exact matching (a set test decides `is_close`).
    closes: frozenset[str] | None
    #: Every proper prefix of a delimiter under exact matching (what `prefix` matches).
    prefixes: frozenset[str] | None
    #: Whether no delimiter has a start character after its first character.
    start_once: bool
    #: The tool markers (SPEC.md 5.7): scanned as closing delimiters, routed as text.
    markers: frozenset[str]
    #: Fully matches exactly the tool markers (under tolerant matching too).
    marker: re.Pattern[str]
    #: Texts up to this long are scanned once and their scan remembered in `memo`:
    #: token-sized chunks plus a held-back suffix repeat endlessly in a stream.
    short: int
    memo: dict[str, Scan] = field(default_factory=dict, compare=False, repr=False)

    def is_close(self, delimiter: str) -> bool:
        """Whether a matched delimiter is a closing one."""
        if self.closes is not None:
            return delimiter in self.closes
        return self.close.fullmatch(delimiter) is not None

    def is_marker(self, delimiter: str) -> bool:
        """Whether a matched closing delimiter is a tool marker."""
        if not self.markers:
            return False
        if not self.tolerant:
            return delimiter in self.markers
        return self.marker.fullmatch(delimiter) is not None

    def scan(self, text: str) -> Scan:
        """The delimiter occurrences of `text`, left to right as `delimiter.finditer` finds
        them, as (start, end, is_close), and where the held-back suffix after the last one
        begins. Only `hold` when there is no occurrence."""
        if self.c_scan is not None:
            return self.c_scan(text)
        occurrences = self.occurrences(text)
        hold = self.hold(text, occurrences[-1][1] if occurrences else 0)
        return (tuple(occurrences), hold) if occurrences else hold

    def scan_short(self, text: str) -> Scan:
        """`scan`, remembered for texts up to `short` characters (bounded: at MEMO_SIZE
        entries the memo starts afresh)."""
        memo = self.memo
        found = memo.get(text)
        if found is None:
            found = self.scan(text)
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[text] = found
        return found

    def occurrences(self, text: str) -> list[Occurrence]:
        """Every delimiter occurrence, exactly those of `delimiter.finditer(text)`."""
        direct = self.direct
        if direct is not None:
            found = []
            for match in self.candidate.finditer(text):
                end = match.end()
                length, close = direct[match.lastindex]  # type: ignore[index]
                found.append((end - length, end, close))
            return found
        is_close = self.is_close
        if self.candidate is self.delimiter:
            return [
                (m.start(), m.end(), is_close(m.group())) for m in self.delimiter.finditer(text)
            ]
        # No occurrence starts before `clear`. A candidate at `at` belongs to an occurrence
        # starting in [at - back, at]; every occurrence starting there ends within `span` of
        # `at`, so a search in that window finds the leftmost one exactly as a search of the
        # whole text would.
        found = []
        find = self.candidate.search
        search = self.delimiter.search
        back = self.back
        span = self.span
        clear = 0
        while (hit := find(text, clear)) is not None:
            at = hit.start()
            low = at - back
            near = search(text, low if low > clear else clear, at + span)
            if near is not None and near.start() <= at:
                clear = near.end()
                found.append((near.start(), clear, is_close(near.group())))
            else:
                clear = at + 1
        return found

    def hold(self, text: str, pos: int = 0) -> int:
        """Where the longest suffix of `text[pos:]` that could still become a delimiter (a
        proper prefix of one) begins; `len(text)` when no suffix could."""
        size = len(text)
        lowest = size - self.max_prefix
        if lowest < pos:
            lowest = pos
        starts = self.starts
        if len(starts) != 1:
            match = self.tail.search(text, lowest)
            return size if match is None else match.start()
        prefixes = self.prefixes
        fullmatch = self.prefix.fullmatch
        if self.start_once:
            # A held suffix has the start character only first: only the last one can begin
            # it.
            at = text.rfind(starts, lowest)
            if at >= 0 and (text[at:] in prefixes if prefixes is not None else fullmatch(text, at)):
                return at
            return size
        at = text.find(starts, lowest)
        while at >= 0:
            if text[at:] in prefixes if prefixes is not None else fullmatch(text, at):
                return at
            at = text.find(starts, at + 1)
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


#: A delimiter occurrence: where it starts, where it ends, whether it closes.
Occurrence = tuple[int, int, bool]
#: What `Grammar.scan` returns: the hold index alone when there is no occurrence.
Scan = int | tuple[tuple[Occurrence, ...], int]
#: Bound of a grammar's memo of short scans (entries of at most `Grammar.short` characters).
MEMO_SIZE = 4096

#: ASCII characters roughly from most to least frequent in what models write (prose, code,
#: markup). The scan anchors on the delimiters' least frequent common character; characters
#: not listed (rarer punctuation, non-ASCII symbols such as U+25C1) count as rarest.
_FREQUENT = " etaoinsrhldcu\nmfpgwyb.,v<>/=-_\"'():k0123456789TAISECONRDLPMHBFGW;xj[]{}qz*#UVYKJXQZ"


@lru_cache(maxsize=64)
def compile_grammar(
    pairs: tuple[tuple[str, str], ...], tolerant: bool, markers: tuple[str, ...] = ()
) -> Grammar:
    """The grammar of `pairs`. `markers` (tool markers, SPEC.md 5.7) are scanned as closing
    delimiters are, and `Grammar.is_marker` tells them apart: they end a block but are text."""
    opens = [_pieces(open_, tolerant) for open_, _ in pairs]
    closes = [_pieces(close, tolerant) for _, close in pairs]
    closes += [_pieces(marker, tolerant) for marker in markers]
    delimiter = _factored(opens + closes)
    prefixes = [_prefix_pattern(p) for p in opens + closes if len(p) > 1]
    flags = re.IGNORECASE | re.ASCII if tolerant else 0
    delimiters = [d for pair in pairs for d in pair] + list(markers)
    longest = max(len(d) for d in delimiters)
    gaps = 3 * MAX_BLANKS if tolerant else 0
    compiled_delimiter = re.compile(delimiter, flags)
    starts = "".join(sorted({d[0] for d in delimiters} | _case_twins(delimiters, tolerant)))
    anchor = None if tolerant else _anchor(delimiters)
    anchored = None if anchor is None else _anchored(delimiters, anchor)
    candidate, back, direct = compiled_delimiter, 0, None
    closing = {close for _, close in pairs} | set(markers)
    c_scan = None if anchor is None else c_scan_of(pairs, markers, anchor)
    if anchored is not None:
        candidate, back = re.compile(anchored[0]), anchored[1]
        if not _can_overlap(delimiters):
            direct = ((0, False), *((len(d), d in closing) for d in anchored[2]))
    return Grammar(
        pairs=pairs,
        tolerant=tolerant,
        delimiter=compiled_delimiter,
        close=re.compile(_alternatives(closes), flags),
        prefix=re.compile("|".join(prefixes) or "(?!)", flags),
        starts=starts,
        max_prefix=longest - 1 + gaps,
        candidate=candidate,
        back=back,
        direct=direct,
        span=longest + gaps,
        c_scan=c_scan,
        tail=re.compile(f"(?:{'|'.join(prefixes) or '(?!)'})\\Z", flags),
        closes=None if tolerant else frozenset(closing),
        markers=frozenset(markers),
        marker=re.compile(_alternatives([_pieces(m, tolerant) for m in markers]) or "(?!)", flags),
        prefixes=None
        if tolerant
        else frozenset(d[:size] for d in delimiters for size in range(1, len(d))),
        start_once=not any(
            char in delimiter[1:] or (tolerant and char.lower() in delimiter[1:].lower())
            for char in starts
            for delimiter in delimiters
        ),
        short=longest - 1 + gaps + 8,
    )


def _anchor(delimiters: list[str]) -> str | None:
    """The piece of text every delimiter contains that a scan looks for first: the longest
    substring all delimiters share (the one whose first character is least frequent, among
    equals), else their least frequent shared character. None when they share no character.
    """
    rank = {char: index for index, char in enumerate(_FREQUENT)}
    first = delimiters[0]
    common = {first[i:j] for i in range(len(first)) for j in range(i + 1, len(first) + 1)}
    # Narrowed delimiter by delimiter: the pieces left shrink fast, so this stays linear in
    # the number of delimiters where testing every piece against every delimiter was not.
    for delimiter in delimiters[1:]:
        common = {piece for piece in common if piece in delimiter}
        if not common:
            return None
    shared = sorted(common, key=lambda piece: (-len(piece), piece))
    longest = [piece for piece in shared if len(piece) == len(shared[0])]
    # The regex engine stops at each occurrence of the anchor's first character: a suffix of
    # the longest shared piece that starts with a rarer one (`hink`) stops it less often,
    # and needs two characters or more to stay selective.
    candidates = {piece[cut:] for piece in longest for cut in range(max(1, len(piece) - 1))}
    return max(
        sorted(candidates, key=len, reverse=True),
        key=lambda piece: rank.get(piece[0], len(_FREQUENT)),
    )


def _anchored(delimiters: list[str], anchor: str) -> tuple[str, int, list[str]]:
    """Under exact matching, a pattern that matches exactly where a delimiter ends, starting
    at the anchor: `hink(?:>(?:(?<=<think>)()|(?<=</think>)())|ing>...)`.

    A pattern that starts with a literal lets the regex engine skip to it at C speed; a long
    shared literal (`hink` rather than `<` in the default grammar) stops the scan at a few
    places only in text full of `<`, and the lookbehinds reject, still inside the engine,
    what is not a delimiter. Returns the pattern, how far before its match a delimiter can
    start, and the delimiter of each of its empty groups, in order.
    """
    tails: dict[str, list[str]] = {}
    for delimiter in delimiters:
        tails.setdefault(delimiter[delimiter.rindex(anchor) + len(anchor) :], []).append(delimiter)
    order: list[str] = []
    alternatives = []
    for tail, ends in sorted(tails.items()):
        order += ends
        behind = "|".join(f"(?<={re.escape(d)})()" for d in ends)
        alternatives.append(f"{re.escape(tail)}(?:{behind})")
    back = max(delimiter.rindex(anchor) for delimiter in delimiters)
    return f"{re.escape(anchor)}(?:{'|'.join(alternatives)})", back, order


def _can_overlap(delimiters: list[str]) -> bool:
    """Whether two occurrences of delimiters can overlap in some text: a proper suffix of
    one is a prefix of another, or contains another.

    Set look-ups rather than comparing every pair: linear in the number of delimiters, each
    of bounded length (MAX_DELIMITER_LENGTH), so a large declared grammar compiles in time
    proportional to its size."""
    starts = {d[:size] for d in delimiters for size in range(1, len(d) + 1)}
    whole = set(delimiters)
    for first in delimiters:
        for cut in range(1, len(first)):
            rest = first[cut:]
            # A delimiter starts with `rest`, or `rest` starts with a delimiter.
            if rest in starts or any(rest[:size] in whole for size in range(1, len(rest) + 1)):
                return True
    return False


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


def _case_twins(delimiters: list[str], tolerant: bool) -> set[str]:
    """Under tolerant matching a delimiter starting with a letter may start in either case."""
    if not tolerant:
        return set()
    firsts = {d[0] for d in delimiters}
    return {ch.swapcase() for ch in firsts if ch.isascii() and ch.isalpha()}
