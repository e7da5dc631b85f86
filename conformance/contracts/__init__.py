"""Layer 3 (plug-ins): the registry of contracts: each is one module (or object) with the same
small, typed interface, and everything else derives from the registry.

Every entry, the normalizer included, is a `Contract`: it names its case-file schema, its
checks and its fuzz properties, and it plans its cases' checks, judges the replies, checks
its cases against its reference and fuzzes implementations. Two capabilities are any
contract's to use: the option profile (`forms` and `plan` get the run's options) and
streaming judgement (`judge` gives a judge that takes each reply as it arrives). The engine,
the corpus checker, the fuzzer and the pytest plugin ask the case's contract
(`contract_of(case)`) and never what kind of case it is.

The normalizer (contracts/normalizer/) is the first entry. An op contract brings its own
protocol op and is written as plain-data functions (`OpContract`, e.g. render.py); its
`register()` wraps it (`_ops.OpEntry`) and gives the reference a method for its op. Case
files say which contract they belong to with a top-level `contract:` key; files without one
are normalizer cases. docs/contracts.md describes them.
"""

from __future__ import annotations

from typing import Any

from conformance.contracts import egress, normalizer, render
from conformance.contracts._ops import OpEntry
from conformance.contracts._protocol import Contract, OpContract
from conformance.errors import UsageError
from conformance.model.cases import CaseIdentity
from conformance.reference import Normalizer

_REGISTRY: dict[str, Contract] = {normalizer.NAME: normalizer}
_OPS: dict[str, OpEntry] = {}


class ReferenceImplementation(Normalizer):
    """The reference for every contract: the normalizer, plus one method per registered
    op contract's op (docs/contracts.md), answered by that contract's reference. `register`
    adds the methods, so subclasses can override them and call `super()`."""


def _reference_method(contract: OpContract) -> Any:
    def method(self: ReferenceImplementation, **payload: Any) -> dict[str, Any]:
        return contract.reference(payload)

    method.__name__ = contract.METHOD
    method.__doc__ = f"The {contract.NAME} contract's reference."
    return method


class RegistryError(UsageError, ValueError):
    """A contract that cannot be registered: its name or a check name is taken (a
    configuration error, exit status 2)."""


def register(contract: Contract | OpContract) -> Contract | OpContract:
    """Add a contract; its name, check names and property names must be new. An op
    contract (an `OpContract`, which has no `plan`) is wrapped, and the reference gets a
    method for its op."""
    taken = {name for entry in _REGISTRY.values() for name in (entry.NAME, *entry.PROPERTIES)}
    if contract.NAME in taken:
        raise RegistryError(f"a contract or property named {contract.NAME!r} is already registered")
    clash = set(contract.CHECKS) & set(all_checks())
    if clash:
        raise RegistryError(f"{contract.NAME}: check names already taken: {sorted(clash)}")
    clash = set(contract.PROPERTIES) & taken
    if clash:
        raise RegistryError(f"{contract.NAME}: property names already taken: {sorted(clash)}")
    if isinstance(contract, Contract):
        _REGISTRY[contract.NAME] = contract
        return contract
    entry = OpEntry(contract)
    _REGISTRY[contract.NAME] = _OPS[contract.NAME] = entry
    setattr(ReferenceImplementation, contract.METHOD, _reference_method(contract))
    return contract


def unregister(name: str) -> None:
    """Remove a contract (for tests that register their own)."""
    del _REGISTRY[name]
    if name in _OPS:
        delattr(ReferenceImplementation, _OPS.pop(name).METHOD)


def registered() -> tuple[Contract, ...]:
    """Every contract, the normalizer first."""
    return tuple(_REGISTRY.values())


def op_contracts() -> tuple[OpContract, ...]:
    """The op contracts, as their modules give them: the contracts with a protocol op."""
    return tuple(entry.module for entry in _OPS.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def contract(name: str) -> Contract:
    """The contract called `name` (KeyError if there is none)."""
    return _REGISTRY[name]


def contract_of(case: CaseIdentity) -> Contract:
    """The contract that plans and judges `case`."""
    return _REGISTRY[case.contract]


def op_contract(name: str) -> OpContract:
    """The op contract called `name` (KeyError if there is none, or it has no op)."""
    return _OPS[name].module


def property_owner(name: str) -> Contract:
    """The contract whose fuzz property is called `name` (KeyError if none)."""
    for entry in _REGISTRY.values():
        if name in entry.PROPERTIES:
            return entry
    raise KeyError(name)


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
    "contract_of",
    "fuzz_properties",
    "names",
    "op_contract",
    "op_contracts",
    "property_owner",
    "register",
    "registered",
    "unregister",
]
