"""`conformance smoke`: does an implementation speak the protocol at all?

A handful of trivial requests, each expected to come back well-formed. The outputs are
compared with the reference normalizer under the implementation's options; a difference is
shown as one (never as `ok`), but does not fail the smoke test: correctness is what
`conformance run` checks, with the whole corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.model.chunks import Chunk
from conformance.model.requests import Ok, Reply, StreamRequest, Unsupported, WholeRequest
from conformance.reference import Delta, Options, join, normalize_stream, normalize_whole
from conformance.transport.connections import Connection


@dataclass(frozen=True, slots=True)
class SmokeResult:
    name: str
    #: Whether the reply was a well-formed answer (a split, or `unsupported` for the whole form).
    ok: bool
    message: str
    #: Whether the answer is the reference's split under the implementation's options.
    agrees: bool = True

    @property
    def status(self) -> str:
        """`ok`, `DIFF` (well-formed, but not the reference's split) or `FAIL`."""
        if not self.ok:
            return "FAIL"
        return "ok" if self.agrees else "DIFF"


#: (name, request); run in this order, so "fresh state" follows a stream that ended in a block.
REQUESTS: tuple[tuple[str, StreamRequest | WholeRequest], ...] = (
    ("plain text", StreamRequest((Chunk("Hello, world."),))),
    ("one block", StreamRequest((Chunk("<think>plan</think>Answer"),))),
    ("split close tag", StreamRequest((Chunk("<think>plan</thi"), Chunk("nk>Answer")))),
    ("native reasoning", StreamRequest((Chunk("Answer", "plan"),))),
    ("unclosed block", StreamRequest((Chunk("Answer <think>plan"),))),
    ("fresh state", StreamRequest((Chunk("Hello, world."),))),
    ("whole form", WholeRequest("<think>plan</think>Answer", None)),
)


def smoke(connection: Connection) -> list[SmokeResult]:
    options = Options.from_mapping(connection.info.options)
    replies = connection.send([request for _, request in REQUESTS])
    results = []
    first: dict[str, str] | None = None
    for (name, request), reply in zip(REQUESTS, replies, strict=True):
        result = _judge(name, request, reply, options)
        if isinstance(reply, Ok) and result.ok:
            if name == "plain text":
                first = _channels(reply)
            elif name == "fresh state" and first and _channels(reply) != first:
                result = SmokeResult(
                    name,
                    False,
                    f"{_show(_channels(reply))}, but the same stream gave {_show(first)} "
                    "before: state carried over from the previous stream (each stream request "
                    "must start from a fresh normalizer)",
                )
        results.append(result)
    return results


def _judge(
    name: str, request: StreamRequest | WholeRequest, reply: Reply, options: Options
) -> SmokeResult:
    if not isinstance(reply, Ok):
        # Leaving out the whole form is allowed; a stream op is what every implementation has.
        ok = isinstance(reply, Unsupported) and isinstance(request, WholeRequest)
        return SmokeResult(name, ok, reply.reason)
    got = _channels(reply)
    expected = _reference(request, options)
    if got == expected:
        return SmokeResult(name, True, _show(got))
    return SmokeResult(
        name,
        True,
        f"{_show(got)} (the reference gives {_show(expected)} under these options)",
        agrees=False,
    )


def _channels(reply: Ok) -> dict[str, str]:
    if reply.deltas is not None:
        return _plain(join(reply.deltas))
    assert reply.channels is not None
    return dict(reply.channels)


def _reference(request: StreamRequest | WholeRequest, options: Options) -> dict[str, str]:
    if isinstance(request, WholeRequest):
        return _plain(normalize_whole(request.content, request.reasoning, options))
    deltas = normalize_stream([chunk.to_json() for chunk in request.chunks], options)
    return _plain(join(map(_plain, deltas)))


def _plain(split: Delta) -> dict[str, str]:
    """The reference's typed split as the plain channels mapping the replies are."""
    return {"assistant": split["assistant"], "thinking": split["thinking"]}


def _show(channels: dict[str, str]) -> str:
    return f"assistant={channels['assistant']!r} thinking={channels['thinking']!r}"
