"""Judging: a plan's replies -> one result, the worst of its requests' outcomes.

A `PlanJudge` takes replies as they come (a batch at a time) and keeps only the first of the
worst outcomes so far, so judging a check of thousands of requests holds one reply at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import accumulate
from operator import add, itemgetter, sub

from conformance.contracts import op_contract
from conformance.corpus.cases import Case, ContractCase
from conformance.engine.excerpts import bounded
from conformance.engine.plans import CheckPlan
from conformance.model.chunks import Chunk
from conformance.model.judge import Judgement, compare, first_divergence
from conformance.model.options import Options
from conformance.model.results import SEVERITY, CaseResult, Verdict
from conformance.reference import Normalizer
from conformance.transport.connections import Ok, Reply, Request, StreamRequest, WholeRequest

Outcome = tuple[Judgement, dict[str, str] | None, Reply, int]


class PlanJudge:
    """Judges one plan's replies as they arrive, in request order."""

    def __init__(
        self,
        plan: CheckPlan,
        options: Options,
        reference: Normalizer | None = None,
        *,
        replies_are_reference: bool = False,
    ) -> None:
        self.plan = plan
        self.options = options
        #: The reference that holdback is measured against, shared by the judges of a run
        #: (it is reset before each stream); made when first needed if not given.
        self.reference = reference
        #: The replies come from the bundled reference under these options: it holds back
        #: exactly what it holds back, so holdback is not measured again.
        self.replies_are_reference = replies_are_reference
        self.pending = len(plan.requests) if plan.skip is None else 0
        self._worst: Outcome | None = None
        #: Another contract's judge needs all replies at once (its plans are a few requests).
        self._replies: list[Reply] = []

    def add(self, index: int, request: Request, reply: Reply) -> None:
        self.pending -= 1
        if isinstance(self.plan.case, ContractCase):
            self._replies.append(reply)
            return
        if self.reference is None:
            self.reference = Normalizer(self.options)
        judgement, actual, reply = _judge_one(
            self.plan,
            request,
            reply,
            self.options,
            None if self.replies_are_reference else self.reference,
        )
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
    module = op_contract(case.contract)
    verdict, reason, _ = module.judge(
        case.input, case.expected, plan.check, [r.value or {} for r in replies if isinstance(r, Ok)]
    )
    if verdict == Verdict.FAIL and case.level != "must":
        verdict, reason = Verdict.NON_STRICT, f"{case.level}-level case differs: {reason}"
    return _result(plan, verdict, reason)


def _judge_one(
    plan: CheckPlan,
    request: Request,
    reply: Reply,
    options: Options,
    reference: Normalizer | None,
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
    deltas = reply.deltas
    assert deltas is not None and isinstance(request, StreamRequest)
    chunks = request.chunks
    actual = {
        "assistant": "".join(map(_ASSISTANT, deltas)),
        "thinking": "".join(map(_THINKING, deltas)),
    }
    content = compare(plan.expectation.stream, actual, plan.case.level)
    if content.verdict != Verdict.PASS:
        if content.verdict == Verdict.FAIL:
            wire = [chunk.to_json() for chunk in chunks]
            where = first_divergence(deltas, plan.expectation.stream, wire, options.grammar)
            content = Judgement(content.verdict, f"{where}; {content.reason}")
        return content, actual, reply
    if reference is None:  # the replies are the reference's own
        return Judgement(Verdict.PASS), actual, reply
    lag, step = _holdback(deltas, chunks, reference)
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


def _holdback(
    deltas: Sequence[Mapping[str, str]], chunks: Sequence[Chunk], reference: Normalizer
) -> tuple[int, int]:
    """`holdback(deltas, the reference's deltas for chunks)`: the most characters the
    implementation had released fewer of than the reference at any step, and the first
    step where that happened. It runs for every stream request, so the sums are C loops."""
    if len(deltas) != len(chunks) + 1:
        raise ValueError(f"{len(deltas)} deltas for {len(chunks)} chunks and the flush")
    reference.reset()
    feed = reference.feed
    # Sizes taken as each delta comes, not kept deltas: nothing relies on the reference
    # returning a new mapping each time.
    theirs = [
        len((delta := feed({"content": c.content, "reasoning": c.reasoning}))["assistant"])
        + len(delta["thinking"])
        for c in chunks
    ]
    last = reference.finish()
    theirs.append(len(last["assistant"]) + len(last["thinking"]))
    mine = map(add, map(len, map(_ASSISTANT, deltas)), map(len, map(_THINKING, deltas)))
    behind = list(map(sub, accumulate(theirs), accumulate(mine)))
    worst = max(behind)
    return (worst, behind.index(worst)) if worst > 0 else (0, -1)


_ASSISTANT, _THINKING = itemgetter("assistant"), itemgetter("thinking")


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
