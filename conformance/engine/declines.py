"""`unsupported` means an operation is not implemented at all (docs/PROTOCOL.md): the rule
held over one implementation's replies, between the connection and the judges.

The first reply to an operation (`stream`, `whole`, `render`, ...) decides whether the
implementation has it. One that declined it lacks it: its checks are SKIP, and an answer
to it later contradicts that. One that answered it has it: declining some of its inputs
later would pass over exactly the inputs it gets wrong, so each such check is an ERROR
that says why. A timeout decides nothing: no reply came. The judges never see the rule,
only the reply it leaves, and it is the same for every transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.model.requests import Error, Ok, Reply, Request, Timeout, Unsupported

#: The words every check declined this way carries, so a run can count them.
DECLINED = "declined after answering others"
#: The words every check answered after its operation was declined carries.
CONTRADICTED = "answered after declining the first"


def declined_reason(op: str, message: str) -> str:
    return (
        f"{DECLINED}: `unsupported` ({message}) for a `{op}` request, after answering "
        f"`{op}` requests before it; `unsupported` means the operation is not implemented "
        "at all (docs/PROTOCOL.md), so an input that is hard is an ERROR, not a SKIP"
    )


def contradicted_reason(op: str) -> str:
    return (
        f"{CONTRADICTED}: an answer to a `{op}` request, after the first `{op}` request was "
        "answered `unsupported`; `unsupported` means the operation is not implemented at "
        "all (docs/PROTOCOL.md)"
    )


@dataclass(slots=True)
class Declines:
    """Whether each operation is implemented, as the first reply to it said; one per
    implementation and run (or per connection, where requests go one at a time)."""

    #: Operation (or, for `replay`, wire family) -> whether its first reply answered it.
    implemented: dict[str, bool] = field(default_factory=dict)

    def lacks(self, op: str) -> bool:
        """Whether the implementation declined `op` as a whole."""
        return self.implemented.get(op) is False

    def settle(self, op: str, reply: Reply) -> Reply:
        """The reply as the rule leaves it."""
        if reply.__class__ is Ok and self.implemented.get(op):  # the common case, first
            return reply
        if isinstance(reply, Timeout):
            return reply
        implemented = self.implemented.setdefault(op, not isinstance(reply, Unsupported))
        if isinstance(reply, Unsupported) and implemented:
            return Error(declined_reason(op, reply.message), reply.stderr)
        if isinstance(reply, Ok) and not implemented:
            return Error(contradicted_reason(op), reply.stderr)
        return reply

    def replies(self, requests: Sequence[Request], replies: Sequence[Reply]) -> list[Reply]:
        """`settle` for each reply of a batch, in order."""
        return [
            self.settle(request.op, reply) for request, reply in zip(requests, replies, strict=True)
        ]
