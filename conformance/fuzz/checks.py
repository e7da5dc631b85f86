"""The fuzz properties: each one Hypothesis test body over `conformance.strategies`, run
against a `Target` and judged against the reference, and the replay of a stored failure."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance import strategies as cs
from conformance.contracts import normalizer, op_contract
from conformance.corpus.check import unaccounted
from conformance.fuzz.target import Counterexample, PropertyFailure, Target, fail
from conformance.model.chunks import Channels
from conformance.model.judge import squeeze
from conformance.model.results import Verdict
from conformance.reference import Delta, normalize_stream, normalize_whole

#: A property's check: the target, the generated chunks, and Hypothesis' data for more draws.
Check = Callable[[Target, list[dict[str, Any]], st.DataObject], None]


def _joined(deltas: Sequence[Mapping[str, str]] | Sequence[Delta]) -> dict[str, str]:
    """The final channels of a stream, the reference's or an implementation's."""
    return {
        "assistant": "".join(delta["assistant"] for delta in deltas),
        "thinking": "".join(delta["thinking"] for delta in deltas),
    }


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
                fail(
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
    delimiter = target.options.grammar.delimiter
    problem = unaccounted(kept, native, Channels(**actual), may_drop, delimiter)
    if problem:
        squeezed = Channels(squeeze(actual["assistant"]), squeeze(actual["thinking"]))
        if unaccounted(squeeze(kept), squeeze(native), squeezed, may_drop) is None:
            if target.non_strict is None:
                target.non_strict = Counterexample(
                    chunks, f"whitespace only: {problem}", None, actual
                )
            return
        fail(chunks, problem, None, actual)


def contract_property(name: str) -> Check:
    """Another contract's checks on random requests, judged against its reference."""

    def check(target: Target, chunks: list[dict[str, Any]], data: st.DataObject) -> None:
        module = op_contract(name)
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


CHECKS: dict[str, Check] = {
    "differential": differential,
    "chunking": chunking,
    "whole": whole,
    "discipline": discipline,
    "idempotence": idempotence,
    "conservation": conservation,
}


def property_check(name: str) -> Check:
    """The check of the property called `name`: the normalizer's, or a contract's."""
    return CHECKS[name] if name in normalizer.PROPERTIES else contract_property(name)


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
