"""Property-based fuzzing of an implementation, with shrinking to ready-to-commit cases.

Each property is one Hypothesis test over `conformance.strategies`, run against a connection
(in process or a pipelined subprocess). A failure is shrunk by Hypothesis, and the minimal
input becomes a case file whose expectations come from the reference.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from conformance import strategies as cs
from conformance.contracts import contract
from conformance.corpus.check import unaccounted
from conformance.model.chunks import Channels, Chunk
from conformance.model.judge import squeeze
from conformance.model.options import Options
from conformance.model.results import NORMALIZER_PROPERTIES, FuzzResult, Verdict
from conformance.reference import join, normalize_stream, normalize_whole
from conformance.transport.connections import (
    Connection,
    Ok,
    OpRequest,
    Reply,
    StreamRequest,
    WholeRequest,
)
from conformance.transport.connections import Unsupported as UnsupportedReply

#: Examples per Hypothesis run; a time budget runs slices of this size until time is up.
SLICE = 250


@dataclass(frozen=True, slots=True)
class Counterexample:
    chunks: list[dict[str, str | None]]
    reason: str
    expected: Mapping[str, str] | None = None
    actual: Mapping[str, str] | None = None
    #: Set when the implementation failed to answer rather than answered wrongly.
    error: bool = False
    #: For another contract's property: its name and the request payload that failed.
    contract: str | None = None
    payload: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"chunks": self.chunks, "reason": self.reason}
        if self.expected is not None:
            data["expected"] = dict(self.expected)
        if self.actual is not None:
            data["actual"] = dict(self.actual)
        if self.contract is not None:
            data["contract"] = self.contract
            data["input"] = dict(self.payload or {})
        return data


class PropertyFailure(AssertionError):
    """A property does not hold. An AssertionError, which Hypothesis shrinks best: it tells
    other exceptions apart by their message, which here changes with every example."""

    def __init__(self, example: Counterexample) -> None:
        super().__init__(example.reason)
        self.example = example


@dataclass(slots=True)
class Target:
    """What the properties exercise: a live implementation under its declared options."""

    connection: Connection
    options: Options
    examples: int = 0
    #: The first input whose only difference was whitespace (SPEC 8.2: NON_STRICT). It does
    #: not stop the search: real failures may still be found.
    non_strict: Counterexample | None = None

    def differs(
        self,
        chunks: list[dict[str, Any]],
        reason: str,
        expected: Mapping[str, str],
        actual: Mapping[str, str],
    ) -> None:
        """Fail unless the channels are equal; note a whitespace-only difference."""
        if dict(actual) == dict(expected):
            return
        if all(squeeze(actual[k]) == squeeze(expected[k]) for k in ("assistant", "thinking")):
            if self.non_strict is None:
                self.non_strict = Counterexample(
                    chunks, f"whitespace only: {reason}", expected, actual
                )
            return
        _fail(chunks, reason, expected, actual)

    def stream(self, chunks: list[dict[str, Any]]) -> list[dict[str, str]]:
        request = StreamRequest([Chunk(c.get("content"), c.get("reasoning")) for c in chunks])
        reply = self.connection.send([request])[0]
        return _answer(reply, chunks).deltas or []

    def whole(self, content: str | None, reasoning: str | None) -> dict[str, str]:
        reply = self.connection.send([WholeRequest(content, reasoning)])[0]
        chunks = [{"content": content, "reasoning": reasoning}]
        return _answer(reply, chunks).channels or {}

    def op(self, name: str, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Another contract's op; raises Unsupported when the implementation has none."""
        reply = self.connection.send([OpRequest(name, payload, method)])[0]
        if isinstance(reply, UnsupportedReply):
            raise Unsupported(reply.message)
        if not isinstance(reply, Ok):
            raise PropertyFailure(
                Counterexample(
                    [],
                    f"the implementation failed: {reply.reason}",
                    error=True,
                    contract=name,
                    payload=payload,
                )
            )
        return reply.value or {}


class Unsupported(Exception):
    """The implementation does not answer this contract's op: the property is SKIP."""


def _answer(reply: Reply, chunks: list[dict[str, Any]]) -> Ok:
    if not isinstance(reply, Ok):
        raise PropertyFailure(
            Counterexample(chunks, f"the implementation failed: {reply.reason}", error=True)
        )
    return reply


def _fail(
    chunks: list[dict[str, Any]],
    reason: str,
    expected: Mapping[str, str] | None = None,
    actual: Mapping[str, str] | None = None,
) -> None:
    raise PropertyFailure(Counterexample(chunks, reason, expected, actual))


def _joined(deltas: Sequence[Mapping[str, str]]) -> dict[str, str]:
    return dict(join(deltas))


