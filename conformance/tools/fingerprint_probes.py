"""The fingerprint's probes: for each option, a few streams that come out differently under
its different values (SPEC.md section 5), built from the delimiters decided before; and the
delimiters, tool markers and framing of the model-family profiles (SPEC.md 5.9)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.model import harmony
from conformance.model.chunks import Chunk
from conformance.model.families import FAMILIES
from conformance.model.grammar import PRESETS
from conformance.model.options import Options, Pairs

#: Every delimiter pair of the named grammars, in a fixed order: one probe each.
KNOWN_PAIRS: Pairs = tuple(dict.fromkeys(pair for pairs in PRESETS.values() for pair in pairs))
#: The model families' own delimiter lists (SPEC.md 5.9), each a candidate grammar.
FAMILY_GRAMMARS: tuple[Pairs, ...] = tuple(
    dict.fromkeys(
        delimiters
        for name in FAMILIES
        if not isinstance(delimiters := Options.from_mapping({"profile": name}).delimiters, str)
    )
)
#: Their pairs the named grammars lack: probed like the named grammars' pairs.
FAMILY_PAIRS: Pairs = tuple(
    dict.fromkeys(pair for pairs in FAMILY_GRAMMARS for pair in pairs if pair not in KNOWN_PAIRS)
)
#: Every tool marker of the model families (SPEC.md 5.7): one probe each.
MARKERS: tuple[str, ...] = tuple(
    dict.fromkeys(
        marker for family in FAMILIES.values() for marker in family.options.get("tool_markers", ())
    )
)


Stream = tuple[Chunk, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    """One discriminating input: a stream, and what it is about."""

    name: str
    chunks: Stream
    #: The delimiter pair or the tool marker a probe of those is about.
    about: tuple[str, str] | str | None = None


# --- probes -----------------------------------------------------------------------------------


def _stream(delimiters: Sequence[str], *items: str | tuple[str | None, str | None]) -> Stream:
    """Chunks from strings (content) and (content, reasoning) pairs, with every delimiter of
    `delimiters` a chunk of its own, as a model's stream delivers it (one token). Native
    reasoning stays with the first piece of its chunk, so the tagged sequence (SPEC.md 4.3)
    is the same as the items'."""
    alternatives = "|".join(re.escape(d) for d in sorted(delimiters, key=len, reverse=True))
    pattern = re.compile(f"({alternatives})")
    chunks: list[Chunk] = []
    for item in items:
        content, reasoning = (item, None) if isinstance(item, str) else item
        pieces = [piece for piece in pattern.split(content or "") if piece] or [content]
        chunks.append(Chunk(pieces[0], reasoning))
        chunks.extend(Chunk(piece) for piece in pieces[1:])
    return tuple(chunks)


def _blanked(delimiter: str) -> str:
    """A blank after the first character (and after a `/` there) and before the last:
    `</think>` -> `</ think >`. Tolerant matching accepts it wherever blanks are allowed."""
    if len(delimiter) < 3:
        return delimiter
    head, middle, last = delimiter[0], delimiter[1:-1], delimiter[-1]
    if middle.startswith("/"):
        return f"{head}/ {middle[1:]} {last}"
    return f"{head} {middle} {last}"


def pair_probe(pair: tuple[str, str]) -> Probe:
    """Is this pair a block? The open delimiter first: inside or outside at the start, it
    leads to the same state."""
    return Probe(_pair_probe_name(pair), _stream(pair, _pair_probe_name(pair)), pair)


def delimiter_probes(context: Options) -> list[Probe]:
    return [pair_probe(pair) for pair in (*KNOWN_PAIRS, *FAMILY_PAIRS)]


def marker_probe(context: Options, marker: str) -> Probe:
    """Does this tool marker inside an open block end the block and stay text (SPEC.md 5.7)?"""
    o, c = context.pairs[0]
    return Probe(f"{o}a{marker}b", _stream((o, c, marker), f"{o}a{marker}b"), marker)


def sections_probes(context: Options) -> list[Probe]:
    """A second block after the first: a block too, or text (`sections: one`, SPEC.md 5.10)?"""
    o, c = pair = context.pairs[0]
    return [Probe("a second block", _stream(pair, f"{o}a{c}b{o}c{c}d"))]


def framing_probes(context: Options) -> list[Probe]:
    """An analysis message then a final one (SPEC.md 5.8): harmony routes them, tags keep
    them as text."""
    analysis = f"{harmony.CHANNEL}analysis{harmony.MESSAGE}R{harmony.ENDS[0]}"
    final = f"{harmony.START}assistant{harmony.CHANNEL}final{harmony.MESSAGE}A{harmony.ENDS[1]}"
    return [Probe("analysis, then final", _stream(harmony.TOKENS, analysis + final))]


def matching_probes(context: Options) -> list[Probe]:
    o, c = context.pairs[0]
    upper, blank = (o.swapcase(), c.swapcase()), (_blanked(o), _blanked(c))
    return [
        Probe("case changed", _stream(upper, f"{upper[0]}a{upper[1]}b")),
        Probe("blanks inside", _stream(blank, f"{blank[0]}a{blank[1]}b")),
    ]


def start_probes(context: Options) -> list[Probe]:
    o, c = pair = context.pairs[0]
    return [
        Probe("orphan close", _stream(pair, f"a{c}b")),
        Probe("text before a block", _stream(pair, f"a{o}b{c}c")),
        Probe("no delimiter", _stream(pair, "plain text")),
    ]


def native_probes(context: Options) -> list[Probe]:
    o, c = pair = context.pairs[0]
    return [
        Probe("native with the open tag", _stream(pair, (f"{o}plan{c}Answer", "plan"))),
        Probe("native before the block", _stream(pair, (None, "R"), f"{o}x{c}y")),
        Probe("native inside the block", _stream(pair, f"{o}early", (None, "R"), f" late{c}x")),
    ]


def unclosed_probes(context: Options) -> list[Probe]:
    o, c = pair = context.pairs[0]
    return [
        Probe("unclosed at end", _stream(pair, f"a{o}b")),
        Probe("closed, then unclosed", _stream(pair, f"{o}a{c}b{o}c")),
        Probe("unclosed across chunks", _stream(pair, f"x{o}ab", "c")),
    ]


PROBES: dict[str, Callable[[Options], list[Probe]]] = {
    "delimiters": delimiter_probes,
    "matching": matching_probes,
    "start_in_reasoning": start_probes,
    "native_with_tags": native_probes,
    "unclosed_at_end": unclosed_probes,
    "sections": sections_probes,
    "framing": framing_probes,
}


def _pair_probe_name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}a{pair[1]}b"
