"""Judging: a plan's replies -> one result, the worst of its requests' outcomes.

A `PlanJudge` takes replies as they come (a batch at a time) and keeps only the first of the
worst outcomes so far, so judging a check of thousands of requests holds one reply at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from conformance.contracts import contract
from conformance.corpus.cases import Case, ContractCase
from conformance.engine.excerpts import bounded
from conformance.engine.plans import CheckPlan
from conformance.model.chunks import Chunk
from conformance.model.judge import Judgement, compare, first_divergence, holdback
from conformance.model.options import Options
from conformance.model.results import SEVERITY, CaseResult, Verdict
from conformance.reference import Normalizer
from conformance.transport.connections import Ok, Reply, Request, StreamRequest, WholeRequest

Outcome = tuple[Judgement, dict[str, str] | None, Reply, int]


class PlanJudge:
    """Judges one plan's replies as they arrive, in request order."""

    def __init__(self, plan: CheckPlan, options: Options) -> None:
        self.plan = plan
        self.options = options
        self.pending = len(plan.requests) if plan.skip is None else 0
        self._worst: Outcome | None = None
        #: Another contract's judge needs all replies at once (its plans are a few requests).
        self._replies: list[Reply] = []

    def add(self, index: int, request: Request, reply: Reply) -> None:
        self.pending -= 1
        if isinstance(self.plan.case, ContractCase):
            self._replies.append(reply)
            return
        judgement, actual, reply = _judge_one(self.plan, request, reply, self.options)
        worst = self._worst
        if worst is None or SEVERITY.index(judgement.verdict) < SEVERITY.index(worst[0].verdict):
            self._worst = (judgement, actual, reply, index)

    def result(self) -> CaseResult:
        plan = self.plan
        if plan.skip is not None:
            return _result(plan, Verdict.SKIP, plan.skip)
        if isinstance(plan.case, ContractCase):
            return bounded(_judge_contract(plan, self._replies))
        assert plan.expectation is not None and self._worst is not None
        judgement, actual, reply, index = self._worst
        verdict = judgement.verdict
        if verdict == Verdict.PASS:
            return _result(plan, verdict)
        label = plan.label(index)
        reason = f"{label}: {judgement.reason}" if label and judgement.reason else judgement.reason
        request = plan.requests[index]
        expected = plan.expectation.whole if plan.check == "whole" else plan.expectation.stream
        chunks = (
            [{"content": request.content, "reasoning": request.reasoning}]
            if isinstance(request, WholeRequest)
            else [chunk.to_json() for chunk in request.chunks]
            if isinstance(request, StreamRequest)
            else None
        )
        return bounded(
            replace(
                _result(plan, verdict, reason),
                chunks=chunks,
                expected=expected.to_json(),
                actual=actual,
                holdback=judgement.holdback,
                stderr=reply.stderr,
            )
        )


def judge(plan: CheckPlan, replies: Sequence[Reply], options: Options) -> CaseResult:
    """The result of a plan from all its replies at once."""
    judging = PlanJudge(plan, options)
    if plan.skip is None:
        for index, (request, reply) in enumerate(zip(plan.requests, replies, strict=True)):
            judging.add(index, request, reply)
    return judging.result()


def _judge_contract(plan: CheckPlan, replies: Sequence[Reply]) -> CaseResult:
    """A contract's own judge decides; failures to answer are judged as for normalizers."""
    case = plan.case
    assert isinstance(case, ContractCase)
    for reply in replies:
        if not isinstance(reply, Ok):
            return replace(_result(plan, reply.verdict, reply.reason), stderr=reply.stderr)
    module = contract(case.contract)
    verdict, reason, _ = module.judge(
        case.input, case.expected, plan.check, [r.value or {} for r in replies if isinstance(r, Ok)]
    )
    if verdict == Verdict.FAIL and case.level != "must":
        verdict, reason = Verdict.NON_STRICT, f"{case.level}-level case differs: {reason}"
    return _result(plan, verdict, reason)


def _judge_one(
    plan: CheckPlan, request: Request, reply: Reply, options: Options
) -> tuple[Judgement, dict[str, str] | None, Reply]:
    assert plan.expectation is not None
    if not isinstance(reply, Ok):
        return Judgement(reply.verdict, reply.reason), None, reply
    if isinstance(request, WholeRequest):
        assert reply.channels is not None
        return (
            compare(plan.expectation.whole, reply.channels, plan.case.level),
            reply.channels,
            reply,
        )
    assert reply.deltas is not None and isinstance(request, StreamRequest)
    chunks = request.chunks
    actual = {
        name: "".join(delta[name] for delta in reply.deltas) for name in ("assistant", "thinking")
    }
    content = compare(plan.expectation.stream, actual, plan.case.level)
    if content.verdict != Verdict.PASS:
        if content.verdict == Verdict.FAIL:
            wire = [chunk.to_json() for chunk in chunks]
            where = first_divergence(reply.deltas, plan.expectation.stream, wire, options.grammar)
            content = Judgement(content.verdict, f"{where}; {content.reason}")
        return content, actual, reply
    reference = _reference_deltas(chunks, options)
    lag, step = holdback(reply.deltas, reference)
    if lag > 0:
        where = f"chunk {step}" if step < len(chunks) else "the final flush"
        return (
            Judgement(
                Verdict.NON_STRICT,
                f"held back {lag} more characters than needed "
                f"(after {where}); the final text is right",
                lag,
            ),
            actual,
            reply,
        )
    return Judgement(Verdict.PASS), actual, reply


def _reference_deltas(chunks: Sequence[Chunk], options: Options) -> list[dict[str, str]]:
    normalizer = Normalizer(options)
    deltas: list[dict[str, str]] = [dict(normalizer.feed(c.to_json())) for c in chunks]
    deltas.append(dict(normalizer.finish()))
    return deltas


def _result(plan: CheckPlan, verdict: Verdict, reason: str = "") -> CaseResult:
    case = plan.case
    return CaseResult(
        case=case.id,
        slug=case.slug,
        title=case.title,
        category=case.category,
        taxonomy=case.taxonomy,
        level=case.level,
        check=plan.check,
        verdict=verdict,
        reason=reason,
        derived=case.derived.to_json() if isinstance(case, Case) and case.derived else None,
    )
