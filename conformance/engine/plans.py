"""Plans: the cases that run under a profile, and for each case and check the requests to
send, each from the case's own contract."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from conformance.contracts import all_checks, contract, contract_of
from conformance.model.cases import CaseIdentity
from conformance.model.options import Options
from conformance.model.plans import CheckPlan


def profiled(cases: Iterable[CaseIdentity], options: Options) -> list[CaseIdentity]:
    """The cases that run under the profile `options`, in order: under an opt-in profile,
    a contract may have derived cases stand in for written ones (SPEC 5.6)."""
    return [form for case in cases for form in contract_of(case).forms(case, options)]


def plan_case(
    case: CaseIdentity, options: Options, checks: Sequence[str] | None = None
) -> list[CheckPlan]:
    """The plans for a case's checks among `checks` (default: all; checks of other contracts
    are ignored)."""
    return contract_of(case).plan(case, options, all_checks() if checks is None else checks)


def result_count(
    cases: Sequence[CaseIdentity],
    checks: Sequence[str],
    options: Options | None = None,
    wanted: Callable[[str, str], bool] | None = None,
) -> int:
    """How many results running `checks` over `cases` gives: one per case and check of its
    own contract (the progress total; checks of another contract do not apply).

    With `options`, over the cases that run under that profile (`profiled`: derived cases
    stand in for written ones, two for one under `start_in_reasoning`), as the runner runs
    them; with `wanted`, only the (case ID, check) pairs it accepts, as the runner's."""
    wanted_checks = set(checks)
    total = 0
    for case in cases if options is None else profiled(cases, options):
        total += sum(
            1
            for check in contract(case.contract).CHECKS
            if check in wanted_checks and (wanted is None or wanted(case.id, check))
        )
    return total
