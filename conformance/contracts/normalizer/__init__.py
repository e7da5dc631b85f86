"""The normalizer contract (SPEC.md): the registry's first entry, a contract like the others.

Its cases are the files without a `contract:` key; its protocol ops are `whole` and `stream`
(docs/PROTOCOL.md), answered by the reference normalizer. It uses both capabilities a
contract may have: the option profile (each case's expectation depends on the profile, and
under an opt-in profile derived cases stand in for written ones, `_derive`) and streaming
judgement (each reply is judged as it arrives, holdback measured against the reference
delta by delta, `_judging`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from conformance.model.cases import NORMALIZER, Case, CaseFileProblem, CaseIdentity
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judge, Judging

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from conformance.contracts._fuzzing import FuzzCheck, FuzzTarget

__all__ = [
    "CHECKS",
    "NAME",
    "PROPERTIES",
    "SCHEMA",
    "check_case",
    "forms",
    "fuzz_check",
    "fuzz_inputs",
    "fuzz_replay",
    "judge",
    "own_cases",
    "plan",
]

NAME = NORMALIZER
SCHEMA = "case-file.schema.json"
#: The checks, in the order they run for each case.
CHECKS = ("whole", "stream", "chars", "splits")
#: The fuzzing properties (SPEC.md 13).
PROPERTIES = (
    "differential",
    "chunking",
    "whole",
    "discipline",
    "idempotence",
    "conservation",
)


def own_cases(cases: Iterable[CaseIdentity]) -> list[Case]:
    """The normalizer's cases among `cases`."""
    return [case for case in cases if isinstance(case, Case)]


def forms(case: CaseIdentity, options: Options) -> Sequence[CaseIdentity]:
    """The cases that run for `case` under the profile `options` (SPEC 5.6)."""
    from conformance.contracts.normalizer._derive import stand_ins

    assert isinstance(case, Case)
    return stand_ins(case, options)


def plan(case: CaseIdentity, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
    from conformance.contracts.normalizer._plans import plan_checks

    assert isinstance(case, Case)
    return plan_checks(case, options, [check for check in CHECKS if check in checks])


def judge(plan: CheckPlan, judging: Judging) -> Judge:
    from conformance.contracts.normalizer._judging import NormalizerJudge

    return NormalizerJudge(plan, judging)


def check_case(case: CaseIdentity, *, suggest: bool) -> Iterator[CaseFileProblem]:
    from conformance.contracts.normalizer._check import check_case as check

    assert isinstance(case, Case)
    return check(case, suggest=suggest)


def fuzz_inputs(options: Options) -> SearchStrategy[Any]:
    from conformance import strategies

    return strategies.streams(options)


def fuzz_check(name: str) -> FuzzCheck:
    from conformance.contracts.normalizer._properties import PROPERTY_CHECKS

    return PROPERTY_CHECKS[name]


def fuzz_replay(target: FuzzTarget, value: Any) -> None:
    from conformance.contracts.normalizer._properties import replay_check

    replay_check(target, value)
