"""The plugin's option names and its per-session state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conformance.model.cases import CaseIdentity

GROUP = "conformance"
IMPL = "--conformance-impl"
OPTIONS = "--conformance-options"
CASES = "--conformance-cases"
CHECK = "--conformance-check"
TIMEOUT = "--conformance-timeout"
EXPECTATIONS = "--conformance-expectations"
REPORT_DIR = "--conformance-report-dir"
FUZZ = "--conformance-fuzz"
MIN_JUDGED = "--conformance-min-judged"
EVERY_FAILURE = "--conformance-every-failure"
RESULT_PROPERTY = "conformance_result"
FUZZ_PROPERTY = "conformance_fuzz"
#: A failing test's bug signature (`label|class|category|check`): later failures of one
#: signature are shown in one line (`_failures.py`).
SIGNATURE_PROPERTY = "conformance_signature"

STATE = pytest.StashKey["State"]()


class State:
    """The session's implementations, cases and expectation files. Connections open on first
    use (or at session start, to fail once and early) and close at the end of the session."""

    def __init__(self, config: pytest.Config) -> None:
        from conformance.session.run import implementation_specs
        from conformance.transport.spec import DEFAULT_TIMEOUT

        impls = config.getoption(IMPL) or config.getini("conformance_impl")
        self.specs = implementation_specs(impls, config.getoption(OPTIONS))
        self.timeout = config.getoption(TIMEOUT) or DEFAULT_TIMEOUT
        expectations = config.getoption(EXPECTATIONS)
        self.expectations_dir = Path(expectations) if expectations else None
        self.connections: dict[str, Any] = {}
        #: Per implementation, `unsupported` held to the operation as a whole over the
        #: session (engine/declines.py).
        self.declines: dict[str, Any] = {}
        self.expected: dict[str, Any] = {}
        self.cases: list[CaseIdentity] = []
        self.checks: list[str] = []

    def connection(self, label: str) -> Any:
        if label not in self.connections:
            from conformance.transport.impls import connect

            spec = next(spec for spec in self.specs if spec.label == label)
            self.connections[label] = connect(spec, timeout=self.timeout)
        return self.connections[label]

    def send(self, label: str, requests: Any) -> Any:
        """The replies of one implementation to `requests`, as the decline rule leaves them."""
        from conformance.engine.declines import Declines

        declines = self.declines.setdefault(label, Declines())
        return declines.replies(requests, self.connection(label).send(requests))

    def expected_failures(self, label: str) -> Any:
        """One implementation's expectation file, read once per session (not once per test)."""
        if label not in self.expected:
            from conformance.corpus.expectations import expected_failures_for

            self.expected[label] = expected_failures_for(self.expectations_dir, label)
        return self.expected[label]

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


def marker(category: str) -> str:
    return "conformance_" + category.replace("-", "_")
