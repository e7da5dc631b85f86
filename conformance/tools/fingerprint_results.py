"""What a fingerprint found (`conformance.tools.fingerprint`): per probe its output and the
values it agrees with, per option the value followed or why there is none, and how values
are shown."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.model.chunks import Chunk
from conformance.model.grammar import PRESETS

#: Every probe agrees with some value, but no single value agrees with all of them.
INCONSISTENT = "inconsistent"
#: On at least one probe the output agrees with no value at all (e.g. an orphan close shown).
NONE = "none"
#: No probe could decide: each failed (error, timeout, unsupported) or agreed with every value.
UNDETERMINED = "undetermined"
NOT_FOUND = (INCONSISTENT, NONE, UNDETERMINED)


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
    #: The delimiter pair or the tool marker the probe is about (`Probe.about`).
    about: tuple[str, str] | str | None = None

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
                {"value": json_value(value), "outputs": [dict(c) for c in outputs]}
                for value, outputs in self.expected
            ],
            "matches": [json_value(value) for value in self.matches],
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
        return self.found and json_value(self.value) == self.declared

    def to_json(self) -> dict[str, Any]:
        return {
            "option": self.option,
            "follows": json_value(self.value),
            "declared": self.declared,
            "agrees": self.agrees,
            "probes": [probe.to_json() for probe in self.probes],
        }


def items_of(value: Any) -> tuple[Any, ...]:
    """The delimiter pairs of a grammar, or the markers of a tool markers value."""
    return PRESETS[value] if isinstance(value, str) else value


# --- display ----------------------------------------------------------------------------------


def json_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [
            item if isinstance(item, str) else {"open": item[0], "close": item[1]} for item in value
        ]
    return value


def format_value(value: Any) -> str:
    """An option value as short text: `true`, `merge`, `custom: <think>, [THINK]`, tool
    markers as `<tool_call>` or `none`."""
    if isinstance(value, bool):
        return json.dumps(value)
    if value == ():
        return "none"
    if isinstance(value, tuple) and isinstance(value[0], str):
        return ", ".join(value)
    if isinstance(value, tuple):
        return "custom: " + ", ".join(o for o, _ in value)
    return str(value)


def _key(outputs: Sequence[Mapping[str, str]]) -> str:
    return json.dumps(sorted(json.dumps(dict(channels), sort_keys=True) for channels in outputs))
