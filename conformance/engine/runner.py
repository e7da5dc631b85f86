"""The runner: implementation x case x check -> results. It never prints or formats.

For each case and check, the case's contract makes a `CheckPlan` (the requests to send) and
a judge; the runner sends the requests in large batches (so a `cmd:` implementation is
pipelined) and feeds the judges each reply as it comes, so a run that stops keeps every
request answered before the stop. A batch is bounded in requests
and in characters, and a plan's requests are taken lazily, so memory stays bounded by one
batch whatever the length of a case.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from operator import attrgetter

from conformance._version import SPEC_VERSION, __version__
from conformance.corpus.expectations import ExpectedFailures
from conformance.engine.declines import Declines
from conformance.engine.judging import judge_for, result_of
from conformance.engine.plans import plan_case, profiled
from conformance.model.cases import CaseIdentity
from conformance.model.options import Options
from conformance.model.plans import Judge, Judging, UniformRequests
from conformance.model.requests import OpRequest, Request, WholeRequest
from conformance.model.results import CaseResult, ImplementationRun, Run
from conformance.transport.connections import Connection

#: How many requests go to an implementation at once.
BATCH = 2000
#: How many characters of input go to an implementation at once: a long case's `splits` are
#: sent a few hundred at a time rather than 2,000 copies of the case.
BATCH_CHARS = 4_000_000

Item = tuple[Judge, int, Request]


_CONTENT, _REASONING = attrgetter("content"), attrgetter("reasoning")


def _size(request: Request) -> int:
    if isinstance(request, WholeRequest):
        return len(request.content or "") + len(request.reasoning or "")
    if isinstance(request, OpRequest):
        return 1
    # C loops: a one-character re-chunking has a chunk per character.
    chunks = request.chunks
    return sum(map(len, filter(None, map(_CONTENT, chunks)))) + sum(
        map(len, filter(None, map(_REASONING, chunks)))
    )


def _batches(
    judges: Iterator[Judge], size: int, chars: int, order: deque[Judge]
) -> Iterator[list[Item]]:
    """Batches of (judge, index, request); each judge is appended to `order` when first met,
    so results can be emitted in plan order."""
    batch: list[Item] = []
    append = batch.append
    weight = 0
    for judging in judges:
        order.append(judging)
        if judging.plan.skip is not None:
            continue
        requests = judging.plan.requests
        # Every `splits` request feeds the whole stream: its size is known without adding up.
        same = requests.chars if isinstance(requests, UniformRequests) else None
        for index in range(len(requests)):
            request = requests[index]
            append((judging, index, request))
            weight += _size(request) if same is None else same
            if len(batch) >= size or weight >= chars:
                yield batch
                batch, weight = [], 0
                append = batch.append
    if batch:
        yield batch


def run_implementation(
    connection: Connection,
    cases: Sequence[CaseIdentity],
    *,
    checks: Sequence[str] | None = None,
    expected_failures: ExpectedFailures | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    batch: int = BATCH,
    batch_chars: int = BATCH_CHARS,
    stop: Callable[[], bool] | None = None,
    wanted: Callable[[str, str], bool] | None = None,
) -> ImplementationRun:
    """Run `checks` of `cases`; each result goes to `on_result` as soon as it is judged.
    `wanted`, given a case ID and a check, says whether to run it (default: all).

    `stop` is asked before each reply is judged: once it says yes, that reply is not judged
    (it may be the interruption's own doing) and nothing more is sent."""
    options = Options.from_mapping(connection.info.options)
    run = ImplementationRun(connection.info)
    shared = Judging(options, replies_are_reference=connection.is_reference)
    judges = (
        judge_for(plan, shared)
        for case in profiled(cases, options)
        for plan in plan_case(case, options, checks)
        if wanted is None or wanted(plan.case.id, plan.check)
    )
    order: deque[Judge] = deque()
    # `unsupported` holds for an operation as a whole, over the whole run (declines.py).
    declines = Declines()
    settled = declines.settle

    def settle() -> None:
        while order and order[0].pending == 0:
            result = result_of(order.popleft())
            if expected_failures is not None:
                result = expected_failures.apply(result)
            run.results.append(result)
            if on_result is not None:
                on_result(result)

    with _long_lived_untracked():
        for group in _batches(judges, batch, batch_chars, order):
            if stop is not None and stop():
                return run
            replies = connection.answers([request for _, _, request in group])
            for (judging, index, request), reply in zip(group, replies, strict=True):
                if stop is not None and stop():
                    return run
                judging.add(index, request, settled(request.op, reply))
                # Results go out in plan order: only a finished first judge lets any out.
                if order[0].pending == 0:
                    settle()
        settle()
    return run


@contextmanager
def _long_lived_untracked() -> Iterator[None]:
    """Leave what exists before the run (the corpus, the imported modules) out of garbage
    collection while it runs. A run makes hundreds of thousands of short-lived objects, and
    each full collection they set off walked every object of the corpus again: a third of
    the time of a run against a fast implementation. Nothing is left out when the caller
    has frozen objects of its own (a freeze is process-wide)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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