def _content(chunks: Sequence[Mapping[str, Any]]) -> str | None:
    parts = [c["content"] for c in chunks if c.get("content") is not None]
    return "".join(parts) if parts else None


def _reasoning(chunks: Sequence[Mapping[str, Any]]) -> str | None:
    parts = [c["reasoning"] for c in chunks if c.get("reasoning")]
    return "".join(parts) if parts else None


def differential(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """The implementation's channels equal the reference's, for every input and chunking."""
    expected = _joined(normalize_stream(chunks, target.options))
    actual = _joined(target.stream(chunks))
    target.differs(chunks, "the channels differ from the reference's", expected, actual)


def chunking(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """Two chunkings of one input give the same channels."""
    again = data.draw(cs.rechunkings(chunks), label="rechunked")
    first = _joined(target.stream(chunks))
    second = _joined(target.stream(again))
    # The case to keep is the chunking the implementation gets wrong.
    wrong = again if first == _joined(normalize_stream(chunks, target.options)) else chunks
    target.differs(
        wrong,
        f"two chunkings of one input disagree: {chunks!r} gave {first!r}, "
        f"{again!r} gave {second!r}",
        first,
        second,
    )


def whole(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """The whole form agrees with the stream wherever the spec says they agree."""
    content, reasoning = _content(chunks), _reasoning(chunks)
    reference_stream = _joined(normalize_stream(chunks, target.options))
    if dict(normalize_whole(content, reasoning, target.options)) != reference_stream:
        return  # native reasoning after tags: the forms legitimately differ (SPEC 3.3)
    streamed = _joined(target.stream(chunks))
    whole_form = target.whole(content, reasoning)
    target.differs(chunks, "the whole form disagrees with the stream", streamed, whole_form)


def discipline(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """No delta releases text the final answer does not hold at that place (a delimiter or a
    fragment that later completes), and nothing remains after the flush."""
    expected = _joined(normalize_stream(chunks, target.options))
    deltas = target.stream(chunks)
    sofar = {"assistant": "", "thinking": ""}
    for step, delta in enumerate(deltas):
        for name in sofar:
            sofar[name] += delta[name]
            # Whitespace is compared loosely here too: trimming is NON_STRICT (SPEC 8.2).
            if not squeeze(expected[name]).startswith(squeeze(sofar[name])):
                where = f"chunk {step}" if step < len(chunks) else "the final flush"
                _fail(
                    chunks,
                    f"after {where} the {name} channel holds {sofar[name]!r}, "
                    f"which the final text {expected[name]!r} does not start with",
                    expected,
                    _joined(deltas),
                )
    target.differs(chunks, "text is missing after the flush", expected, sofar)


def idempotence(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """Normalizing the answer again changes nothing (where the spec's own answer is stable:
    text joined around a removed block can form a delimiter, SPEC 4.1)."""
    if target.options.start_in_reasoning:
        return  # the answer would start inside reasoning: not a fixed point by design
    assistant = _joined(target.stream(chunks))["assistant"]
    if normalize_whole(assistant, None, target.options)["assistant"] != assistant:
        return
    again = target.whole(assistant, None)
    target.differs(
        [{"content": assistant, "reasoning": None}],
        "normalizing the answer again changed it",
        {"assistant": assistant, "thinking": ""},
        again,
    )


def conservation(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
    """Every input character is in exactly one channel, except delimiters and what the
    declared options drop."""
    actual = _joined(target.stream(chunks))
    content = _content(chunks) or ""
    native = "".join(c.get("reasoning") or "" for c in chunks)
    kept = target.options.grammar.delimiter.sub("", content)
    may_drop = target.options.unclosed_at_end == "drop" or (
        target.options.native_with_tags == "native_only" and bool(native)
    )
    problem = unaccounted(kept, native, Channels(**actual), may_drop)
    if problem:
        squeezed = Channels(squeeze(actual["assistant"]), squeeze(actual["thinking"]))
        if unaccounted(squeeze(kept), squeeze(native), squeezed, may_drop) is None:
            if target.non_strict is None:
                target.non_strict = Counterexample(
                    chunks, f"whitespace only: {problem}", None, actual
                )
            return
        _fail(chunks, problem, None, actual)


def contract_property(name: str) -> Callable[[Target, list[dict[str, Any]], st.DataObject], None]:
    """Another contract's checks on random requests, judged against its reference."""

    def check(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
        module = contract(name)
        case_input = data.draw(module.inputs(), label="input")
        expected = module.expected_for(case_input)
        for check_name in module.CHECKS:
            payloads = module.requests(case_input, check_name)
            bodies = [target.op(name, module.METHOD, payload) for payload in payloads]
            if not payloads:
                continue
            verdict, reason, _ = module.judge(case_input, expected, check_name, bodies)
            if verdict != Verdict.PASS:
                raise PropertyFailure(
                    Counterexample(
                        [],
                        f"{check_name}: {reason} (input {json.dumps(case_input)[:300]})",
                        contract=name,
                        payload=case_input,
                    )
                )

    check.__doc__ = f"The {name} contract's checks hold against its reference."
    return check


CHECKS: dict[str, Callable[[Target, list[dict[str, Any]], st.DataObject], None]] = {
    "differential": differential,
    "chunking": chunking,
    "whole": whole,
    "discipline": discipline,
    "idempotence": idempotence,
    "conservation": conservation,
}


def property_check(name: str) -> Callable[[Target, list[dict[str, Any]], st.DataObject], None]:
    """The check of the property called `name`: the normalizer's, or a contract's."""
    return CHECKS[name] if name in NORMALIZER_PROPERTIES else contract_property(name)


def replay_check(target: Target, chunks: list[dict[str, Any]]) -> None:
    """Whether a stored counterexample still fails: the implementation still disagrees with
    the reference on it, as a stream or (where the forms must agree) as a whole message."""
    expected = _joined(normalize_stream(chunks, target.options))
    target.differs(
        chunks, "a failure found earlier still fails", expected, _joined(target.stream(chunks))
    )
    content, reasoning = _content(chunks), _reasoning(chunks)
    if dict(normalize_whole(content, reasoning, target.options)) == expected:
        target.differs(
            chunks,
            "a failure found earlier still fails (whole form)",
            expected,
            target.whole(content, reasoning),
        )


def run_property(
    name: str,
    target: Target,
    *,
    max_examples: int,
    seed: int,
    database: ExampleDatabase | None = None,
    key: bytes = b"",
    deadline: float | None = None,
) -> FuzzResult:
    """Run one property: first replay the failures stored in `database` under `key`, then
    `max_examples` new examples, or slices of examples until `deadline` (a
    `time.monotonic()` value). The first failure is shrunk, stored and returned.

    Generation is seeded, so a seed replays a run exactly; the database is ours, not
    Hypothesis' own (which a fixed seed switches off), holding minimal failing inputs.
    """
    check = property_check(name)
    start = time.monotonic()
    target.examples = 0
    target.non_strict = None

    def result(
        verdict: Verdict, used_seed: int, example: Counterexample | None = None, reason: str = ""
    ) -> FuzzResult:
        return FuzzResult(
            name,
            verdict,
            target.examples,
            time.monotonic() - start,
            used_seed,
            example.reason if example else reason,
            example.to_json() if example else None,
        )

    is_contract = name not in NORMALIZER_PROPERTIES
    stored = sorted(database.fetch(key), key=len) if database and not is_contract else []
    for value in stored:
        chunks = json.loads(value)
        target.examples += 1
        try:
            replay_check(target, chunks)
        except PropertyFailure as failure:
            example = failure.example
            return result(Verdict.ERROR if example.error else Verdict.FAIL, seed, example)
        assert database is not None
        database.delete(key, value)  # fixed since: forget it

    found: list[Counterexample] = []

    def test(chunks: list[dict[str, Any]], data: st.DataObject) -> None:
        target.examples += 1
        try:
            check(target, chunks, data)
        except PropertyFailure as failure:
            found.append(failure.example)
            raise

    slice_seed = seed
    while True:
        budget = max_examples if deadline is None else SLICE
        runner = settings(
            max_examples=budget,
            database=None,
            deadline=None,
            derandomize=False,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            # No explain phase: its extra runs would overwrite the shrunk counterexample.
            phases=[Phase.explicit, Phase.generate, Phase.target, Phase.shrink],
        )(hypothesis.given(cs.streams(target.options), st.data())(test))
        try:
            hypothesis.seed(slice_seed)(runner)()
        except Unsupported as unsupported:
            return result(Verdict.SKIP, seed, reason=f"unsupported: {unsupported}")
        except PropertyFailure:
            example = found[-1]
            if database is not None and not is_contract:
                database.save(key, json.dumps(example.chunks).encode())
            return result(Verdict.ERROR if example.error else Verdict.FAIL, slice_seed, example)
        except Exception as error:  # Hypothesis itself gave up: report it, do not crash
            return result(Verdict.ERROR, slice_seed, reason=f"{type(error).__name__}: {error}")
        if deadline is None or time.monotonic() >= deadline:
            note = target.non_strict
            return result(Verdict.NON_STRICT if note else Verdict.PASS, seed, note)
        slice_seed += 1
