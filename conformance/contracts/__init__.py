"""Layer 3 (plug-ins): the registry of contracts: each is one module (or object) with the same
small, typed interface, and everything else derives from the registry.

Every entry names its case-file schema, its checks and its fuzz properties (`Contract`). The
normalizer (contracts/normalizer.py) is the first entry; the engine plans and judges it,
since its plans depend on the option profile and its judging on the reference. The entries
beside it are op contracts (`OpContract`): each also turns a case input into request
payloads for its one protocol op, judges the replies, generates inputs for fuzzing, and
carries the reference's answer. Case files say which op contract they belong to with a
top-level `contract:` key; files without one are normalizer cases. Check names, fuzz
properties, the reference's protocol ops and the command line's choices all come from
`registered()`, so a new contract is one module and one `register()` call.
docs/contracts.md describes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from conformance.contracts import egress, normalizer, render
from conformance.model.results import Verdict
from conformance.reference import Normalizer

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


class Contract(Protocol):
    """What every registry entry provides. Modules satisfy it structurally (normalizer.py)."""

    # Read-only members, so that a module's constants satisfy them (`CHECKS = ("a", "b")`
    # is a tuple[str, str], which a settable tuple[str, ...] attribute would not accept).

    @property
    def NAME(self) -> str:
        """The contract's name; for an op contract also its case files' `contract:` value
        and its protocol op."""
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
        """The fuzzing properties (names unique across contracts); an op contract has one,
        named after it."""
        ...


class OpContract(Contract, Protocol):
    """A contract of one protocol op, planned and judged from plain data (see render.py)."""

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


_REGISTRY: dict[str, Contract] = {normalizer.NAME: normalizer}
_OPS: dict[str, OpContract] = {}


class ReferenceImplementation(Normalizer):
    """The reference for every contract: the normalizer, plus one method per registered
    contract's op (docs/contracts.md), answered by that contract's reference. `register`
    adds the methods, so subclasses can override them and call `super()`."""


def _reference_method(contract: OpContract) -> Any:
    def method(self: ReferenceImplementation, **payload: Any) -> dict[str, Any]:
        return contract.reference(payload)

    method.__name__ = contract.METHOD
    method.__doc__ = f"The {contract.NAME} contract's reference."
    return method


class RegistryError(ValueError):
    """A contract that cannot be registered: its name or a check name is taken."""


def register(contract: OpContract) -> OpContract:
    """Add an op contract; its name, check names and property names must be new."""
    taken = {name for entry in _REGISTRY.values() for name in (entry.NAME, *entry.PROPERTIES)}
    if contract.NAME in taken:
        raise RegistryError(f"a contract or property named {contract.NAME!r} is already registered")
    clash = set(contract.CHECKS) & set(all_checks())
    if clash:
        raise RegistryError(f"{contract.NAME}: check names already taken: {sorted(clash)}")
    clash = set(contract.PROPERTIES) & taken
    if clash:
        raise RegistryError(f"{contract.NAME}: property names already taken: {sorted(clash)}")
    _REGISTRY[contract.NAME] = _OPS[contract.NAME] = contract
    setattr(ReferenceImplementation, contract.METHOD, _reference_method(contract))
    return contract


def unregister(name: str) -> None:
    """Remove an op contract (for tests that register their own)."""
    del _REGISTRY[name]
    delattr(ReferenceImplementation, _OPS.pop(name).METHOD)


def registered() -> tuple[Contract, ...]:
    """Every contract, the normalizer first."""
    return tuple(_REGISTRY.values())


def op_contracts() -> tuple[OpContract, ...]:
    """The op contracts: every contract but the normalizer."""
    return tuple(_OPS.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def contract(name: str) -> Contract:
    """The contract called `name` (KeyError if there is none)."""
    return _REGISTRY[name]


def op_contract(name: str) -> OpContract:
    """The op contract called `name` (KeyError if there is none, or it is the normalizer)."""
    return _OPS[name]


def contract_checks() -> dict[str, tuple[str, ...]]:
    """Each contract's checks, by contract name."""
    return {name: entry.CHECKS for name, entry in _REGISTRY.items()}


def all_checks() -> tuple[str, ...]:
    """Every check name, for selection, contract by contract."""
    return tuple(check for entry in _REGISTRY.values() for check in entry.CHECKS)


def fuzz_properties() -> tuple[str, ...]:
    """Every fuzzing property, contract by contract."""
    return tuple(name for entry in _REGISTRY.values() for name in entry.PROPERTIES)


register(render)
register(egress)

__all__ = [
    "Contract",
    "OpContract",
    "ReferenceImplementation",
    "RegistryError",
    "all_checks",
    "contract",
    "contract_checks",
    "fuzz_properties",
    "names",
    "op_contract",
    "op_contracts",
    "register",
    "registered",
    "unregister",
]
