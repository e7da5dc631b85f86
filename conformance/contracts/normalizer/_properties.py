"""The normalizer's fuzz properties (SPEC.md 13): each one Hypothesis test body over the
streams of `conformance.strategies`, run against a target and judged against the reference,
and the replay of a stored failure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance import strategies as cs
from conformance.contracts._fuzzing import Counterexample, FuzzCheck, FuzzTarget, fail
from conformance.model.chunks import Channels
from conformance.model.conservation import kept_text, may_drop, unaccounted
from conformance.model.judge import squeeze
from conformance.reference import Delta, normalize_stream, normalize_whole

if TYPE_CHECKING:
    from hypothesis.strategies import DataObject


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


def differential(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
    """The implementation's channels equal the reference's, for every input and chunking."""
    expected = _joined(normalize_stream(chunks, target.options))
    actual = _joined(target.stream(chunks))
    target.differs(chunks, "the channels differ from the reference's", expected, actual)


def chunking(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
    """Two chunkings of one input give the same channels."""
    assert data is not None, "the chunking property draws a second chunking"
    # Under `atomic_delimiters` the second chunking keeps every delimiter whole too: an
    # implementation declaring it may rely on it (SPEC.md 5.11), as the checks' plans do.
    again = data.draw(cs.rechunkings(chunks, target.options), label="rechunked")
    first = _joined(target.stream(chunks))
    second = _joined(target.stream(again))
    # The case to keep is the chunking the implementation gets wrong, its output the
    # `actual` side (what tells bugs apart), the other chunking's the `expected` one.
    right = first == _joined(normalize_stream(chunks, target.options))
    wrong, output, other = (again, second, first) if right else (chunks, first, second)
    target.differs(
        wrong,
        f"two chunkings of one input disagree: {chunks!r} gave {first!r}, "
        f"{again!r} gave {second!r}",
        other,
        output,
    )


def whole(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
    """The whole form agrees with the stream wherever the spec says they agree."""
    content, reasoning = _content(chunks), _reasoning(chunks)
    reference_stream = _joined(normalize_stream(chunks, target.options))
    if dict(normalize_whole(content, reasoning, target.options)) != reference_stream:
        return  # native reasoning after tags: the forms legitimately differ (SPEC 3.3)
    streamed = _joined(target.stream(chunks))
    whole_form = target.whole(content, reasoning)
    target.differs(chunks, "the whole form disagrees with the stream", streamed, whole_form)


def discipline(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
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


def idempotence(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
    """Normalizing the answer again changes nothing (where the spec's own answer is stable:
    text joined around a removed block can form a delimiter, SPEC 4.1)."""
    if target.options.start_in_reasoning:
        return  # the answer would start inside reasoning: not a fixed point by design
    assistant = _joined(target.stream(chunks))["assistant"]
    # The reference decides where the answer is a fixed point. Under `sections: one` it often
    # is not: after the one block the answer keeps later blocks' delimiters verbatim, which
    # normalized again open a block (tool markers and harmony tool calls stay put: text).
    if normalize_whole(assistant, None, target.options)["assistant"] != assistant:
        return
    again = target.whole(assistant, None)
    target.differs(
        [{"content": assistant, "reasoning": None}],
        "normalizing the answer again changed it",
        {"assistant": assistant, "thinking": ""},
        again,
    )


def conservation(target: FuzzTarget, chunks: list[dict[str, Any]], data: DataObject | None) -> None:
    """Every input character is in exactly one channel, except delimiters and what the
    declared options drop."""
    actual = _joined(target.stream(chunks))
    content = _content(chunks) or ""
    native = "".join(c.get("reasoning") or "" for c in chunks)
    kept = kept_text(target.options, content)
    dropping = may_drop(target.options, native)
    delimiter = target.options.grammar.delimiter
    problem = unaccounted(kept, native, Channels(**actual), dropping, delimiter)
    if problem:
        squeezed = Channels(squeeze(actual["assistant"]), squeeze(actual["thinking"]))
        if unaccounted(squeeze(kept), squeeze(native), squeezed, dropping) is None:
            if target.non_strict is None:
                target.non_strict = Counterexample(
                    chunks, f"whitespace only: {problem}", None, actual
                )
            return
        fail(chunks, problem, None, actual)


PROPERTY_CHECKS: dict[str, FuzzCheck] = {
    "differential": differential,
    "chunking": chunking,
    "whole": whole,
    "discipline": discipline,
    "idempotence": idempotence,
    "conservation": conservation,
}


def replay_check(target: FuzzTarget, chunks: list[dict[str, Any]]) -> None:
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
