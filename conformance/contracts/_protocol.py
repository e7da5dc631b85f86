"""The two shapes of a contract: `Contract`, what every registry entry provides, and
`OpContract`, what the module of a contract with its own protocol op gives (the registry
wraps it in `_ops.OpEntry`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from conformance.model.cases import CaseFileProblem, CaseIdentity
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judge, Judging
from conformance.model.results import Verdict

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from conformance.contracts._fuzzing import FuzzCheck, FuzzTarget


@runtime_checkable
class Contract(Protocol):
    """What every registry entry provides. Modules satisfy it structurally (normalizer/)."""

    # Read-only members, so that a module's constants satisfy them (`CHECKS = ("a", "b")`
    # is a tuple[str, str], which a settable tuple[str, ...] attribute would not accept).

    @property
    def NAME(self) -> str:
        """The contract's name; its case files' `contract:` value."""
        ...

    @property
    def SCHEMA(self) -> str | Mapping[str, Any]:
        """The case-file schema: a file name in conformance/schemas/, or the schema itself."""
        ...

    @property
    def CHECKS(self) -> tuple[str, ...]:
        """The checks, in the order they run for each case (names unique across contracts)."""
        ...

    @property
    def PROPERTIES(self) -> tuple[str, ...]:
        """The fuzzing properties (names unique across contracts)."""
        ...

    def forms(self, case: CaseIdentity, options: Options) -> Sequence[CaseIdentity]:
        """The cases that run for `case` under the option profile `options` (the case
        itself, unless the contract derives stand-ins for profiles its files do not name)."""
        ...

    def plan(self, case: CaseIdentity, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
        """The plans of the contract's checks among `checks`, in the contract's order."""
        ...

    def judge(self, plan: CheckPlan, judging: Judging) -> Judge:
        """A judge of one plan's replies, fed as they arrive."""
        ...

    def check_case(self, case: CaseIdentity, *, suggest: bool) -> Iterator[CaseFileProblem]:
        """What `conformance check` finds wrong with a case (against the reference);
        `suggest`: add the fix to messages where one can be written out."""
        ...

    def fuzz_inputs(self, options: Options) -> SearchStrategy[Any]:
        """Inputs for the contract's fuzz properties; what a failure stores and replays."""
        ...

    def fuzz_check(self, name: str) -> FuzzCheck:
        """The check of the property called `name`."""
        ...

    def fuzz_replay(self, target: FuzzTarget, value: Any) -> None:
        """Raise PropertyFailure if a stored failing input still fails."""
        ...


class OpContract(Protocol):
    """A contract of one protocol op, as its module gives it: plain-data functions from
    which the registry plans, judges, checks and fuzzes it (`_ops.OpEntry`; see render.py).
    """

    @property
    def NAME(self) -> str:
        """The contract's name, its case files' `contract:` value and its protocol op."""
        ...

    @property
    def SCHEMA(self) -> str | Mapping[str, Any]: ...

    @property
    def CHECKS(self) -> tuple[str, ...]: ...

    @property
    def PROPERTIES(self) -> tuple[str, ...]:
        """One property, named after the contract."""
        ...

    @property
    def METHOD(self) -> str:
        """The method a `python:` implementation offers for the op."""
        ...

    def requests(self, case_input: Mapping[str, Any], check: str) -> list[dict[str, Any]]:
        """The payloads one check sends; [] when the check does not apply to the input."""
        ...

    def skip_reason(self, case_input: Mapping[str, Any], check: str) -> str:
        """Why a check that sends nothing does not apply."""
        ...

    def judge(
        self,
        case_input: Mapping[str, Any],
        expected: Mapping[str, Any],
        check: str,
        replies: Sequence[Any],
    ) -> tuple[Verdict, str, Any]:
        """(verdict, reason, actual) of one check from its replies, one per payload."""
        ...

    def reference(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The reference's reply body to one payload."""
        ...

    def expected_for(self, case_input: Mapping[str, Any]) -> dict[str, Any]:
        """The expected output of a proposed case (the fuzzer's), from the reference."""
        ...

    def guess_taxonomy(self, case_input: Mapping[str, Any]) -> str:
        """The taxonomy entry a proposed case most likely belongs to."""
        ...

    def inputs(self) -> SearchStrategy[dict[str, Any]]:
        """Case inputs for fuzzing (the contract's property draws from it)."""
        ...
