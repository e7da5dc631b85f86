"""The egress contract (SPEC.md section 13): which stored reasoning goes back to a provider.

A request carries a stored conversation history and the reasoning settings in force for this
request; the reply is the outgoing message list, or a rejection of invalid settings. The
stored history is input only: egress never modifies it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.model.results import Verdict

if TYPE_CHECKING:  # Hypothesis is imported only for fuzzing: it is slow to import
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "BLOCK_SEPARATOR",
    "CHECKS",
    "DEFAULTS",
    "METHOD",
    "NAME",
    "PROPERTIES",
    "ROLES",
    "SCHEMA",
    "STORED_FIELDS",
    "STRIP_POLICIES",
    "expected_for",
    "guess_taxonomy",
    "inputs",
    "judge",
    "reference",
    "requests",
    "settings_problem",
    "skip_reason",
    "stored_reasoning",
]

NAME = "egress"
SCHEMA = "egress-case-file.schema.json"
CHECKS = ("egress",)
PROPERTIES = (NAME,)
METHOD = "egress"

#: The settings an egress request may carry, and their values when absent (BR-001).
DEFAULTS: Mapping[str, Any] = {"includeInContext": False, "stripFromContext": "none"}
STRIP_POLICIES = ("all", "allButLast", "none")
ROLES = ("system", "user", "assistant", "tool")
#: Fields of a stored message; all but `thinking` go out unchanged.
STORED_FIELDS = ("role", "content", "thinking", "tool_calls", "tool_call_id", "name")
#: Several remaining thinking blocks of one message go out as one string joined with this.
BLOCK_SEPARATOR = "\n\n"
#: Field order for naming the first difference in a message (others follow, sorted).
_FIELD_ORDER = ("role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name")


# ------------------------------------------------------------------ the reference


def reference(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The outgoing messages for `payload` ({history, settings}), or a rejection (ERR-001).

    Raises ValueError for a malformed history (a harness or case error, not a behaviour)."""
    settings = payload.get("settings", {})
    problem = settings_problem(settings)
    if problem:
        return {"rejected": problem}
    history = _checked_history(payload.get("history"))
    include = settings.get("includeInContext", DEFAULTS["includeInContext"])
    strip = settings.get("stripFromContext", DEFAULTS["stripFromContext"])
    kept = _kept_reasoning(history, strip)
    messages: list[dict[str, Any]] = []
    for index, stored in enumerate(history):
        # A new dict per message, deep copies of the values: the stored history stays as it
        # was (BR-002, BR-009) whatever the caller later does with the reply.
        outgoing = {k: copy.deepcopy(v) for k, v in stored.items() if k != "thinking"}
        reasoning = kept.get(index, "")
        if include and reasoning:  # an empty string is never sent (EC-007)
            outgoing["reasoning_content"] = reasoning
        messages.append(outgoing)
    return {"messages": messages}


def settings_problem(settings: object) -> str:
    """Why `settings` are invalid (ERR-001), or "" when they are valid."""
    if not isinstance(settings, dict):
        return f"settings must be an object, not {json.dumps(settings)}"
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        known = ", ".join(DEFAULTS)
        return f"unknown setting {unknown[0]!r}: the egress settings are {known}"
    include = settings.get("includeInContext", False)
    if not isinstance(include, bool):
        return f"includeInContext must be true or false, not {json.dumps(include)}"
    strip = settings.get("stripFromContext", "none")
    if strip not in STRIP_POLICIES:
        choices = ", ".join(repr(p) for p in STRIP_POLICIES)
        return f"stripFromContext must be one of {choices}, not {json.dumps(strip)}"
    return ""


def stored_reasoning(message: Mapping[str, Any]) -> str:
    """A stored message's reasoning as one string: its non-empty blocks joined (EC-002)."""
    return BLOCK_SEPARATOR.join(block for block in message.get("thinking", ()) if block)


def _kept_reasoning(history: Sequence[Mapping[str, Any]], strip: str) -> dict[int, str]:
    """Message index -> the reasoning that survives the strip policy (BR-005)."""
    reasoning = {i: stored_reasoning(m) for i, m in enumerate(history)}
    reasoning = {i: text for i, text in reasoning.items() if text}
    if strip == "all":
        return {}
    if strip == "allButLast" and reasoning:
        # "Keeping only the most recent reasoning": the last message that has any.
        last = max(reasoning)
        return {last: reasoning[last]}
    return reasoning


def _checked_history(history: object) -> list[dict[str, Any]]:
    """`history` when it is a list of stored messages; ValueError saying what is wrong."""
    if not isinstance(history, list):
        raise ValueError(f"history must be a list of messages, not {json.dumps(history)}")
    for index, message in enumerate(history, 1):
        where = f"history message {index}"
        if not isinstance(message, dict):
            raise ValueError(f"{where} is not an object")
        extra = sorted(set(message) - set(STORED_FIELDS))
        if extra:
            raise ValueError(f"{where} has unknown field {extra[0]!r}")
        if message.get("role") not in ROLES:
            raise ValueError(f"{where} has role {json.dumps(message.get('role'))}")
        thinking = message.get("thinking", [])
        if not isinstance(thinking, list) or not all(isinstance(b, str) for b in thinking):
            raise ValueError(f"{where}: thinking must be a list of strings")
        if thinking and message["role"] != "assistant":
            raise ValueError(f"{where}: only assistant messages carry thinking")
    return history


