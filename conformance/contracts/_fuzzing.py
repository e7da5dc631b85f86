"""What a contract's fuzz properties exercise and what they report: the target they run
against (`FuzzTarget`, a live implementation under its declared options; the fuzz layer
makes one over a connection), and the input that breaks a property (`Counterexample`),
raised as a `PropertyFailure` for Hypothesis to shrink."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from conformance.model.options import Options

if TYPE_CHECKING:  # Hypothesis is imported only for fuzzing: it is slow to import
    from hypothesis.strategies import DataObject


@dataclass(frozen=True, slots=True)
class Counterexample:
    chunks: list[dict[str, str | None]]
    reason: str
    expected: Mapping[str, str] | None = None
    actual: Mapping[str, str] | None = None
    #: Set when the implementation failed to answer rather than answered wrongly.
    error: bool = False
    #: For an op contract's property: its name and the request payload that failed.
    contract: str | None = None
    payload: Mapping[str, Any] | None = None

    @property
    def input(self) -> Any:
        """What replays the failure (kept in the example database): the payload of an op
        contract's property, the chunks of the normalizer's."""
        return dict(self.payload or {}) if self.contract is not None else self.chunks

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"chunks": self.chunks, "reason": self.reason}
        if self.expected is not None:
            data["expected"] = dict(self.expected)
        if self.actual is not None:
            data["actual"] = dict(self.actual)
        if self.contract is not None:
            data["contract"] = self.contract
            data["input"] = dict(self.payload or {})
        return data


class PropertyFailure(AssertionError):
    """A property does not hold. An AssertionError, which Hypothesis shrinks best: it tells
    other exceptions apart by their message, which here changes with every example."""

    #: The bug signature, once the fuzz layer has told this failure from others
    #: (conformance/fuzz/signatures.py).
    signature: str | None = None

    def __init__(self, example: Counterexample) -> None:
        super().__init__(example.reason)
        self.example = example


class Unsupported(Exception):
    """The implementation does not answer an op a property needs: the property is SKIP."""


class FuzzTarget(Protocol):
    """What the properties exercise: a live implementation under its declared options."""

    options: Options
    #: The first input whose only difference was whitespace (SPEC 8.2: NON_STRICT). It does
    #: not stop the search: real failures may still be found.
    non_strict: Counterexample | None

    def differs(
        self,
        chunks: list[dict[str, Any]],
        reason: str,
        expected: Mapping[str, str],
        actual: Mapping[str, str],
    ) -> None:
        """Fail unless the channels are equal; note a whitespace-only difference."""
        ...

    def stream(self, chunks: list[dict[str, Any]]) -> list[dict[str, str]]: ...

    def whole(self, content: str | None, reasoning: str | None) -> dict[str, str]: ...

    def op(self, name: str, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        """An op contract's op; raises Unsupported when the implementation has none."""
        ...


#: A property's check: the target, a drawn input, and Hypothesis' data for more draws
#: (None when a stored failure is replayed).
FuzzCheck = Callable[[FuzzTarget, Any, "DataObject | None"], None]


def fail(
    chunks: list[dict[str, Any]],
    reason: str,
    expected: Mapping[str, str] | None = None,
    actual: Mapping[str, str] | None = None,
) -> None:
    raise PropertyFailure(Counterexample(chunks, reason, expected, actual))
