"""An op contract as a registry entry: planning, judging, checking and fuzzing for any
contract of one protocol op, from the plain-data functions its module gives (`OpContract`).

Its cases do not depend on the option profile, and its judge needs every reply of a check
at once (a check sends a few requests), so it keeps them until the last one comes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from conformance.contracts._fuzzing import Counterexample, PropertyFailure
from conformance.model.cases import CaseFileProblem, CaseIdentity, ContractCase
from conformance.model.judge import graded
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judge, Judging, case_result
from conformance.model.requests import Ok, OpRequest, Reply, Request
from conformance.model.results import CaseResult, Verdict

if TYPE_CHECKING:
    from hypothesis.strategies import DataObject, SearchStrategy

    from conformance.contracts._fuzzing import FuzzCheck, FuzzTarget
    from conformance.contracts._protocol import OpContract


@dataclass(slots=True)
class OpJudge:
    """Keeps a check's replies; the contract's own judge decides once all have come, and
    failures to answer are judged as for any check."""

    plan: CheckPlan
    module: OpContract
    pending: int = 0
    replies: list[Reply] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pending = len(self.plan.requests) if self.plan.skip is None else 0

    def add(self, index: int, request: Request, reply: Reply) -> None:
        self.pending -= 1
        self.replies.append(reply)

    def result(self) -> CaseResult:
        plan = self.plan
        if plan.skip is not None:
            return case_result(plan, Verdict.SKIP, plan.skip)
        for reply in self.replies:
            if not isinstance(reply, Ok):
                return replace(case_result(plan, reply.verdict, reply.reason), stderr=reply.stderr)
        case = plan.case
        assert isinstance(case, ContractCase)
        bodies = [reply.value or {} for reply in self.replies if isinstance(reply, Ok)]
        verdict, reason, _ = self.module.judge(case.input, case.expected, plan.check, bodies)
        judgement = graded(verdict, reason, case.level)
        return case_result(plan, judgement.verdict, judgement.reason)


@dataclass(frozen=True, slots=True)
class OpEntry:
    """The registry entry of an op contract module."""

    module: OpContract

    @property
    def NAME(self) -> str:
        return self.module.NAME

    @property
    def SCHEMA(self) -> Any:
        return self.module.SCHEMA

    @property
    def CHECKS(self) -> tuple[str, ...]:
        return tuple(self.module.CHECKS)

    @property
    def PROPERTIES(self) -> tuple[str, ...]:
        return tuple(self.module.PROPERTIES)

    @property
    def METHOD(self) -> str:
        return self.module.METHOD

    def forms(self, case: CaseIdentity, options: Options) -> Sequence[CaseIdentity]:
        return (case,)

    def plan(self, case: CaseIdentity, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
        assert isinstance(case, ContractCase)
        module = self.module
        plans = []
        for check in (c for c in module.CHECKS if c in checks):
            payloads = module.requests(case.input, check)
            requests = [OpRequest(module.NAME, p, module.METHOD) for p in payloads]
            skip = None if requests else module.skip_reason(case.input, check)
            plans.append(CheckPlan(case, check, requests, case.expected, skip))
        return plans

    def judge(self, plan: CheckPlan, judging: Judging) -> Judge:
        return OpJudge(plan, self.module)

    def check_case(self, case: CaseIdentity, *, suggest: bool) -> Iterator[CaseFileProblem]:
        """The case must pass its checks against the contract's reference."""
        assert isinstance(case, ContractCase)
        module = self.module
        for check in module.CHECKS:
            payloads = module.requests(case.input, check)
            if not payloads:
                continue
            replies = [module.reference(payload) for payload in payloads]
            verdict, reason, _ = module.judge(case.input, case.expected, check, replies)
            if verdict != Verdict.PASS:
                yield CaseFileProblem(
                    case.file,
                    case.line,
                    f"{case.id}: the {case.contract} reference fails check {check}: {reason}",
                )

    def fuzz_inputs(self, options: Options) -> SearchStrategy[Any]:
        return self.module.inputs()

    def fuzz_check(self, name: str) -> FuzzCheck:
        def check(target: FuzzTarget, value: Any, data: DataObject | None) -> None:
            self.fuzz_replay(target, value)

        check.__doc__ = f"The {self.NAME} contract's checks hold against its reference."
        return check

    def fuzz_replay(self, target: FuzzTarget, value: Any) -> None:
        """Every check on the input `value`, judged against the reference's output."""
        module = self.module
        expected = module.expected_for(value)
        for check_name in module.CHECKS:
            payloads = module.requests(value, check_name)
            if not payloads:
                continue
            bodies = [target.op(module.NAME, module.METHOD, payload) for payload in payloads]
            verdict, reason, _ = module.judge(value, expected, check_name, bodies)
            if verdict != Verdict.PASS:
                raise PropertyFailure(
                    Counterexample(
                        [],
                        f"{check_name}: {reason} (input {json.dumps(value)[:300]})",
                        contract=module.NAME,
                        payload=value,
                    )
                )
