"""What the user named with `--impl`: a label, how to reach it, the options to run it under."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.errors import ImplementationStartError, UsageError
from conformance.model.options import Options, OptionsError

DEFAULT_TIMEOUT = 5.0
#: Seconds an implementation may take to start (`--start-timeout`): apart from the request
#: timeout, and generous, because real libraries import slowly (LiteLLM and transformers
#: take tens of seconds on a cold cache) and a start is paid once per run.
DEFAULT_START_TIMEOUT = 120.0
#: The longest per-request timeout accepted: an hour is already no limit for one request.
MAX_TIMEOUT = 3600.0
KINDS = ("python:", "python-isolated:", "cmd:")


@dataclass(frozen=True, slots=True)
class ImplementationSpec:
    """What the user named: a label, how to reach it, and options to run it under."""

    label: str
    spec: str
    #: Options the user sets, overriding what the implementation declares.
    options: Mapping[str, Any] | None = None


def parse_impl(text: str, options: Mapping[str, Any] | None = None) -> ImplementationSpec:
    """`NAME=SPEC` or `SPEC`; the label defaults to the spec's last word."""
    label, spec = "", text
    head, sep, tail = text.partition("=")
    if sep and head and not head.startswith(KINDS) and " " not in head:
        label, spec = head, tail
    if not (spec == "reference" or spec.startswith(KINDS)):
        raise UsageError(
            f"--impl {text!r}: an implementation is `reference`, `python:module:attr`, "
            "`python-isolated:module:attr` or `cmd:<command line>`, optionally prefixed "
            "with `NAME=`"
        )
    if not label:
        label = "reference" if spec == "reference" else _default_label(spec)
    return ImplementationSpec(label, spec, options)


def _default_label(spec: str) -> str:
    kind, _, rest = spec.partition(":")
    if kind in ("python", "python-isolated"):
        return rest.rpartition(":")[2] or rest
    # The last word naming something before the first long option: the program, or the
    # module after `-m` (option values, JSON above all, make poor labels).
    words: list[str] = []
    for word in command_words(spec, rest):
        if word.startswith("--"):
            break
        if not word.startswith("-"):
            words.append(word)
    return words[-1].rsplit("/", 1)[-1] if words else "cmd"


def parse_options(text: str) -> dict[str, Any]:
    """A `--options` value: a JSON object of option values, checked against the spec."""
    try:
        values = json.loads(text)
    except ValueError as error:
        raise UsageError(f"--options {text!r} is not JSON: {error}") from None
    if not isinstance(values, dict):
        raise UsageError(f"--options must be a JSON object, not {text!r}")
    try:
        Options.from_mapping(values)
    except OptionsError as error:
        raise UsageError(f"--options: {error}") from None
    return values


def effective_options(spec: ImplementationSpec, declared: Mapping[str, Any]) -> Options:
    """The options an implementation runs under: what it declares, overridden by the user."""
    try:
        return Options.from_mapping({**declared, **(spec.options or {})})
    except OptionsError as error:
        raise ImplementationStartError(spec.label, f"bad options: {error}") from None


def command_words(spec: str, command: str) -> list[str]:
    """The words of a `cmd:` command line, split as a POSIX shell would."""
    try:
        return shlex.split(command)
    except ValueError as error:
        raise UsageError(
            f"--impl {spec!r}: cannot split the command into words ({error}); close every "
            "quote, or escape a lone one with a backslash"
        ) from None


def check_timeout(seconds: float, flag: str = "--timeout", per: str = "per request") -> float:
    """A timeout: a finite number of seconds above 0 and at most MAX_TIMEOUT."""
    if not (0 < seconds <= MAX_TIMEOUT):  # also refuses NaN
        raise UsageError(
            f"{flag} {seconds:g}: give seconds {per}, more than 0 and at most {MAX_TIMEOUT:g}"
        )
    return float(seconds)


def check_start_timeout(seconds: float) -> float:
    return check_timeout(seconds, "--start-timeout", "to start")
