"""Judging: a plan's replies -> one result, by the judge of the case's contract. Long texts
in a result are bounded here, whatever the contract (excerpts.py)."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.contracts import contract_of
from conformance.engine.excerpts import bounded
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judge, Judging
from conformance.model.requests import Reply
from conformance.model.results import CaseResult, Verdict


def judge_for(plan: CheckPlan, judging: Judging) -> Judge:
    """The judge of one plan, from its case's contract."""
    return contract_of(plan.case).judge(plan, judging)


def result_of(judge: Judge) -> CaseResult:
    """The judge's result, its long texts bounded."""
    result = judge.result()
    return result if result.verdict == Verdict.PASS else bounded(result)


def judge(plan: CheckPlan, replies: Sequence[Reply], options: Options) -> CaseResult:
    """The result of a plan from all its replies at once."""
    judging = judge_for(plan, Judging(options))
    if plan.skip is None:
        for index, (request, reply) in enumerate(zip(plan.requests, replies, strict=True)):
            judging.add(index, request, reply)
    return result_of(judging)
