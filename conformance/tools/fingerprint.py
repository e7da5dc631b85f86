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

Last, the values found are compared with the model-family profiles (SPEC.md 5.9,
`fingerprint_families`): the families with those values, or the closest ones.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance.model.chunks import Channels, Chunk
from conformance.model.judge import compare
from conformance.model.options import (
    CHOICES,
    DEFAULT,
    OPTION_NAMES,
    Options,
    OptionsError,
    Pairs,
)
from conformance.model.requests import Ok, Reply, StreamRequest
from conformance.model.results import ImplementationInfo, Verdict
from conformance.reference import join, normalize_stream
from conformance.tools.fingerprint_families import FamilyMatch, family_matches
from conformance.tools.fingerprint_probes import (
    FAMILY_GRAMMARS,
    FAMILY_PAIRS,
    KNOWN_PAIRS,
    MARKERS,
    PROBES,
    Probe,
    marker_probe,
    pair_probe,
)
from conformance.tools.fingerprint_results import (
    INCONSISTENT,
    NONE,
    UNDETERMINED,
    AxisResult,
    ProbeResult,
    format_value,
    items_of,
    json_value,
)
from conformance.transport.connections import Connection

#: The order options are decided in, after the framing. Delimiter probes begin with an open
#: delimiter, which makes them independent of start_in_reasoning; the delimiters found build
#: the other probes. Tool markers come last, with every other option found.
ORDER = (
    "delimiters",
    "sections",
    "start_in_reasoning",
    "unclosed_at_end",
    "native_with_tags",
    "matching",
)
#: The policy options of SPEC.md 5.1-5.5, in the order SPEC.md lists them.
PROBED = ("delimiters", "matching", "start_in_reasoning", "native_with_tags", "unclosed_at_end")
#: Every option a fingerprint finds: the policy options and those of the model-family
#: profiles (SPEC.md 5.7, 5.8, 5.10). Whether chunk boundaries fall inside delimiters
#: (`atomic_delimiters`) is not a behaviour: probes send every delimiter whole.
AXES = tuple(name for name in OPTION_NAMES if name != "atomic_delimiters")
#: What harmony framing has its own way of doing (SPEC.md 5.8): not options under it.
FRAMED = ("delimiters", "matching", "tool_markers", "sections")


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The fingerprint of one implementation: one `AxisResult` per option of AXES."""

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

    def findings(self) -> dict[str, dict[str, Any]]:
        """Option -> what it follows (display text) and whether that is what it declares:
        what a results document keeps of the fingerprint."""
        return {
            axis.option: {"follows": format_value(axis.value), "agrees": axis.agrees}
            for axis in self.axes
        }

    def declared_options(self) -> dict[str, Any]:
        """The `options` object to declare in `hello` (JSON-shaped): each value found that
        differs from the default. An option that follows no single value is left out: no
        declaration makes such an implementation conform, so it keeps the default."""
        default = DEFAULT.to_json()
        return {
            axis.option: json_value(axis.value)
            for axis in self.axes
            if axis.found and json_value(axis.value) != default[axis.option]
        }

    @property
    def consistent(self) -> bool:
        """Whether every option follows one value and it is the declared one."""
        return all(axis.agrees for axis in self.axes)

    def families(self) -> tuple[tuple[FamilyMatch, ...], bool]:
        """The model-family profiles whose values are those found, and whether they match
        exactly (else the closest ones, with the options that differ)."""
        return family_matches({axis.option: axis.value for axis in self.axes})

    def to_json(self) -> dict[str, Any]:
        matches, exact = self.families()
        return {
            "implementation": self.info.to_json(),
            "seconds": round(self.seconds, 4),
            "requests": self.requests,
            "consistent": self.consistent,
            "declare": self.declared_options(),
            "families": {
                "exact": exact,
                "matches": [match.to_json(json_value) for match in matches],
            },
            "axes": [axis.to_json() for axis in self.axes],
        }


# --- deciding -----------------------------------------------------------------------------------


def fingerprint(connection: Connection) -> Fingerprint:
    """Probe a live implementation and decide the value it follows for every option.

    Sends a few dozen small stream requests, in a handful of batches; the connection stays
    open."""
    started = time.perf_counter()
    prober = _Prober(connection, Options.from_mapping(connection.info.options))
    # The framing first: under harmony the delimiters, matching, markers and sections are
    # its own, and the other probes are built from its analysis message.
    prober.decide("framing", PROBES["framing"](DEFAULT), ORDER)
    if prober.decided.get("framing") == "harmony":
        for option in FRAMED:
            prober.fix(option)
    for option in ORDER:
        if option in prober.axes:
            continue
        probes = PROBES[option](prober.context())
        if option == "delimiters":
            known = {*KNOWN_PAIRS, *FAMILY_PAIRS}
            probes += [pair_probe(pair) for pair in prober.custom if pair not in known]
        prober.decide(option, probes, prober.free(option))
    if "tool_markers" not in prober.axes:
        prober.decide_markers()
    return Fingerprint(
        connection.info,
        tuple(prober.axes[name] for name in AXES),
        time.perf_counter() - started,
        len(prober.replies),
    )


class _Prober:
    """What a fingerprint has asked and decided so far."""

    def __init__(self, connection: Connection, declared: Options) -> None:
        self.connection = connection
        self.replies: dict[tuple[Chunk, ...], Reply] = {}
        self.declared = declared.to_json()
        # A declared custom grammar is a candidate too, and its pairs are probed: a custom
        # grammar is recovered from pairs the probes know, and a delimiter no probe knows is
        # text to every named grammar. Declared tool markers are probed too.
        self.custom: Pairs = () if isinstance(declared.delimiters, str) else declared.delimiters
        self.markers = tuple(dict.fromkeys((*MARKERS, *declared.tool_markers)))
        self.decided: dict[str, Any] = {}
        self.axes: dict[str, AxisResult] = {}

    def context(self) -> Options:
        return Options(**{**_defaults(), **self.decided})

    def free(self, option: str) -> list[str]:
        """The options not decided yet, besides `option`: they take every value."""
        return [name for name in ORDER if name != option and name not in self.decided]

    def fix(self, option: str) -> None:
        """An option the framing decides: its default, with nothing to probe."""
        value = getattr(DEFAULT, option)
        self.axes[option] = AxisResult(option, value, self.declared[option], ())
        self.decided[option] = value

    def decide(self, option: str, probes: Sequence[Probe], free: Sequence[str]) -> None:
        context = self.context()
        values = candidates(option, self.custom)
        results = tuple(
            _probe_result(probe, reply, option, context, free, values)
            for probe, reply in zip(probes, self.ask(probes), strict=True)
        )
        self.record(AxisResult(option, _decide(option, results), self.declared[option], results))

    def decide_markers(self) -> None:
        """Each marker has a probe of its own, decided between without it and with it."""
        context = self.context()
        free = self.free("tool_markers")
        probes = [marker_probe(context, marker) for marker in self.markers]
        results = tuple(
            _probe_result(probe, reply, "tool_markers", context, free, ((), (probe.about,)))
            for probe, reply in zip(probes, self.ask(probes), strict=True)
        )
        value = _recognised(results)
        self.record(AxisResult("tool_markers", value, self.declared["tool_markers"], results))

    def record(self, axis: AxisResult) -> None:
        self.axes[axis.option] = axis
        if axis.found:
            self.decided[axis.option] = axis.value

    def ask(self, probes: Sequence[Probe]) -> list[Reply]:
        """Send the streams not asked yet, in one batch (pipelined for `cmd:`)."""
        missing = list(dict.fromkeys(p.chunks for p in probes if p.chunks not in self.replies))
        if missing:
            answers = self.connection.send([StreamRequest(chunks) for chunks in missing])
            self.replies.update(zip(missing, answers, strict=True))
        return [self.replies[probe.chunks] for probe in probes]


def _defaults() -> dict[str, Any]:
    return {name: getattr(DEFAULT, name) for name in OPTION_NAMES}


def candidates(option: str, custom: Pairs = ()) -> tuple[Any, ...]:
    """The values an option is decided among: its named values, and for the delimiters the
    model families' grammars and a declared custom one."""
    if option == "delimiters":
        return tuple(dict.fromkeys((*CHOICES[option], *FAMILY_GRAMMARS, *filter(None, [custom]))))
    return CHOICES[option]


