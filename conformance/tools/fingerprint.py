"""Behaviour fingerprint: which value of each option (SPEC.md section 5) an implementation follows.

For each option, a few hand-picked streams (probes) come out differently under its different
values. The implementation's output for a probe is compared with the reference normalizer's
output under each candidate value, the options decided before held at the values found for
them: the value that every probe agrees with is the one the implementation follows.

Options interact: under `start_in_reasoning` plain text is reasoning, which an
`unclosed_at_end: drop` implementation then drops, so a probe may look wrong under every value
of one option until another is known. The options are therefore decided in an order where
each one's probes depend little on the later ones (ORDER), and an option not decided yet takes
every one of its values: a candidate agrees with a probe when some value of the undecided
options makes the reference produce the implementation's output.

    fp = fingerprint(connection)
    fp.axis("native_with_tags").value     # "merge"
    fp.declared_options()                 # {"native_with_tags": "merge"}: what to declare

Probes are streamed the way a model's stream delivers them, every delimiter a chunk of its
own (`["<think>", "a", "</think>", "b"]`), so that normalizers that recognise a tag only when
it arrives whole are fingerprinted too. Only final channel texts are compared (a
whitespace-only difference still agrees, as in SPEC.md 8.2): this is about policy; delimiters
split across chunks, promptness and everything else are what `conformance run` checks.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tabulate import tabulate

from conformance.model.chunks import Channels, Chunk
from conformance.model.grammar import PRESETS
from conformance.model.judge import compare
from conformance.model.options import CHOICES, DEFAULT, OPTION_NAMES, Options, Pairs
from conformance.model.results import ImplementationInfo, Verdict
from conformance.reference import join, normalize_stream
from conformance.transport.connections import Connection, Ok, Reply, StreamRequest

#: Every probe agrees with some value, but no single value agrees with all of them.
INCONSISTENT = "inconsistent"
#: On at least one probe the output agrees with no value at all (e.g. an orphan close shown).
NONE = "none"
#: No probe could decide: each failed (error, timeout, unsupported) or agreed with every value.
UNDETERMINED = "undetermined"
NOT_FOUND = (INCONSISTENT, NONE, UNDETERMINED)

#: The order options are decided in. Delimiter probes begin with an open delimiter, which
#: makes them independent of start_in_reasoning; the delimiters found build the other probes.
ORDER = ("delimiters", "start_in_reasoning", "unclosed_at_end", "native_with_tags", "matching")

#: Every delimiter pair of the named grammars, in a fixed order: one probe each.
KNOWN_PAIRS: Pairs = tuple(dict.fromkeys(pair for pairs in PRESETS.values() for pair in pairs))


Stream = tuple[Chunk, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    """One discriminating input: a stream, and what it is about."""

    name: str
    chunks: Stream


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe showed: the implementation's output and the reference's per value."""

    name: str
    chunks: tuple[Chunk, ...]
    #: The implementation's final channel texts; None when it did not answer with a split.
    actual: Mapping[str, str] | None
    #: Why there is no output (error, timeout, unsupported); None when there is one.
    problem: str | None
    #: (candidate value, the reference's possible channel texts under it: several when an
    #: option decided later changes them), in the option's value order.
    expected: tuple[tuple[Any, tuple[Mapping[str, str], ...]], ...]
    #: The candidate values whose reference output the implementation's output agrees with.
    matches: tuple[Any, ...]

    @property
    def discriminating(self) -> bool:
        """Whether the candidate values give different outputs here (else it decides nothing)."""
        return len({_key(outputs) for _, outputs in self.expected}) > 1

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": self.name,
            "chunks": [chunk.to_json() for chunk in self.chunks],
            "actual": None if self.actual is None else dict(self.actual),
            "problem": self.problem,
            "expected": [
                {"value": _json_value(value), "outputs": [dict(c) for c in outputs]}
                for value, outputs in self.expected
            ],
            "matches": [_json_value(value) for value in self.matches],
            "discriminating": self.discriminating,
        }


