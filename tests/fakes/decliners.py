"""Implementations that answer `unsupported` to dodge inputs, a protocol program (`cmd:`),
and ones that lack an operation as a whole, for "no green by declining".

    python tests/fakes/decliners.py MODE

    declines-wrong   a per-chunk regular expression (`<think>.*?</think>` on each chunk) that
                     answers `unsupported` to every stream or whole request it would get wrong
    answers-one      answers the first stream request (rightly), declines every other request
    declines-some    the per-chunk regular expression, declining only requests whose content
                     mentions `thinking`: it declines some and fails others
    no-ops           the reference for `stream` and `whole`, without `render` and `egress`
                     (answered `unsupported`, as an implementation without them does)
    stream-only      the reference for `stream` alone: `whole`, `render` and `egress` are
                     answered `unsupported`

The `python:` ones: `NoOps`, the reference normalizer without `render` and `egress`; and
`RendersOnce`, the reference that has `render()` for its first render request only (a
Python implementation declines an op by lacking its method).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

from conformance.contracts import ReferenceImplementation
from conformance.interface import implementation
from conformance.reference import Normalizer, normalize_stream, normalize_whole

_BLOCK = re.compile(r"<think>(.*?)</think>", re.S)


def _per_chunk(chunk: Mapping[str, Any]) -> dict[str, str]:
    content = chunk.get("content") or ""
    thinking = (chunk.get("reasoning") or "") + "".join(_BLOCK.findall(content))
    return {"assistant": _BLOCK.sub("", content), "thinking": thinking}


def _joined(deltas: list[Mapping[str, str]]) -> dict[str, str]:
    return {key: "".join(delta[key] for delta in deltas) for key in ("assistant", "thinking")}


def _regex_reply(request: dict[str, Any], declines: bool) -> dict[str, Any]:
    """The per-chunk regular expression's reply, or `unsupported` where `declines` or where
    (with `declines` None) it would be wrong."""
    if request["op"] == "stream":
        chunks = request["chunks"]
        deltas = [*map(_per_chunk, chunks), {"assistant": "", "thinking": ""}]
        wrong = _joined(deltas) != _joined(list(normalize_stream(chunks)))
        reply: dict[str, Any] = {"deltas": deltas}
    else:
        reply = _per_chunk(request)
        wrong = reply != dict(normalize_whole(request["content"], request["reasoning"]))
    if declines or (declines is None and wrong):
        return {"unsupported": "this input is not supported"}
    return reply


def reply(mode: str, request: dict[str, Any], answered: int) -> dict[str, Any]:
    op = request["op"]
    if op not in ("stream", "whole") or (op, mode) == ("whole", "stream-only"):
        return {"unsupported": f"no {op!r} here"}
    if mode == "declines-wrong":
        return _regex_reply(request, None)
    if mode == "declines-some":
        text = json.dumps(request.get("chunks") or request.get("content"))
        return _regex_reply(request, "thinking" in text)
    if mode == "answers-one":
        if op != "stream" or answered:
            return {"unsupported": "this input is not supported"}
        return {"deltas": list(map(dict, normalize_stream(request["chunks"])))}
    assert mode in ("no-ops", "stream-only"), mode
    if op == "stream":
        return {"deltas": list(map(dict, normalize_stream(request["chunks"])))}
    return dict(normalize_whole(request["content"], request["reasoning"]))


def main(mode: str) -> None:
    answered = 0
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "hello":
            hello = {
                "protocol": 1,
                "implementation": {"name": mode, "version": "1", "language": "python"},
            }
            out: dict[str, Any] = hello
        elif request["op"] == "bye":
            return
        else:
            out = {"id": request["id"], **reply(mode, request, answered)}
            answered += "unsupported" not in out
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


@implementation(name="no-ops")
class NoOps(Normalizer):
    """Right, and without `render` and `egress`: those cases are SKIP, and the run green."""

    def __init__(self) -> None:
        super().__init__()


@implementation(name="renders-once")
class RendersOnce(ReferenceImplementation):
    """Has `render()` until it has rendered once (in this process): declines the rest."""

    rendered: ClassVar[bool] = False

    def __getattribute__(self, name: str) -> Any:
        if name == "render" and RendersOnce.rendered:
            raise AttributeError(name)
        return super().__getattribute__(name)

    def render(self, **payload: Any) -> dict[str, Any]:
        RendersOnce.rendered = True
        return super().render(**payload)


if __name__ == "__main__":
    main(sys.argv[1])