def _probe_result(
    probe: Probe,
    reply: Reply,
    option: str,
    context: Options,
    free: Sequence[str],
    values: Sequence[Any],
) -> ProbeResult:
    """Judge one probe: under each of the `values` of `option`, the reference's possible
    outputs (the options in `free`, not decided yet, take every value they can take with
    it) against the implementation's."""
    expected = tuple(
        (value, tuple(map(dict, _outputs(probe.chunks, context, option, value, tuple(free)))))
        for value in values
    )
    problem = _problem(reply)
    if not isinstance(reply, Ok) or reply.deltas is None:
        return ProbeResult(probe.name, probe.chunks, None, problem, expected, (), probe.about)
    actual = dict(join(reply.deltas))
    matches = tuple(
        value
        for value, outputs in expected
        if any(_agrees(channels, actual) for channels in outputs)
    )
    return ProbeResult(probe.name, probe.chunks, actual, None, expected, matches, probe.about)


@functools.lru_cache(maxsize=1 << 14)
def _outputs(
    chunks: tuple[Chunk, ...], context: Options, option: str, value: Any, free: tuple[str, ...]
) -> tuple[tuple[tuple[str, str], ...], ...]:
    """The reference's distinct channels for a probe under `context` with `option` at
    `value`, the `free` options at every value they can take with it. Remembered: every
    fingerprint asks the same thousands (the delimiter probes are the same for all)."""
    chunk_json = [chunk.to_json() for chunk in chunks]
    outputs: dict[tuple[tuple[str, str], ...], None] = {}
    for combo in itertools.product(*(CHOICES[name] for name in free)):
        try:
            options = replace(context, **{option: value, **dict(zip(free, combo, strict=True))})
        except OptionsError:
            continue  # harmony framing with a delimiter list, say: not a policy at all
        outputs.setdefault(tuple(join(normalize_stream(chunk_json, options)).items()), None)
    return tuple(outputs)


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
        found = _recognised(useful)
        return NONE if found == () else found
    return INCONSISTENT if not common else UNDETERMINED


def _recognised(probes: Sequence[ProbeResult]) -> Any:
    """The items (delimiter pairs, tool markers) whose probe was recognised, as a list:
    without a named value that fits, the pairs form a custom grammar (e.g. `<think>` and
    `[THINK]` both), provided each probe clearly was or was not recognised."""
    useful = [p for p in probes if p.problem is None and p.discriminating]
    if not useful:
        return UNDETERMINED
    recognised = []
    for probe in useful:
        with_item = {value for value in probe.matches if probe.about in items_of(value)}
        if not probe.matches:
            return NONE
        if with_item and len(with_item) < len(probe.matches):
            return INCONSISTENT  # agrees both with values that have it and that do not
        if with_item:
            recognised.append(probe.about)
    return tuple(recognised)
