"""The runner: implementation x case x check -> results. It never prints or formats.

For each case and check a `CheckPlan` (plans.py) holds the requests to send; the runner sends
them in large batches (so a `cmd:` implementation is pipelined) and judges replies as they come
(judging.py). A batch is bounded in requests and in characters, and a plan's requests are taken
lazily, so memory stays bounded by one batch whatever the length of a case.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from conformance._version import SPEC_VERSION, __version__
from conformance.corpus.cases import Case, ContractCase
from conformance.corpus.derive import for_profile
from conformance.corpus.expectations import ExpectedFailures
from conformance.engine.judging import PlanJudge, judge
from conformance.engine.plans import CheckPlan, plan_case, result_count
from conformance.model.options import Options
from conformance.model.results import CaseResult, ImplementationRun, Run
from conformance.transport.connections import Connection, OpRequest, Request, WholeRequest

#: How many requests go to an implementation at once.
BATCH = 2000
#: How many characters of input go to an implementation at once: a long case's `splits` are
#: sent a few hundred at a time rather than 2,000 copies of the case.
BATCH_CHARS = 4_000_000

__all__ = [
    "BATCH",
    "CheckPlan",
    "judge",
    "new_run",
    "plan_case",
    "result_count",
    "run_implementation",
]

Item = tuple[PlanJudge, int, Request]


def _size(request: Request) -> int:
    if isinstance(request, WholeRequest):
        return len(request.content or "") + len(request.reasoning or "")
    if isinstance(request, OpRequest):
        return 1
    return sum(len(c.content or "") + len(c.reasoning or "") for c in request.chunks)


def _batches(
    judges: Iterator[PlanJudge], size: int, chars: int, order: deque[PlanJudge]
) -> Iterator[list[Item]]:
    """Batches of (judge, index, request); each judge is appended to `order` when first met,
    so results can be emitted in plan order."""
    batch: list[Item] = []
    weight = 0
    for judging in judges:
        order.append(judging)
        if judging.plan.skip is not None:
            continue
        requests = judging.plan.requests
        for index in range(len(requests)):
            request = requests[index]
            batch.append((judging, index, request))
            weight += _size(request)
            if len(batch) >= size or weight >= chars:
                yield batch
                batch, weight = [], 0
    if batch:
        yield batch


def run_implementation(
    connection: Connection,
    cases: Sequence[Case | ContractCase],
    *,
    checks: Sequence[str] | None = None,
    expected_failures: ExpectedFailures | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    batch: int = BATCH,
    batch_chars: int = BATCH_CHARS,
    stop: Callable[[], bool] | None = None,
) -> ImplementationRun:
    """Run `checks` of `cases`; each result goes to `on_result` as soon as it is judged.

    `stop` is asked after each batch is answered: once it says yes, that batch's replies are
    not judged (they may be the interruption's own doing) and nothing more is sent."""
    options = Options.from_mapping(connection.info.options)
    # Under an opt-in profile, derived cases stand in for written ones without an
    # expectation for it (SPEC 5.6).
    cases = for_profile(cases, options)
    run = ImplementationRun(connection.info)
    judges = (
        PlanJudge(plan, options) for case in cases for plan in plan_case(case, options, checks)
    )
    order: deque[PlanJudge] = deque()

    def settle() -> None:
        while order and order[0].pending == 0:
            result = order.popleft().result()
            if expected_failures is not None:
                result = expected_failures.apply(result)
            run.results.append(result)
            if on_result is not None:
                on_result(result)

    for group in _batches(judges, batch, batch_chars, order):
        if stop is not None and stop():
            return run
        replies = connection.send([request for _, _, request in group])
        if stop is not None and stop():
            return run
        for (judging, index, request), reply in zip(group, replies, strict=True):
            judging.add(index, request, reply)
        settle()
    settle()
    return run


def new_run(
    implementations: list[ImplementationRun],
    selection: dict[str, object],
    *,
    started: datetime | None = None,
) -> Run:
    return Run(
        harness_version=__version__,
        spec_version=SPEC_VERSION,
        started=(started or datetime.now(UTC)).isoformat(timespec="seconds"),
        implementations=implementations,
        selection=selection,
    )
