"""The policy options of SPEC.md section 5: names, defaults, allowed values, parsing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from conformance.errors import UsageError
from conformance.model.grammar import (
    MAX_DELIMITER_LENGTH,
    MAX_PAIRS,
    PRESETS,
    Grammar,
    compile_grammar,
)

Pairs = tuple[tuple[str, str], ...]

#: Values each option may take (the delimiters option also takes a list of pairs).
CHOICES: dict[str, tuple[Any, ...]] = {
    "delimiters": tuple(PRESETS),
    "matching": ("exact", "tolerant"),
    "start_in_reasoning": (False, True),
    "native_with_tags": ("native_only", "merge"),
    "unclosed_at_end": ("thinking", "drop"),
}

#: Values a case need not mention: `conformance check` proves the case's default
#: expectation holds under them unless a variant says otherwise. Every other value is
#: opt-in: a case has an expectation for it only where a variant names it.
ENUMERATED: dict[str, tuple[Any, ...]] = {
    "delimiters": ("think", "extended"),
    "matching": ("exact", "tolerant"),
    "start_in_reasoning": (False,),
    "native_with_tags": ("native_only", "merge"),
    "unclosed_at_end": ("thinking", "drop"),
}


class OptionsError(UsageError, ValueError):
    """An option name or value outside SPEC.md section 5: exit status 2 (given with
    `--options`; declared by an implementation, it is that implementation's start failure)."""


@dataclass(frozen=True, slots=True)
class Options:
    """One policy: the spec's default profile unless a field says otherwise."""

    delimiters: str | Pairs = "think"
    matching: str = "exact"
    start_in_reasoning: bool = False
    native_with_tags: str = "native_only"
    unclosed_at_end: str = "thinking"

    def __post_init__(self) -> None:
        # The public constructor checks what `from_mapping` and every other entry check: a
        # grammar they refuse (a delimiter that is a prefix of another, an empty one) has no
        # defined scan, and the C and regular-expression scans part ways on it.
        for name in OPTION_NAMES:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> Options:
        """Build from a JSON-shaped mapping; omitted keys take the default."""
        return DEFAULT.updated(values or {})

    def updated(self, values: Mapping[str, Any]) -> Options:
        changes: dict[str, Any] = {}
        for name, value in values.items():
            if name not in CHOICES:
                raise OptionsError(f"unknown option {name!r}; the options are {', '.join(CHOICES)}")
            changes[name] = _checked(name, value)
        return replace(self, **changes)

    @property
    def pairs(self) -> Pairs:
        if isinstance(self.delimiters, str):
            return PRESETS[self.delimiters]
        return self.delimiters

    @property
    def grammar(self) -> Grammar:
        return compile_grammar(self.pairs, self.matching == "tolerant")

    def to_json(self) -> dict[str, Any]:
        # The fields are strings, booleans and the delimiters: no deep copy (asdict) needed.
        data = {name: getattr(self, name) for name in OPTION_NAMES}
        if not isinstance(self.delimiters, str):
            data["delimiters"] = [{"open": o, "close": c} for o, c in self.delimiters]
        return data

    def differences(self) -> dict[str, Any]:
        """The options that differ from the default, JSON-shaped."""
        data = self.to_json()
        default = DEFAULT.to_json()
        return {name: value for name, value in data.items() if value != default[name]}


def normalized(name: str, value: Any) -> Any:
    """A JSON-shaped option value as an `Options` field holds it (a delimiters list as a
    tuple of pairs), for comparing a case's `when` with a profile."""
    if name == "delimiters" and isinstance(value, list | tuple):
        return _pairs(value)
    return value


def _checked(name: str, value: Any) -> Any:
    if name == "delimiters" and isinstance(value, list | tuple):
        return _pairs(value)
    if value not in CHOICES[name] or type(value) is not type(CHOICES[name][0]):
        allowed = ", ".join(repr(v) for v in CHOICES[name])
        extra = " or a list of {open, close} pairs" if name == "delimiters" else ""
        raise OptionsError(f"option {name!r} cannot be {value!r}; use {allowed}{extra}")
    return value


def _pairs(value: list[Any] | tuple[Any, ...]) -> Pairs:
    # Bounded before anything else is done with them: a declared grammar must cost little to
    # refuse, however large.
    if len(value) > MAX_PAIRS:
        raise OptionsError(
            f"option 'delimiters' has {len(value)} pairs; at most {MAX_PAIRS} are allowed"
        )
    pairs = []
    for item in value:
        if isinstance(item, Mapping):
            item = (item.get("open"), item.get("close"))
        if (
            not isinstance(item, list | tuple)
            or len(item) != 2
            or not all(isinstance(d, str) and d for d in item)
        ):
            raise OptionsError(
                f"a delimiter pair must be {{'open': str, 'close': str}}, not {item!r}"
            )
        too_long = [d for d in item if len(d) > MAX_DELIMITER_LENGTH]
        if too_long:
            raise OptionsError(
                f"a delimiter has {len(too_long[0])} characters; at most "
                f"{MAX_DELIMITER_LENGTH} are allowed"
            )
        pairs.append((item[0], item[1]))
    if not pairs:
        raise OptionsError("option 'delimiters' needs at least one pair")
    delimiters = sorted({d for pair in pairs for d in pair})
    for shorter, longer in itertools.pairwise(delimiters):
        # Sorted order puts a string right before the strings it is a prefix of.
        if longer.startswith(shorter):
            raise OptionsError(
                f"delimiter {shorter!r} is a prefix of {longer!r}: a stream could not tell "
                "them apart until later input, so a grammar may not contain both"
            )
    return tuple(pairs)


OPTION_NAMES = tuple(f.name for f in fields(Options))
DEFAULT = Options()


def enumerated_profiles() -> Iterator[Options]:
    """Every combination of the enumerated option values."""
    for combo in itertools.product(*(ENUMERATED[name] for name in OPTION_NAMES)):
        yield Options(**dict(zip(OPTION_NAMES, combo, strict=True)))


def is_enumerated(options: Options) -> bool:
    return all(getattr(options, name) in ENUMERATED[name] for name in OPTION_NAMES)
