"""Which model-family profiles (SPEC.md 5.9) a fingerprint's option values are: those equal
in every option found, else the closest ones and the options where they differ.

Delimiter lists and tool markers compare as sets (the probes find them in their own order),
a named grammar as its pairs. `atomic_delimiters` is no behaviour a probe can see: the
families are compared without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.model.families import FAMILIES
from conformance.model.grammar import PRESETS
from conformance.model.options import Options


@dataclass(frozen=True, slots=True)
class FamilyMatch:
    """A family profile and, per option where the values found differ from it, (found, its)."""

    name: str
    differences: Mapping[str, tuple[Any, Any]]

    def to_json(self, json_value: Callable[[Any], Any]) -> dict[str, Any]:
        return {
            "profile": self.name,
            "differences": {
                option: {"found": json_value(found), "profile": json_value(theirs)}
                for option, (found, theirs) in self.differences.items()
            },
        }


def family_matches(found: Mapping[str, Any]) -> tuple[tuple[FamilyMatch, ...], bool]:
    """The families whose values equal `found` (option -> value) in every option, and True;
    or when none does, those that differ in the fewest options, and False."""
    matches = []
    for name in FAMILIES:
        profile = Options.from_mapping({"profile": name})
        differences = {
            option: (value, getattr(profile, option))
            for option, value in found.items()
            if not _same(value, getattr(profile, option))
        }
        matches.append(FamilyMatch(name, differences))
    fewest = min(len(match.differences) for match in matches)
    closest = tuple(match for match in matches if len(match.differences) == fewest)
    return closest, fewest == 0


def _same(found: Any, theirs: Any) -> bool:
    if isinstance(found, tuple) or isinstance(theirs, tuple):
        return _as_set(found) == _as_set(theirs)
    return bool(found == theirs and type(found) is type(theirs))


def _as_set(value: Any) -> frozenset[Any] | None:
    if isinstance(value, str):
        return frozenset(PRESETS[value]) if value in PRESETS else None
    return frozenset(value)
