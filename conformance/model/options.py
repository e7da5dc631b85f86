"""The policy options of SPEC.md section 5: names, defaults, allowed values, parsing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from conformance.errors import UsageError
from conformance.model import harmony
from conformance.model.families import FAMILIES
from conformance.model.grammar import (
    MAX_DELIMITER_LENGTH,
    MAX_PAIRS,
    PRESETS,
    Grammar,
    compile_grammar,
)

Pairs = tuple[tuple[str, str], ...]

#: Values each option may take (the delimiters option also takes a list of pairs, and
#: tool_markers a list of strings: its value here is the default, the empty list).
CHOICES: dict[str, tuple[Any, ...]] = {
    "delimiters": tuple(PRESETS),
    "matching": ("exact", "tolerant"),
    "start_in_reasoning": (False, True),
    "native_with_tags": ("native_only", "merge"),
    "unclosed_at_end": ("thinking", "drop"),
    "tool_markers": ((),),
    "sections": ("many", "one"),
    "atomic_delimiters": (False, True),
    "framing": ("tags", "harmony"),
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
    "tool_markers": ((),),
    "sections": ("many",),
    # Whether a chunk boundary may fall inside a delimiter changes which chunkings a check
    # feeds, never what an input means: every case holds under both values.
    "atomic_delimiters": (False, True),
    "framing": ("tags",),
}


#: Option values already checked (bounded: the profiles of a run and of `conformance check`).
_VALID: set[tuple[Any, ...]] = set()
_VALID_SIZE = 256


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
    tool_markers: tuple[str, ...] = ()
    sections: str = "many"
    atomic_delimiters: bool = False
    framing: str = "tags"
    #: The model-family profile these values came from (SPEC.md 5.9), for reports: it names
    #: the values, it is not one of them (two profiles with equal values are equal).
    profile: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # The public constructor checks what `from_mapping` and every other entry check: a
        # grammar they refuse (a delimiter that is a prefix of another, an empty one) has no
        # defined scan, and the C and regular-expression scans part ways on it.
        if self.profile is not None and self.profile not in FAMILIES:
            raise OptionsError(_unknown_profile(self.profile))
        # Types too: `1 == True`, and 1 is no boolean option's value.
        values = tuple((getattr(self, name), type(getattr(self, name))) for name in OPTION_NAMES)
        try:
            if values in _VALID:
                return  # derivation and the checker make many copies of a few profiles
        except TypeError:
            pass  # a list given for a tuple: checked, and made a tuple, below
        for name in OPTION_NAMES:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))
        if self.tool_markers:
            _prefix_free([d for pair in self.pairs for d in pair] + list(self.tool_markers))
        if self.framing == "harmony":
            ignored = [
                name
                for name in ("delimiters", "matching", "tool_markers", "sections")
                if getattr(self, name) != getattr(DEFAULT_VALUES, name)
            ]
            if ignored:
                raise OptionsError(
                    f"framing 'harmony' has its own tokens and tool calls: {', '.join(ignored)} "
                    "cannot be set with it"
                )
        if len(_VALID) < _VALID_SIZE:
            _VALID.add(tuple((getattr(self, n), type(getattr(self, n))) for n in OPTION_NAMES))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> Options:
        """Build from a JSON-shaped mapping; omitted keys take the default, or the values of
        the family profile it names (`{"profile": "qwen3", ...}`)."""
        return DEFAULT.updated(values or {})

    def updated(self, values: Mapping[str, Any]) -> Options:
        """These options with `values` changed. A `profile` key starts from that family's
        values (SPEC.md 5.9); the other keys then override them."""
        base = self
        if "profile" in values:
            name = values["profile"]
            if not isinstance(name, str) or name not in FAMILIES:
                raise OptionsError(_unknown_profile(name))
            base = replace(DEFAULT.updated(FAMILIES[name].options), profile=name)
        changes: dict[str, Any] = {}
        for name, value in values.items():
            if name == "profile":
                continue
            if name not in CHOICES:
                known = ", ".join([*CHOICES, "profile"])
                raise OptionsError(f"unknown option {name!r}; the options are {known}")
            changes[name] = _checked(name, value)
        return replace(base, **changes)

    @property
    def pairs(self) -> Pairs:
        """The delimiter pairs of blocks: under harmony framing, an analysis message."""
        if self.framing == "harmony":
            return (harmony.BLOCK_PAIR,)
        if isinstance(self.delimiters, str):
            return PRESETS[self.delimiters]
        return self.delimiters

    @property
    def grammar(self) -> Grammar:
        """What the normalizer scans for: the delimiters and tool markers, or under harmony
        framing its special tokens."""
        if self.framing == "harmony":
            return harmony.token_grammar()
        return compile_grammar(self.pairs, self.matching == "tolerant", self.tool_markers)

    @property
    def block_grammar(self) -> Grammar:
        """The grammar of `pairs` alone: what renaming a case's blocks looks for."""
        return compile_grammar(self.pairs, self.matching == "tolerant")

    def to_json(self) -> dict[str, Any]:
        # Strings, booleans and tuples of them: no deep copy (asdict) needed.
        data = {name: getattr(self, name) for name in OPTION_NAMES}
        if not isinstance(self.delimiters, str):
            data["delimiters"] = [{"open": o, "close": c} for o, c in self.delimiters]
        data["tool_markers"] = list(self.tool_markers)
        if self.profile is not None:
            data["profile"] = self.profile
        return data

    def given(self) -> dict[str, Any]:
        """These options as `--options` would give them: the model-family profile they came
        from and the values that differ from its own, or without a profile the values that
        differ from the default."""
        if self.profile is None:
            return self.differences()
        base = DEFAULT.updated({"profile": self.profile}).to_json()
        changed = {name: value for name, value in self.to_json().items() if value != base[name]}
        return {"profile": self.profile, **changed}

    def differences(self) -> dict[str, Any]:
        """The options that differ from the default, JSON-shaped (the profile's name aside)."""
        data = self.to_json()
        default = DEFAULT.to_json()
        return {
            name: value
            for name, value in data.items()
            if name != "profile" and value != default[name]
        }