@dataclass(frozen=True, slots=True)
class AxisResult:
    """One option: the value the implementation follows, or why there is none, and why."""

    option: str
    #: An option value (a custom delimiter list as a tuple of pairs), or one of NOT_FOUND.
    value: Any
    #: The value the implementation declares (JSON-shaped).
    declared: Any
    probes: tuple[ProbeResult, ...]

    @property
    def found(self) -> bool:
        return not (isinstance(self.value, str) and self.value in NOT_FOUND)

    @property
    def agrees(self) -> bool:
        """Whether the implementation does what it declares for this option."""
        return self.found and _json_value(self.value) == self.declared

    def to_json(self) -> dict[str, Any]:
        return {
            "option": self.option,
            "follows": _json_value(self.value),
            "declared": self.declared,
            "agrees": self.agrees,
            "probes": [probe.to_json() for probe in self.probes],
        }


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The fingerprint of one implementation: one `AxisResult` per option of SPEC.md 5.1."""

    info: ImplementationInfo
    axes: tuple[AxisResult, ...]
    #: Wall-clock time of the whole fingerprint, requests and reference included.
    seconds: float
    #: Distinct stream requests sent to the implementation.
    requests: int

    def axis(self, option: str) -> AxisResult:
        return next(axis for axis in self.axes if axis.option == option)

    def follows(self) -> dict[str, str]:
        """Option -> the value followed, as short display text (for tables)."""
        return {axis.option: format_value(axis.value) for axis in self.axes}

    def declared_options(self) -> dict[str, Any]:
        """The `options` object to declare in `hello` (JSON-shaped): each value found that
        differs from the default. An option that follows no single value is left out: no
        declaration makes such an implementation conform, so it keeps the default."""
        default = DEFAULT.to_json()
        return {
            axis.option: _json_value(axis.value)
            for axis in self.axes
            if axis.found and _json_value(axis.value) != default[axis.option]
        }

    @property
    def consistent(self) -> bool:
        """Whether every option follows one value and it is the declared one."""
        return all(axis.agrees for axis in self.axes)

    def to_json(self) -> dict[str, Any]:
        return {
            "implementation": self.info.to_json(),
            "seconds": round(self.seconds, 4),
            "requests": self.requests,
            "consistent": self.consistent,
            "declare": self.declared_options(),
            "axes": [axis.to_json() for axis in self.axes],
        }


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


def delimiter_probes(context: Options) -> list[Probe]:
    # The open delimiter first: inside or outside at the start, it leads to the same state.
    return [
        Probe(_pair_probe_name(pair), _stream(pair, _pair_probe_name(pair))) for pair in KNOWN_PAIRS
    ]


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
}


# --- deciding -----------------------------------------------------------------------------------


def fingerprint(connection: Connection) -> Fingerprint:
    """Probe a live implementation and decide the value it follows for every option.

    Sends a few dozen small stream requests, in a handful of batches; the connection stays
    open."""
    started = time.perf_counter()
    replies: dict[tuple[Chunk, ...], Reply] = {}
    declared = Options.from_mapping(connection.info.options).to_json()
    decided: dict[str, Any] = {}
    axes: dict[str, AxisResult] = {}
    for option in ORDER:
        context = Options(**{**_defaults(), **decided})
        probes = PROBES[option](context)
        _ask(connection, [probe.chunks for probe in probes], replies)
        free = [name for name in ORDER if name != option and name not in decided]
        results = tuple(
            _probe_result(probe, replies[probe.chunks], option, context, free) for probe in probes
        )
        result = AxisResult(option, _decide(option, results), declared[option], results)
        axes[option] = result
        if result.found:
            decided[option] = result.value
    return Fingerprint(
        connection.info,
        tuple(axes[name] for name in OPTION_NAMES),
        time.perf_counter() - started,
        len(replies),
    )


def _defaults() -> dict[str, Any]:
    return {name: getattr(DEFAULT, name) for name in OPTION_NAMES}


def _ask(
    connection: Connection,
    streams: Sequence[tuple[Chunk, ...]],
    replies: dict[tuple[Chunk, ...], Reply],
) -> None:
    """Send the streams not asked yet, in one batch (pipelined for `cmd:`)."""
    missing = list(dict.fromkeys(chunks for chunks in streams if chunks not in replies))
    if missing:
        answers = connection.send([StreamRequest(chunks) for chunks in missing])
        replies.update(zip(missing, answers, strict=True))


def _probe_result(
    probe: Probe, reply: Reply, option: str, context: Options, free: Sequence[str]
) -> ProbeResult:
    """Judge one probe: under each value of `option`, the reference's possible outputs (the
    options in `free`, not decided yet, take every value) against the implementation's."""
    chunks = [chunk.to_json() for chunk in probe.chunks]
    expected = []
    for value in CHOICES[option]:
        outputs: dict[str, dict[str, str]] = {}
        for combo in itertools.product(*(CHOICES[name] for name in free)):
            options = replace(context, **{option: value, **dict(zip(free, combo, strict=True))})
            channels = dict(join(normalize_stream(chunks, options)))
            outputs.setdefault(json.dumps(channels), channels)
        expected.append((value, tuple(outputs.values())))
    problem = _problem(reply)
    if not isinstance(reply, Ok) or reply.deltas is None:
        return ProbeResult(probe.name, probe.chunks, None, problem, tuple(expected), ())
    actual = dict(join(reply.deltas))
    matches = tuple(
        value
        for value, outputs in expected
        if any(_agrees(channels, actual) for channels in outputs)
    )
    return ProbeResult(probe.name, probe.chunks, actual, None, tuple(expected), matches)


