"""Judging the normalizer's replies: each stream or whole reply against the expectation
(SPEC.md 8), then, for a stream whose text is right, how much more it held back than the
reference at any step (NON_STRICT). The judge keeps only the first of the worst outcomes so
far, so a check of thousands of requests holds one reply at a time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from operator import add, itemgetter

from conformance.contracts.normalizer._chunking import SplitRequests
from conformance.model.cases import Expectation
from conformance.model.chunks import Chunk
from conformance.model.judge import Judgement, behind, compare, first_divergence, holdback
from conformance.model.options import Options
from conformance.model.plans import CheckPlan, Judging, case_result
from conformance.model.requests import Ok, Reply, Request, StreamRequest, WholeRequest
from conformance.model.results import SEVERITY, CaseResult, Verdict
from conformance.reference import Normalizer

Outcome = tuple[Judgement, dict[str, str] | None, Reply, int]

_ASSISTANT, _THINKING = itemgetter("assistant"), itemgetter("thinking")
_RANK = {verdict: rank for rank, verdict in enumerate(SEVERITY)}
_PASS = Judgement(Verdict.PASS)
_FAILING = (Verdict.FAIL, Verdict.ERROR, Verdict.TIMEOUT)
#: Where the judges of one run keep the reference they measure holdback against.
_REFERENCE = "normalizer.reference"


class NormalizerJudge:
    """Judges one normalizer plan's replies as they arrive, in request order."""

    def __init__(self, plan: CheckPlan, judging: Judging) -> None:
        self.plan = plan
        self.options = judging.options
        self.judging = judging
        self.pending = len(plan.requests) if plan.skip is None else 0
        self._worst: Outcome | None = None
        #: The rank of the worst verdict so far (SEVERITY: lower is worse).
        self._rank = len(SEVERITY)
        #: Whether every failing request so far cut inside a delimiter (a `splits` check
        #: only: its other requests are the same input cut elsewhere).
        self._cut_only: bool | None = True if isinstance(plan.requests, SplitRequests) else None

    def _reference(self) -> Normalizer | None:
        """The reference that holdback is measured against, shared by the judges of a run
        (reset before each stream); None when the replies are the reference's own."""
        if self.judging.replies_are_reference:
            return None
        shared = self.judging.shared
        if _REFERENCE not in shared:
            shared[_REFERENCE] = Normalizer(self.options)
        reference: Normalizer = shared[_REFERENCE]
        return reference

    def add(self, index: int, request: Request, reply: Reply) -> None:
        self.pending -= 1
        plan = self.plan
        expectation = plan.expected
        assert isinstance(expectation, Expectation)
        judgement, actual, reply = _judge_one(
            expectation, plan.case.level, request, reply, self.options, self._reference()
        )
        rank = _RANK[judgement.verdict]
        if self._cut_only and judgement.verdict in _FAILING:
            assert isinstance(plan.requests, SplitRequests)
            self._cut_only = plan.requests.cuts_delimiter(index)
        if rank < self._rank:
            self._worst, self._rank = (judgement, actual, reply, index), rank

    def result(self) -> CaseResult:
        plan = self.plan
        if plan.skip is not None:
            return case_result(plan, Verdict.SKIP, plan.skip)
        assert self._worst is not None
        judgement, actual, reply, index = self._worst
        verdict = judgement.verdict
        if verdict == Verdict.PASS:
            return case_result(plan, verdict)
        label = plan.label(index)
        reason = f"{label}: {judgement.reason}" if label and judgement.reason else judgement.reason
        request = plan.requests[index]
        expected = plan.expected.whole if plan.check == "whole" else plan.expected.stream
        chunks = (
            [{"content": request.content, "reasoning": request.reasoning}]
            if isinstance(request, WholeRequest)
            else [chunk.to_json() for chunk in request.chunks]
            if isinstance(request, StreamRequest)
            else None
        )
        return replace(
            case_result(plan, verdict, reason),
            cut_only=True if verdict in _FAILING and self._cut_only else None,
            chunks=chunks,
            expected=expected.to_json(),
            actual=actual,
            holdback=judgement.holdback,
            stderr=reply.stderr,
        )


def _judge_one(
    expectation: Expectation,
    level: str,
    request: Request,
    reply: Reply,
    options: Options,
    reference: Normalizer | None,
) -> tuple[Judgement, dict[str, str] | None, Reply]:
    if not isinstance(reply, Ok):
        return Judgement(reply.verdict, reply.reason), None, reply
    if isinstance(request, WholeRequest):
        assert reply.channels is not None
        return compare(expectation.whole, reply.channels, level), reply.channels, reply
    deltas = reply.deltas
    assert deltas is not None and isinstance(request, StreamRequest)
    chunks = request.chunks
    actual = {
        "assistant": "".join(map(_ASSISTANT, deltas)),
        "thinking": "".join(map(_THINKING, deltas)),
    }
    content = compare(expectation.stream, actual, level)
    if content.verdict != Verdict.PASS:
        if content.verdict == Verdict.FAIL:
            wire = [chunk.to_json() for chunk in chunks]
            where = first_divergence(deltas, expectation.stream, wire, options.grammar)
            content = Judgement(content.verdict, f"{where}; {content.reason}")
        return content, actual, reply
    if reference is None:  # the replies are the reference's own
        return _PASS, actual, reply
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
    return _PASS, actual, reply


def _holdback(
    deltas: Sequence[Mapping[str, str]], chunks: Sequence[Chunk], reference: Normalizer
) -> tuple[int, int]:
    """`holdback` against the reference's deltas for the same chunks. It runs for every
    stream request, so the sizes are C loops."""
    if len(deltas) != len(chunks) + 1:
        raise ValueError(f"{len(deltas)} deltas for {len(chunks)} chunks and the flush")
    reference.reset()
    feed = reference.feed
    # The reference makes a new delta each step, so they are kept and measured at once.
    steps = [feed({"content": c.content, "reasoning": c.reasoning}) for c in chunks]
    steps.append(reference.finish())
    theirs = map(add, map(len, map(_ASSISTANT, steps)), map(len, map(_THINKING, steps)))
    mine = map(add, map(len, map(_ASSISTANT, deltas)), map(len, map(_THINKING, deltas)))
    return holdback(behind(mine, theirs))
