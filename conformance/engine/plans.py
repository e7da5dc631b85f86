"""Plans: for each case and check, the requests to send and what to judge replies against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.contracts import all_checks, contract, normalizer, op_contract
from conformance.corpus.cases import Case, ContractCase, Expectation
from conformance.engine.chunking import SplitRequests, one_char_chunks
from conformance.model.options import Options
from conformance.transport.connections import OpRequest, Request, StreamRequest, WholeRequest

NO_SPLIT_POINTS = "no split points: the content is shorter than two characters"


@dataclass(slots=True)
class CheckPlan:
    """One check of one case: the requests it sends, and what to judge replies against.

    `requests` may be lazy (the `splits` check's `SplitRequests`): the runner takes them a
    batch at a time, so only one batch of a long case's requests exists at once.
    """

    case: Case | ContractCase
    check: str
    requests: Sequence[Request]
    expectation: Expectation | None = None
    skip: str | None = None

    def label(self, index: int) -> str:
        """How request `index` cut the input, for messages: "" or "split at N"."""
        if isinstance(self.requests, SplitRequests):
            return f"split at {self.requests.point(index)}"
        return ""


def plan_case(
    case: Case | ContractCase, options: Options, checks: Sequence[str] | None = None
) -> list[CheckPlan]:
    """The plans for a case's checks among `checks` (default: all; checks of other contracts
    are ignored)."""
    checks = all_checks() if checks is None else checks
    if isinstance(case, ContractCase):
        return _plan_contract(case, checks)
    checks = [check for check in checks if check in normalizer.CHECKS]
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


def _plan_contract(case: ContractCase, checks: Sequence[str]) -> list[CheckPlan]:
    module = op_contract(case.contract)
    plans = []
    for check in (c for c in module.CHECKS if c in checks):
        payloads = module.requests(case.input, check)
        requests: list[Request] = [OpRequest(module.NAME, p, module.METHOD) for p in payloads]
        skip = None if requests else module.skip_reason(case.input, check)
        plans.append(CheckPlan(case, check, requests, skip=skip))
    return plans


def result_count(cases: Sequence[Case | ContractCase], checks: Sequence[str]) -> int:
    """How many results running `checks` over `cases` gives: one per case and check of its
    own contract (the progress total; checks of another contract do not apply)."""
    wanted = set(checks)
    total = 0
    for case in cases:
        total += sum(1 for check in contract(case.contract).CHECKS if check in wanted)
    return total