def _agrees(expected: Mapping[str, str], actual: Mapping[str, str]) -> bool:
    """Equal, or equal but for whitespace (SPEC.md 8.2): trimming is not a policy."""
    return compare(Channels(**expected), actual, "must").verdict != Verdict.FAIL


def _problem(reply: Reply) -> str | None:
    return None if isinstance(reply, Ok) else reply.problem


def _decide(option: str, probes: Sequence[ProbeResult]) -> Any:
    """The value every answered, discriminating probe agrees with; or why there is none."""
    useful = [p for p in probes if p.problem is None and p.discriminating]
    if not useful:
        return UNDETERMINED
    if any(not p.matches for p in useful):
        return NONE
    common = set.intersection(*(set(p.matches) for p in useful))
    if len(common) == 1:
        return common.pop()
    if option == "delimiters" and not common:
        return _recognised_pairs(useful)
    return INCONSISTENT if not common else UNDETERMINED


def _recognised_pairs(probes: Sequence[ProbeResult]) -> Any:
    """No named grammar fits: the pairs whose probe was recognised form a custom grammar
    (e.g. `<think>` and `[THINK]` both), provided each probe clearly was or was not."""
    recognised = []
    for probe in probes:
        pair = _probe_pair(probe)
        with_pair = {preset for preset in probe.matches if pair in PRESETS[preset]}
        if with_pair and len(with_pair) < len(probe.matches):
            return INCONSISTENT  # agrees both with grammars that have it and that do not
        if with_pair:
            recognised.append(pair)
    return tuple(recognised) if recognised else NONE


def _probe_pair(probe: ProbeResult) -> tuple[str, str]:
    """The delimiter pair a delimiters probe is about."""
    return next(pair for pair in KNOWN_PAIRS if probe.name == _pair_probe_name(pair))


def _pair_probe_name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}a{pair[1]}b"


# --- display ----------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [{"open": o, "close": c} for o, c in value]
    return value


def format_value(value: Any) -> str:
    """An option value as short text: `true`, `merge`, `custom: <think>, [THINK]`."""
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "custom: " + ", ".join(o for o, _ in value)
    return str(value)


def _show_chunks(chunks: Stream) -> str:
    """Chunks in the notation of SPEC.md 1.5: a string for a content-only chunk, else an
    object without its null fields."""
    items = [
        chunk.content
        if chunk.reasoning is None
        else {k: v for k, v in chunk.to_json().items() if v is not None}
        for chunk in chunks
    ]
    return json.dumps(items, ensure_ascii=False)


def _key(outputs: Sequence[Mapping[str, str]]) -> str:
    return json.dumps(sorted(json.dumps(dict(channels), sort_keys=True) for channels in outputs))


