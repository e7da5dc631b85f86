"""The normalizer's plans: each check of a case is the case's input fed one way (SPEC.md 9):
`whole` as one message, `stream` as recorded, `chars` one character per chunk, `splits` cut
at every point that matters (lazily, `SplitRequests`), all judged against the case's
expectation under the run's option profile."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.contracts.normalizer._chunking import SplitRequests, one_char_chunks
from conformance.model.cases import Case
from conformance.model.options import Options
from conformance.model.plans import CheckPlan
from conformance.model.requests import Request, StreamRequest, WholeRequest

NO_SPLIT_POINTS = "no split points: the content is shorter than two characters"


def plan_checks(case: Case, options: Options, checks: Sequence[str]) -> list[CheckPlan]:
    """The plans of `checks` (the normalizer's own, in order) for `case` under `options`."""
    expectation = case.expectation(options)
    if isinstance(expectation, str):
        return [CheckPlan(case, check, [], skip=expectation) for check in checks]
    plans = []
    for check in checks:
        requests: Sequence[Request]
        if check == "whole":
            requests = [WholeRequest(case.content, case.reasoning)]
        elif check == "stream":
            requests = [StreamRequest(case.chunks)]
        elif check == "chars":
            requests = [StreamRequest(one_char_chunks(case.chunks))]
        else:
            requests = SplitRequests(case.chunks, options.grammar)
            if not requests:
                plans.append(CheckPlan(case, check, [], skip=NO_SPLIT_POINTS))
                continue
        plans.append(CheckPlan(case, check, requests, expectation))
    return plans
