"""A check's plan and its judge: the shapes in which every contract plans and judges.

A contract (conformance.contracts) turns a case into one `CheckPlan` per check: the requests
to send and what to judge their replies against. For each plan it makes a `Judge`, which
takes the replies as they come, in request order, and gives one `CaseResult`. The engine
sends the requests and feeds the judges; it knows nothing of what a contract checks.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformance.model.cases import CaseIdentity
from conformance.model.options import Options
from conformance.model.requests import Reply, Request
from conformance.model.results import CaseResult, Verdict


class UniformRequests(Sequence[Request]):
    """Requests of one size made only when asked for (the normalizer's `splits`): the
    runner takes them a batch at a time, so only one batch of a long case's exists at once."""

    #: The characters each request carries.
    chars: int

    @abstractmethod
    def label(self, index: int) -> str:
        """How request `index` differs from the others, for messages ("split at 7")."""


@dataclass(slots=True)
class CheckPlan:
    """One check of one case: the requests it sends, and what to judge replies against."""

    case: CaseIdentity
    check: str
    requests: Sequence[Request]
    #: What the replies are judged against, in the contract's own shape.
    expected: Any = None
    #: Why the check does not apply (SKIP); it then sends nothing.
    skip: str | None = None

    def label(self, index: int) -> str:
        """How request `index` cut the input, for messages: "" or "split at N"."""
        if isinstance(self.requests, UniformRequests):
            return self.requests.label(index)
        return ""


@dataclass(slots=True)
class Judging:
    """What the judges of one run share: the run's option profile, and state of each
    contract's own kept across its judges (the normalizer's reference, reset per stream)."""

    options: Options
    #: The replies are the bundled reference's own, in this process (no holdback to measure).
    replies_are_reference: bool = False
    shared: dict[str, Any] = field(default_factory=dict)


class Judge(Protocol):
    """Judges one plan's replies as they arrive, in request order (streaming judgement: a
    judge may keep only what it needs, so a check of thousands of requests holds one reply
    at a time)."""

    plan: CheckPlan
    #: Replies still to come; the result is taken once it is 0.
    pending: int

    def add(self, index: int, request: Request, reply: Reply) -> None: ...

    def result(self) -> CaseResult: ...


def case_result(plan: CheckPlan, verdict: Verdict, reason: str = "") -> CaseResult:
    """A result of the plan's case and check, before any detail is added."""
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
        derived=case.derived.to_json() if case.derived else None,
    )