def normalized(name: str, value: Any) -> Any:
    """A JSON-shaped option value as an `Options` field holds it (a delimiters list as a
    tuple of pairs, tool markers as a tuple), for comparing a case's `when` with a profile."""
    if name == "delimiters" and isinstance(value, list | tuple):
        return _pairs(value)
    if name == "tool_markers" and isinstance(value, list | tuple):
        return _markers(value)
    return value


def expanded(when: Mapping[str, Any]) -> dict[str, Any]:
    """A case variant's `when` as the `Options` values it names: a `profile` stands for
    every value of that family (the other keys override them)."""
    values = {name: normalized(name, value) for name, value in when.items() if name != "profile"}
    if "profile" not in when:
        return values
    family = DEFAULT.updated({"profile": when["profile"]})
    # Whether the family's delimiters are atomic changes the chunkings fed, never what an
    # input means: the variant holds under both values, and `conformance check` proves it
    # under the one it enumerates.
    named = (name for name in OPTION_NAMES if name != "atomic_delimiters")
    return {**{name: getattr(family, name) for name in named}, **values}


def _unknown_profile(name: Any) -> str:
    names = ", ".join(FAMILIES)
    return f"unknown profile {name!r}; the profiles are {names} (`conformance profiles`)"


def _checked(name: str, value: Any) -> Any:
    if name == "delimiters" and isinstance(value, list | tuple):
        return _pairs(value)
    if name == "tool_markers":
        if not isinstance(value, list | tuple):
            raise OptionsError(f"option 'tool_markers' must be a list of strings, not {value!r}")
        return _markers(value)
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
    _prefix_free([d for pair in pairs for d in pair])
    return tuple(pairs)


def _markers(value: list[Any] | tuple[Any, ...]) -> tuple[str, ...]:
    if len(value) > MAX_PAIRS:
        raise OptionsError(f"option 'tool_markers' has {len(value)} markers; at most {MAX_PAIRS}")
    for marker in value:
        if not isinstance(marker, str) or not marker:
            raise OptionsError(f"a tool marker must be a non-empty string, not {marker!r}")
        if len(marker) > MAX_DELIMITER_LENGTH:
            raise OptionsError(
                f"a tool marker has {len(marker)} characters; at most {MAX_DELIMITER_LENGTH} "
                "are allowed"
            )
    return tuple(dict.fromkeys(value))


def _prefix_free(strings: list[str]) -> None:
    for shorter, longer in itertools.pairwise(sorted(set(strings))):
        # Sorted order puts a string right before the strings it is a prefix of.
        if longer.startswith(shorter):
            raise OptionsError(
                f"delimiter {shorter!r} is a prefix of {longer!r}: a stream could not tell "
                "them apart until later input, so a grammar may not contain both"
            )


OPTION_NAMES = tuple(f.name for f in fields(Options) if f.name != "profile")
DEFAULT = Options()
DEFAULT_VALUES = DEFAULT


def enumerated_profiles() -> Iterator[Options]:
    """Every combination of the enumerated option values that can change an expectation
    (atomic delimiters only change the chunkings fed: proving both would prove one twice)."""
    values = {**ENUMERATED, "atomic_delimiters": (False,)}
    for combo in itertools.product(*(values[name] for name in OPTION_NAMES)):
        yield Options(**dict(zip(OPTION_NAMES, combo, strict=True)))


def is_enumerated(options: Options) -> bool:
    return all(getattr(options, name) in ENUMERATED[name] for name in OPTION_NAMES)
