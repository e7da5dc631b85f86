"""Implementation specs (`reference`, `python:module:attr`, `cmd:command line`) -> connections."""

from __future__ import annotations

import importlib
import shlex
from typing import Any

from conformance._version import __version__
from conformance.errors import ImplementationStartError, UsageError
from conformance.interface import metadata
from conformance.model.results import ImplementationInfo
from conformance.transport.connections import Connection, InProcessConnection
from conformance.transport.spec import DEFAULT_TIMEOUT, ImplementationSpec, effective_options
from conformance.transport.subprocess import SubprocessConnection


def connect(
    spec: ImplementationSpec, *, timeout: float = DEFAULT_TIMEOUT, validate_protocol: bool = False
) -> Connection:
    kind, _, rest = spec.spec.partition(":")
    if spec.spec == "reference":
        return _reference(spec)
    if kind == "python":
        return _python(spec, rest)

    argv = shlex.split(rest)
    if not argv:
        raise UsageError(f"--impl {spec.spec!r}: no command after `cmd:`")
    return SubprocessConnection(argv, spec, timeout=timeout, validate_protocol=validate_protocol)


def _reference(spec: ImplementationSpec) -> Connection:
    from conformance.contracts import ReferenceImplementation

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
