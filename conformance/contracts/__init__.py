"""Contracts beyond the normalizer, each one module with the same small interface.

A contract module names its case-file schema, its checks and its protocol op, turns a case
into request payloads, judges the replies, and carries the reference implementation:

    NAME, SCHEMA, CHECKS, METHOD
    requests(case_input, check) -> list[payload]      # [] when the check does not apply,
    skip_reason(case_input, check) -> str             # ... and why
    judge(case_input, expected, check, replies) -> (verdict, reason, actual)
    reference(payload) -> reply body
    expected_for(case_input) -> expected              # for proposed cases (the fuzzer's)
    guess_taxonomy(case_input) -> taxonomy entry

Case files say which contract they belong to with a top-level `contract:` key; files
without one are normalizer cases. docs/contracts.md describes the contracts.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from conformance.reference import Normalizer

#: The contracts besides the normalizer, by name (= case-file `contract:` = protocol op).
NAMES = ("render", "egress")


def contract(name: str) -> ModuleType:
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"conformance.contracts.{name}")


class ReferenceImplementation(Normalizer):
    """The reference for every contract: the normalizer, plus the ops of the other
    contracts (docs/contracts.md), each answered by that contract's reference."""

    def render(self, **payload: Any) -> dict[str, Any]:
        return contract("render").reference(payload)

    def egress(self, **payload: Any) -> dict[str, Any]:
        return contract("egress").reference(payload)
