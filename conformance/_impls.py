"""Implementation specs (`reference`, `python:module:attr`, `cmd:command line`) -> connections."""

from __future__ import annotations

import importlib
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import __version__
from ._connections import Connection, InProcessConnection
from ._options import Options, OptionsError
from ._results import ImplementationInfo
from .errors import ImplementationStartError, UsageError
from .interface import metadata

DEFAULT_TIMEOUT = 5.0


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
    if sep and head and not head.startswith(("python:", "cmd:")) and " " not in head:
        label, spec = head, tail
    if not (spec == "reference" or spec.startswith(("python:", "cmd:"))):
        raise UsageError(
            f"--impl {text!r}: an implementation is `reference`, `python:module:attr` or "
            "`cmd:<command line>`, optionally prefixed with `NAME=`"
        )
    if not label:
        label = "reference" if spec == "reference" else _default_label(spec)
    return ImplementationSpec(label, spec, options)


def _default_label(spec: str) -> str:
    kind, _, rest = spec.partition(":")
    if kind == "python":
        return rest.rpartition(":")[2] or rest
    # The last word naming something before the first long option: the program, or the
    # module after `-m` (option values, JSON above all, make poor labels).
    words: list[str] = []
    for word in shlex.split(rest):
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


def connect(
    spec: ImplementationSpec, *, timeout: float = DEFAULT_TIMEOUT, validate_protocol: bool = False
) -> Connection:
    kind, _, rest = spec.spec.partition(":")
    if spec.spec == "reference":
        return _reference(spec)
    if kind == "python":
        return _python(spec, rest)
    from ._subprocess import SubprocessConnection

    argv = shlex.split(rest)
    if not argv:
        raise UsageError(f"--impl {spec.spec!r}: no command after `cmd:`")
    return SubprocessConnection(argv, spec, timeout=timeout, validate_protocol=validate_protocol)


def _reference(spec: ImplementationSpec) -> Connection:
    from .reference import ReferenceImplementation

    options = effective_options(spec, {})

    def factory() -> ReferenceImplementation:
        return ReferenceImplementation(options)

    info = ImplementationInfo(
        spec.label, "reference", __version__, "python", options.to_json(), spec.spec
    )
    return InProcessConnection(factory, info)


def _python(spec: ImplementationSpec, target: str) -> Connection:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--impl {spec.spec!r}: write python:package.module:attribute")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise ImplementationStartError(
            spec.label, f"cannot import {module_name!r}: {type(error).__name__}: {error}"
        ) from None
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ImplementationStartError(spec.label, f"{module_name!r} has no attribute {attr!r}")
    if not callable(factory):
        raise ImplementationStartError(
            spec.label,
            f"{target!r} is not callable: it must be a "
            "factory returning an object with feed() and finish()",
        )
    declared = metadata(factory)
    options = effective_options(spec, declared["options"])
    info = ImplementationInfo(
        spec.label,
        declared["name"],
        str(declared["version"]),
        declared["language"],
        options.to_json(),
        spec.spec,
    )
    return InProcessConnection(factory, info)


def effective_options(spec: ImplementationSpec, declared: Mapping[str, Any]) -> Options:
    """The options an implementation runs under: what it declares, overridden by the user."""
    try:
        return Options.from_mapping({**declared, **(spec.options or {})})
    except OptionsError as error:
        raise ImplementationStartError(spec.label, f"bad options: {error}") from None