def _show(channels: Mapping[str, str] | None) -> str:
    if channels is None:
        return "-"
    return f"{channels['assistant']!r} | {channels['thinking']!r}"


def _evidence(axis: AxisResult, markdown: bool = False) -> str:
    """One line per probe: what its output agreed with (a `<br>`-joined cell in Markdown)."""
    lines = []
    for probe in axis.probes:
        if probe.problem is not None:
            verdict = probe.problem
        elif not probe.discriminating:
            verdict = "(same under every value)"
        elif not probe.matches:
            verdict = "no value"
        elif axis.option == "delimiters":
            verdict = _recognition(probe)
        else:
            verdict = ", ".join(format_value(value) for value in probe.matches)
        name = f"`{probe.name}`" if markdown else probe.name
        lines.append(f"{name}: {verdict}")
    if markdown:
        return "<br>".join(line.replace("|", "\\|") for line in lines)
    return "\n".join(lines)


def _recognition(probe: ProbeResult) -> str:
    """A delimiter probe's verdict in words: was its pair recognised?"""
    pair = _probe_pair(probe)
    having = [value in probe.matches for value in CHOICES["delimiters"] if pair in PRESETS[value]]
    lacking = [
        value in probe.matches for value in CHOICES["delimiters"] if pair not in PRESETS[value]
    ]
    if any(having) and not any(lacking):
        return "recognised"
    if any(lacking) and not any(having):
        return "not recognised"
    return "unclear"


def render_fingerprint(fp: Fingerprint, format_: str = "text") -> str:
    """The fingerprint as text (a table, the probes of each option that is not as declared,
    the options to declare), as Markdown (the same, for a pull request), or as JSON."""
    if format_ == "json":
        return json.dumps(fp.to_json(), ensure_ascii=False, indent=1) + "\n"
    markdown = format_ == "markdown"

    def value(text: str) -> str:
        return f"`{text}`" if markdown else text

    info = fp.info
    rows = [
        [
            axis.option,
            value(format_value(_from_json(axis.declared))),
            value(format_value(axis.value)),
            "yes" if axis.agrees else "NO",
            _evidence(axis, markdown),
        ]
        for axis in fp.axes
    ]
    table = tabulate(
        rows,
        headers=["option", "declared", "follows", "agrees", "probes"],
        tablefmt="github" if markdown else "simple",
    )
    details = _details(fp)
    verdict = []
    if not fp.consistent:
        verdict.append(
            "the implementation does not do what it declares"
            if all(axis.found for axis in fp.axes)
            else "some options follow no single value: no declaration makes them conform"
        )
    declare = f"options to declare: {json.dumps(fp.declared_options(), ensure_ascii=False)}"
    head = (
        f"{info.label}: {info.name} {info.version} ({info.language}), {fp.requests} probes "
        f"in {fp.seconds:.2f} s"
    )
    if markdown:
        fenced = ["```text", *details, *([""] if details else []), declare, "```"]
        out = [head, "", table, "", *fenced, *([""] if verdict else []), *verdict]
    else:
        out = [head, "", table, *(["", *details] if details else []), "", declare, *verdict]
    return "\n".join(out) + "\n"


def _details(fp: Fingerprint) -> list[str]:
    """For each option not followed as declared: every probe, what the implementation gave,
    and what the reference gives under each value."""
    out: list[str] = []
    for axis in fp.axes:
        if axis.agrees:
            continue
        if out:
            out.append("")
        out.append(f"{axis.option}: follows {format_value(axis.value)}; the probes:")
        for probe in axis.probes:
            out.append(f"  {probe.name}: {_show_chunks(probe.chunks)}")
            out.append(f"    got               {probe.problem or _show(probe.actual)}")
            for candidate, outputs in probe.expected:
                mark = "  <- agrees" if candidate in probe.matches else ""
                shown = " or ".join(_show(channels) for channels in outputs)
                out.append(f"    {format_value(candidate):<17} {shown}{mark}")
    return out


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return tuple((pair["open"], pair["close"]) for pair in value)
    return value
