"""The runner: implementation x case x check -> results. It never prints or formats.

For each case and check a `CheckPlan` holds the requests to send; the runner sends plans in
large batches (so a `cmd:` implementation is pipelined) and judges each plan's replies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from conformance._version import SPEC_VERSION, __version__
from conformance.contracts import contract
from conformance.corpus.cases import Case, ContractCase, Expectation
from conformance.corpus.expectations import ExpectedFailures
from conformance.engine.chunking import one_char_chunks, split_points
from conformance.model.chunks import Chunk
from conformance.model.judge import Judgement, compare, first_divergence, holdback
from conformance.model.options import Options
from conformance.model.results import (
    ALL_CHECKS,
    CHECKS,
    CaseResult,
    ImplementationRun,
    Run,
    Verdict,
    worst,
)
from conformance.reference import Normalizer
from conformance.transport.connections import (
    Connection,
    Ok,
    OpRequest,
    Reply,
    Request,
    StreamRequest,
    WholeRequest,
)

#: How many requests go to an implementation at once.
BATCH = 2000


@dataclass(slots=True)
class CheckPlan:
    """One check of one case: the requests it sends, and what to judge replies against."""

    case: Case | ContractCase
    check: str
    requests: list[Request]
    #: Per request, how the input was cut (for messages): "" or "split at N".
    labels: list[str]
    expectation: Expectation | None = None
    skip: str | None = None


def plan_case(
    case: Case | ContractCase, options: Options, checks: Sequence[str] = ALL_CHECKS
) -> list[CheckPlan]:
    """The plans for a case's checks among `checks` (checks of other contracts are ignored)."""
    if isinstance(case, ContractCase):
        return _plan_contract(case, checks)
    checks = [check for check in checks if check in CHECKS]
    expectation = case.expectation(options)
    if isinstance(expectation, str):
        return [CheckPlan(case, check, [], [], skip=expectation) for check in checks]
    plans = []
    for check in checks:
        requests: list[Request]
        labels = [""]
        if check == "whole":
            requests = [WholeRequest(case.content, case.reasoning)]
        elif check == "stream":
            requests = [StreamRequest(case.chunks)]
        elif check == "chars":
            requests = [StreamRequest(one_char_chunks(case.chunks))]
        else:
            splits = list(split_points(case.chunks))
            if not splits:
                plans.append(
                    CheckPlan(
                        case,
                        check,
                        [],
                        [],
                        skip="no split points: the content is shorter than two characters",
                    )
                )
                continue
            requests = [StreamRequest(chunks) for _, chunks in splits]
            labels = [f"split at {point}" for point, _ in splits]
        plans.append(CheckPlan(case, check, requests, labels, expectation))
    return plans


def _plan_contract(case: ContractCase, checks: Sequence[str]) -> list[CheckPlan]:
    module = contract(case.contract)
    plans = []
    for check in (c for c in module.CHECKS if c in checks):
        payloads = module.requests(case.input, check)
        requests: list[Request] = [OpRequest(module.NAME, p, module.METHOD) for p in payloads]
        skip = None if requests else module.skip_reason(case.input, check)
        plans.append(CheckPlan(case, check, requests, [""] * len(requests), skip=skip))
    return plans


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
    return _result(plan, Verdict(verdict), reason)


def judge(plan: CheckPlan, replies: Sequence[Reply], options: Options) -> CaseResult:
    """The result of a plan from its replies: the worst of its requests' outcomes."""
    if plan.skip is not None:
        return _result(plan, Verdict.SKIP, plan.skip)
    if isinstance(plan.case, ContractCase):
        return _judge_contract(plan, replies)
    assert plan.expectation is not None
    outcomes = [
        _judge_one(plan, request, reply, options)
        for request, reply in zip(plan.requests, replies, strict=True)
    ]
    verdict = worst(judgement.verdict for judgement, *_ in outcomes)
    index = next(i for i, (j, *_) in enumerate(outcomes) if j.verdict == verdict)
    judgement, actual, reply = outcomes[index]
    label = plan.labels[index] if index < len(plan.labels) else ""
    reason = f"{label}: {judgement.reason}" if label and judgement.reason else judgement.reason
    if verdict == Verdict.PASS:
        return _result(plan, verdict)
    request = plan.requests[index]
    expected = plan.expectation.whole if plan.check == "whole" else plan.expectation.stream
    chunks = (
        [{"content": request.content, "reasoning": request.reasoning}]
        if isinstance(request, WholeRequest)
        else [chunk.to_json() for chunk in request.chunks]
    )
    return replace(
        _result(plan, verdict, reason),
        chunks=chunks,
        expected=expected.to_json(),
        actual=actual,
        holdback=judgement.holdback,
        stderr=reply.stderr,
    )


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
    assert reply.deltas is not None
    actual = {
        name: "".join(delta[name] for delta in reply.deltas) for name in ("assistant", "thinking")
    }
    content = compare(plan.expectation.stream, actual, plan.case.level)
    if content.verdict != Verdict.PASS:
        if content.verdict == Verdict.FAIL:
            chunks = [chunk.to_json() for chunk in request.chunks]
            where = first_divergence(reply.deltas, plan.expectation.stream, chunks, options.grammar)
            content = Judgement(content.verdict, f"{where}; {content.reason}")
        return content, actual, reply
    reference = _reference_deltas(request.chunks, options)
    lag, step = holdback(reply.deltas, reference)
    if lag > 0:
        where = f"chunk {step}" if step < len(request.chunks) else "the final flush"
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
    )


def _batches(plans: Iterable[CheckPlan], size: int) -> Iterator[list[CheckPlan]]:
    batch: list[CheckPlan] = []
    count = 0
    for plan in plans:
        batch.append(plan)
        count += len(plan.requests)
        if count >= size:
            yield batch
            batch, count = [], 0
    if batch:
        yield batch


def run_implementation(
    connection: Connection,
    cases: Sequence[Case],
    *,
    checks: Sequence[str] = ALL_CHECKS,
    expected_failures: ExpectedFailures | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    batch: int = BATCH,
) -> ImplementationRun:
    options = Options.from_mapping(connection.info.options)
    run = ImplementationRun(connection.info)
    plans = (plan for case in cases for plan in plan_case(case, options, checks))
    for group in _batches(plans, batch):
        requests = [request for plan in group for request in plan.requests]
        replies = connection.send(requests) if requests else []
        offset = 0
        for plan in group:
            count = len(plan.requests)
            result = judge(plan, replies[offset : offset + count], options)
            offset += count
            if expected_failures is not None:
                result = expected_failures.apply(result)
            run.results.append(result)
            if on_result is not None:
                on_result(result)
    return run


def new_run(implementations: list[ImplementationRun], selection: dict[str, object]) -> Run:
    return Run(
        harness_version=__version__,
        spec_version=SPEC_VERSION,
        started=datetime.now(UTC).isoformat(timespec="seconds"),
        implementations=implementations,
        selection=selection,
    )
