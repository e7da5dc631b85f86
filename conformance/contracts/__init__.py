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

#: The contracts besides the normalizer, by name (= case-file `contract:` = protocol op).
NAMES = ("render", "egress")


def contract(name: str) -> ModuleType:
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"conformance.contracts.{name}")