# ------------------------------------------------------------------ the contract


def requests(case_input: Mapping[str, Any], check: str) -> list[dict[str, Any]]:
    if check not in CHECKS:
        raise ValueError(f"the egress contract has no check {check!r} (it has {CHECKS})")
    # A copy: an in-process implementation that modifies its input must not change the case.
    return [copy.deepcopy({"history": case_input["history"], "settings": case_input["settings"]})]


def judge(
    case_input: Mapping[str, Any], expected: Mapping[str, Any], check: str, replies: Sequence[Any]
) -> tuple[Verdict, str, dict[str, Any] | None]:
    if len(replies) != 1:
        return Verdict.FAIL, f"expected one reply, got {len(replies)}", None
    reply = replies[0]
    if not isinstance(reply, dict):
        return Verdict.FAIL, f"the reply is not an object: {_show(reply)}", None
    malformed = _malformed(reply)
    if malformed:
        return Verdict.FAIL, malformed, reply
    settings = case_input.get("settings")
    if "rejected" in expected:
        if "rejected" in reply:
            return Verdict.PASS, "", reply
        return (
            Verdict.FAIL,
            f"the settings {_show(settings)} are invalid and must be rejected (ERR-001); "
            f"the reply sent {len(reply['messages'])} messages instead",
            reply,
        )
    if "rejected" in reply:
        return (
            Verdict.FAIL,
            f"valid settings {_show(settings)} were rejected: {reply['rejected']}",
            reply,
        )
    difference = _first_difference(expected["messages"], reply["messages"], settings)
    return (Verdict.FAIL, difference, reply) if difference else (Verdict.PASS, "", reply)


def _malformed(reply: Mapping[str, Any]) -> str:
    """What is wrong with the shape of a reply body, or ""."""
    keys = set(reply)
    if keys == {"rejected"}:
        reason = reply["rejected"]
        if not isinstance(reason, str) or not reason.strip():
            return f"`rejected` must be a non-empty reason string, not {_show(reason)}"
        return ""
    if keys != {"messages"}:
        return (
            "the reply must have exactly one of `messages` or `rejected`; "
            f"it has {', '.join(sorted(keys)) or 'neither'}"
        )
    messages = reply["messages"]
    if not isinstance(messages, list):
        return f"`messages` must be a list, not {_show(messages)}"
    for index, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            return f"message {index} is not an object: {_show(message)}"
        if "reasoning_content" in message and not isinstance(message["reasoning_content"], str):
            return (
                f"message {index}: reasoning_content must be a string, "
                f"not {_show(message['reasoning_content'])}"
            )
    return ""


def _first_difference(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]], settings: Any
) -> str:
    for index, (want, got) in enumerate(zip(expected, actual, strict=False), 1):
        fields = [f for f in _FIELD_ORDER if f in want or f in got]
        fields += sorted((set(want) | set(got)) - set(_FIELD_ORDER))
        for field in fields:
            if _same(want.get(field, _ABSENT), got.get(field, _ABSENT)):
                continue
            role = want.get("role", "?")
            reason = (
                f"message {index} ({role}), {field}: expected {_show(want.get(field, _ABSENT))}, "
                f"got {_show(got.get(field, _ABSENT))}"
            )
            return reason + _hint(field, want, got, settings)
    if len(expected) != len(actual):
        return (
            f"expected {len(expected)} messages, got {len(actual)} "
            "(egress sends every stored message, in order)"
        )
    return ""


def _hint(field: str, want: Mapping[str, Any], got: Mapping[str, Any], settings: Any) -> str:
    """The rule a reasoning_content difference breaks, where it is plain which."""
    if field != "reasoning_content":
        return ""
    if got.get("reasoning_content") == "":
        return ' (an empty reasoning_content is omitted, never sent as "": EC-007)'
    if "reasoning_content" in want:
        return ""
    if isinstance(settings, dict) and not settings.get("includeInContext", False):
        return " (includeInContext is false or absent: no reasoning goes out, BR-001)"
    return ""


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT = _Absent()


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, so 1 and true, or 1 and 1.0, are different values."""
    if a is _ABSENT or b is _ABSENT:
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _show(value: Any, limit: int = 80) -> str:
    if value is _ABSENT:
        return "absent"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------ for new cases


def skip_reason(case_input: Mapping[str, Any], check: str) -> str:
    """Every egress case sends its one request: there is nothing to skip."""
    return ""


def expected_for(case_input: Mapping[str, Any]) -> dict[str, Any]:
    """A case's expected output for an input, from the reference (for proposed cases)."""
    reply = reference(copy.deepcopy(dict(case_input)))
    return {"rejected": True} if "rejected" in reply else reply


def guess_taxonomy(case_input: Mapping[str, Any]) -> str:
    """A first guess at a proposed case's taxonomy entry, for the reviewer to confirm."""
    settings = case_input.get("settings")
    if settings_problem(settings):
        return "EGRESS.invalid-settings"
    assert isinstance(settings, dict)
    if not settings.get("includeInContext", DEFAULTS["includeInContext"]):
        return "EGRESS.default-off"
    strip = settings.get("stripFromContext", DEFAULTS["stripFromContext"])
    return {"all": "EGRESS.strip-all", "allButLast": "EGRESS.strip-all-but-last"}.get(
        strip, "EGRESS.strip-none"
    )


def inputs() -> SearchStrategy[dict[str, Any]]:
    from conformance import strategies

    return strategies.egress_requests()
