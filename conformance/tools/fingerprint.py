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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.model.chunks import Channels, Chunk
from conformance.model.grammar import PRESETS
from conformance.model.judge import compare
from conformance.model.options import CHOICES, DEFAULT, OPTION_NAMES, Options, Pairs
from conformance.model.requests import Ok, Reply, StreamRequest
from conformance.model.results import ImplementationInfo, Verdict
from conformance.reference import join, normalize_stream
from conformance.tools.fingerprint_probes import (
    KNOWN_PAIRS,
    PROBES,
    Probe,
    _pair_probe_name,
    _stream,
)
from conformance.transport.connections import Connection

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
#: The options a fingerprint probes, in the order SPEC.md lists them.
PROBED = tuple(name for name in OPTION_NAMES if name in ORDER)


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


# --- deciding -----------------------------------------------------------------------------------


def fingerprint(connection: Connection) -> Fingerprint:
    """Probe a live implementation and decide the value it follows for every option.

    Sends a few dozen small stream requests, in a handful of batches; the connection stays
    open."""
    started = time.perf_counter()
    replies: dict[tuple[Chunk, ...], Reply] = {}
    profile = Options.from_mapping(connection.info.options)
    declared = profile.to_json()
    # A declared custom grammar is a candidate too, and its pairs are probed: a custom
    # grammar is recovered from pairs the probes know, and a delimiter no probe knows is
    # text to every named grammar.
    custom = () if isinstance(profile.delimiters, str) else profile.delimiters
    decided: dict[str, Any] = {}
    axes: dict[str, AxisResult] = {}
    for option in ORDER:
        context = Options(**{**_defaults(), **decided})
        probes = PROBES[option](context)
        if option == "delimiters":
            probes += [
                Probe(_pair_probe_name(pair), _stream(pair, _pair_probe_name(pair)))
                for pair in custom
                if pair not in KNOWN_PAIRS
            ]
        _ask(connection, [probe.chunks for probe in probes], replies)
        free = [name for name in ORDER if name != option and name not in decided]
        results = tuple(
            _probe_result(probe, replies[probe.chunks], option, context, free, custom)
            for probe in probes
        )
        result = AxisResult(option, _decide(option, results), declared[option], results)
        axes[option] = result
        if result.found:
            decided[option] = result.value
    return Fingerprint(
        connection.info,
        tuple(axes[name] for name in PROBED),
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


def candidates(option: str, custom: Pairs = ()) -> tuple[Any, ...]:
    """The values an option is decided among: its named values, and a declared custom
    grammar for the delimiters."""
    if option == "delimiters" and custom:
        return (*CHOICES[option], custom)
    return CHOICES[option]


def pairs_of(value: Any) -> Pairs:
    return PRESETS[value] if isinstance(value, str) else value


def _probe_result(
    probe: Probe,
    reply: Reply,
    option: str,
    context: Options,
    free: Sequence[str],
    custom: Pairs = (),
) -> ProbeResult:
    """Judge one probe: under each value of `option`, the reference's possible outputs (the
    options in `free`, not decided yet, take every value) against the implementation's."""
    chunks = [chunk.to_json() for chunk in probe.chunks]
    expected = []
    for value in candidates(option, custom):
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
    placed = [p for p in useful if p.matches]
    if option == "start_in_reasoning" and len(placed) >= 2 and len(placed) < len(useful):
        # Where the stream starts shows in several probes; one that agrees with no value is
        # a bug elsewhere (an orphan close left visible, a second block left open), not a
        # reason to call the start unknown when the others agree.
        common = set.intersection(*(set(p.matches) for p in placed))
        if len(common) == 1:
            return common.pop()
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
        with_pair = {value for value in probe.matches if pair in pairs_of(value)}
        if with_pair and len(with_pair) < len(probe.matches):
            return INCONSISTENT  # agrees both with grammars that have it and that do not
        if with_pair:
            recognised.append(pair)
    return tuple(recognised) if recognised else NONE


def _probe_pair(probe: ProbeResult) -> tuple[str, str]:
    """The delimiter pair a delimiters probe is about."""
    return next(
        (o, c)
        for o, c in re.findall(r"(.+?)a(.+?)b$", probe.name)
        if probe.name == _pair_probe_name((o, c))
    )


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


def _key(outputs: Sequence[Mapping[str, str]]) -> str:
    return json.dumps(sorted(json.dumps(dict(channels), sort_keys=True) for channels in outputs))
