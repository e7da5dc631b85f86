"""Implementation specs (`reference`, `python:`, `python-isolated:`, `cmd:`) -> connections."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

from conformance._version import __version__
from conformance.errors import ImplementationStartError, UsageError
from conformance.interface import metadata
from conformance.model.results import ImplementationInfo
from conformance.transport.connections import Connection
from conformance.transport.factories import check_factory, import_factory
from conformance.transport.inprocess import InProcessConnection, describe
from conformance.transport.spec import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    ImplementationSpec,
    check_start_timeout,
    check_timeout,
    command_words,
    effective_options,
)
from conformance.transport.subprocess import SubprocessConnection
from conformance.transport.worker import Worker


def connect(
    spec: ImplementationSpec,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    validate_protocol: bool = False,
    start_timeout: float = DEFAULT_START_TIMEOUT,
) -> Connection:
    """A started implementation. `timeout` bounds each request; `start_timeout` its start
    (a process's answer to `hello`), which a slow import can stretch far beyond a request."""
    timeout = check_timeout(timeout)
    start_timeout = check_start_timeout(start_timeout)
    kind, _, rest = spec.spec.partition(":")
    if spec.spec == "reference":
        return _reference(spec)
    if kind == "python":
        return _python(spec, rest, timeout)
    if kind == "python-isolated":
        return _isolated(spec, rest, timeout, start_timeout, validate_protocol)
    argv = command_words(spec.spec, rest)
    if not argv:
        raise UsageError(f"--impl {spec.spec!r}: no command after `cmd:`")
    return SubprocessConnection(
        argv,
        spec,
        timeout=timeout,
        validate_protocol=validate_protocol,
        start_timeout=start_timeout,
    )


def _reference(spec: ImplementationSpec) -> Connection:
    from conformance.contracts import ReferenceImplementation

    options = effective_options(spec, {})

    def factory() -> ReferenceImplementation:
        return ReferenceImplementation(options)

    info = ImplementationInfo(
        spec.label, "reference", __version__, "python", options.to_json(), spec.spec
    )
    # Trusted and fast: run bare, without the watchdog.
    return InProcessConnection(factory, info, is_reference=True)


def _python(spec: ImplementationSpec, target: str, timeout: float) -> Connection:
    if not target.partition(":")[2]:
        raise UsageError(f"--impl {spec.spec!r}: write python:package.module:attribute")
    # Imported and checked on the implementation's own thread, as every later call is: what
    # its import or factory raises (even `sys.exit()`) is its start failure, and the main
    # thread stays free for Ctrl-C, SIGTERM and the budget however long it takes.
    worker = Worker(f"conformance-{spec.label}")
    outcome = worker.call(partial(_factory, target), None)
    if outcome.error is not None:
        worker.abandon()
        error = outcome.error
        message = str(error) if isinstance(error, ValueError) else f"raised {describe(error)}"
        raise ImplementationStartError(spec.label, message)
    factory, declared = outcome.value
    options = effective_options(spec, declared["options"])
    info = ImplementationInfo(
        spec.label,
        declared["name"],
        str(declared["version"]),
        declared["language"],
        options.to_json(),
        spec.spec,
    )
    return InProcessConnection(factory, info, timeout=timeout, worker=worker)


def _factory(target: str) -> tuple[Any, dict[str, Any]]:
    """The factory `target` names and its metadata; ValueError says why there is none."""
    factory = import_factory(target)
    declared = metadata(factory)
    if "http" not in declared["capabilities"]:  # http clients take a call
        check_factory(factory, target)
    return factory, declared


def _isolated(
    spec: ImplementationSpec,
    target: str,
    timeout: float,
    start_timeout: float,
    validate_protocol: bool,
) -> Connection:
    """A `python:` implementation in a child process of its own, behind the protocol server:
    a crash, `os._exit` or a hang there is a result, not the end of the run."""
    # Not imported here: importing it is among what may crash. The child checks it and
    # refuses `hello` with the reason when it is no factory.
    if not target.partition(":")[2]:
        raise UsageError(f"--impl {spec.spec!r}: write python-isolated:package.module:attribute")
    argv = [sys.executable, "-m", "conformance.transport.isolated", target]
    # The child imports this very `conformance` and, like `python:`, the current directory.
    here = str(Path(__file__).resolve().parents[2])
    paths = [here, os.getcwd(), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    return SubprocessConnection(
        argv,
        spec,
        timeout=timeout,
        validate_protocol=validate_protocol,
        start_timeout=start_timeout,
        env=env,
    )
