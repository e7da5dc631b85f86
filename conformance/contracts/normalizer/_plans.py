"""The normalizer's plans: each check of a case is the case's input fed one way (SPEC.md 9):
`whole` as one message, `stream` as recorded, `chars` one character per chunk, `splits` cut
at every point that matters (lazily, `SplitRequests`), all judged against the case's
expectation under the run's option profile."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.contracts.normalizer._chunking import (
    SplitRequests,
    atomic_chunks,
    one_char_chunks,
)
from conformance.model.cases import Case
from conformance.model.options import Options
from conformance.model.plans import CheckPlan
from conformance.model.requests import Request, StreamRequest, WholeRequest

NO_SPLIT_POINTS = "no split points: the content is shorter than two characters"
NO_ATOMIC_SPLIT_POINTS = "no split points: atomic delimiters, and every cut is inside one"


def plan_checks(case: Case, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
    """The plans of `checks` (the normalizer's own, in order) for `case` under `options`."""
    expectation = case.expectation(options)
    if isinstance(expectation, str):
        return [CheckPlan(case, check, [], skip=expectation) for check in checks]
    plans = []
    # Under atomic delimiters (SPEC.md 5.11) no request cuts inside a delimiter: the case's
    # own chunking has such cuts moved to the delimiter's start, the others never make one.
    atomic = options.grammar if options.atomic_delimiters else None
    chunks = case.chunks if atomic is None else atomic_chunks(case.chunks, atomic)
    for check in checks:
        requests: Sequence[Request]
        if check == "whole":
            requests = [WholeRequest(case.content, case.reasoning)]
        elif check == "stream":
            requests = [StreamRequest(chunks)]
        elif check == "chars":
            requests = [StreamRequest(one_char_chunks(chunks, atomic))]
        else:
            requests = SplitRequests(chunks, options.grammar, options.atomic_delimiters)
            if not requests:
                # Rare: worth asking whether only atomic delimiters left no point.
                uncut = atomic is not None and len(SplitRequests(chunks, atomic)) > 0
                skip = NO_ATOMIC_SPLIT_POINTS if uncut else NO_SPLIT_POINTS
                plans.append(CheckPlan(case, check, [], skip=skip))
                continue
        plans.append(CheckPlan(case, check, requests, expectation))
    return plans
