"""The egress contract (SPEC.md section 13): reference, judge, corpus, SPEC examples, and the
property that egress keeps its invariants and never modifies the stored history."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.contracts import egress
from conformance.corpus.cases import bundled_cases_dir, schema

from .helpers import examples

SPEC = Path(__file__).resolve().parent.parent / "SPEC.md"
CASES = bundled_cases_dir() / "egress.yaml"

TOOL_CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
HISTORY = [
    {"role": "user", "content": "Q1"},
    {"role": "assistant", "content": "A1", "thinking": ["R1"]},
    {"role": "user", "content": "Q2"},
    {"role": "assistant", "content": None, "thinking": ["R2"], "tool_calls": [TOOL_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
]
INCLUDE_ALL = {"includeInContext": True, "stripFromContext": "none"}


def run(history: list[dict[str, Any]], settings: object) -> dict[str, Any]:
    return egress.reference({"history": history, "settings": settings})


def judged(expected: dict, reply: object, settings: object = INCLUDE_ALL) -> tuple[str, str]:
    case_input = {"history": HISTORY, "settings": settings}
    verdict, reason, _ = egress.judge(case_input, expected, "egress", [reply])  # type: ignore[list-item]
    return verdict, reason


# ------------------------------------------------------------------ the interface


def test_interface_names():
    assert egress.NAME == "egress" == egress.METHOD
    assert egress.CHECKS == ("egress",)
    assert schema(egress.SCHEMA)["properties"]["contract"] == {"const": "egress"}


def test_requests_send_a_copy_of_the_case_input():
    case_input = {"history": copy.deepcopy(HISTORY), "settings": {"includeInContext": True}}
    [payload] = egress.requests(case_input, "egress")
    assert payload == case_input
    payload["history"][1]["thinking"].append("changed by an implementation")
    assert case_input["history"] == HISTORY


def test_requests_reject_an_unknown_check():
    with pytest.raises(ValueError, match="no check 'render'"):
        egress.requests({"history": [], "settings": {}}, "render")


# ------------------------------------------------------------------ the reference


def test_reference_strip_then_include():
    none = run(HISTORY, INCLUDE_ALL)["messages"]
    assert [m.get("reasoning_content") for m in none] == [None, "R1", None, "R2", None]
    last = run(HISTORY, {"includeInContext": True, "stripFromContext": "allButLast"})
    assert [m.get("reasoning_content") for m in last["messages"]] == [None, None, None, "R2", None]
    for off in (
        {},
        {"includeInContext": False},
        {"includeInContext": True, "stripFromContext": "all"},
    ):
        assert all("reasoning_content" not in m for m in run(HISTORY, off)["messages"])


def test_reference_keeps_tool_call_fields_and_drops_thinking():
    message = run(HISTORY, INCLUDE_ALL)["messages"][3]
    assert message == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "R2",
        "tool_calls": [TOOL_CALL],
    }


def test_reference_joins_non_empty_blocks_with_a_blank_line():
    history = [{"role": "assistant", "content": "x", "thinking": ["", "a", "", " b "]}]
    assert (
        run(history, {"includeInContext": True})["messages"][0]["reasoning_content"] == "a\n\n b "
    )


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"include_in_context": True}, "include_in_context"),
        ({"stripFromContext": "AllButLast"}, '"AllButLast"'),
        ({"stripFromContext": None}, "null"),
        ({"includeInContext": "true"}, '"true"'),
        ({"includeInContext": 1}, "1"),
        ("all", "object"),
        (None, "object"),
    ],
)
def test_reference_rejects_invalid_settings_naming_them(bad: object, named: str):
    reply = run(HISTORY, bad)
    assert set(reply) == {"rejected"}
    assert named in reply["rejected"]


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("nope", "must be a list"),
        ([["user", "hi"]], "not an object"),
        ([{"role": "robot", "content": "x"}], "role"),
        ([{"role": "user", "content": "x", "thinking": ["t"]}], "only assistant"),
        ([{"role": "assistant", "content": "x", "thinking": "t"}], "list of strings"),
        ([{"role": "assistant", "content": "x", "reasoning_content": "r"}], "unknown field"),
    ],
)
def test_reference_refuses_a_malformed_history(history: object, message: str):
    with pytest.raises(ValueError, match=message):
        run(history, {})  # type: ignore[arg-type]


def test_reply_shares_nothing_with_the_stored_history():
    history = copy.deepcopy(HISTORY)
    reply = run(history, INCLUDE_ALL)
    reply["messages"][3]["tool_calls"][0]["id"] = "changed"
    reply["messages"][1]["content"] = "changed"
    assert history == HISTORY


# ------------------------------------------------------------------ the judge


def test_judge_passes_the_reference_reply():
    expected = run(HISTORY, INCLUDE_ALL)
    assert judged(expected, copy.deepcopy(expected)) == ("PASS", "")


def test_judge_passes_any_rejection_reason():
    assert judged({"rejected": True}, {"rejected": "no"}, {"x": 1}) == ("PASS", "")


def with_change(index: int, **fields: Any) -> dict[str, Any]:
    reply = run(HISTORY, INCLUDE_ALL)
    reply["messages"][index].update(fields)
    return reply


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            with_change(0, reasoning_content=""),
            'message 1 (user), reasoning_content: expected absent, got ""'
            ' (an empty reasoning_content is omitted, never sent as "": EC-007)',
        ),
        (
            with_change(3, reasoning_content="R1\n\nR2"),
            'message 4 (assistant), reasoning_content: expected "R2", got "R1\\n\\nR2"',
        ),
        (
            with_change(1, thinking=["R1"]),
            'message 2 (assistant), thinking: expected absent, got ["R1"]',
        ),
        (
            with_change(3, content=""),
            'message 4 (assistant), content: expected null, got ""',
        ),
        (
            with_change(3, tool_calls=[{**TOOL_CALL, "id": 1}]),
            "message 4 (assistant), tool_calls: expected",
        ),
        (
            {"messages": run(HISTORY, INCLUDE_ALL)["messages"][:4]},
            "expected 5 messages, got 4 (egress sends every stored message, in order)",
        ),
        (
            {"messages": run(HISTORY, INCLUDE_ALL)["messages"][::-1]},
            'message 1 (user), role: expected "user", got "tool"',
        ),
        ({"rejected": "nope"}, "were rejected: nope"),
    ],
)
def test_judge_fails_a_wrong_reply_naming_message_and_field(reply: dict, reason: str):
    verdict, why = judged(run(HISTORY, INCLUDE_ALL), reply)
    assert verdict == "FAIL"
    assert reason in why


def test_judge_names_the_rule_for_reasoning_sent_while_off():
    off = {"includeInContext": False}
    verdict, why = judged(run(HISTORY, off), run(HISTORY, INCLUDE_ALL), off)
    assert verdict == "FAIL"
    assert why == (
        'message 2 (assistant), reasoning_content: expected absent, got "R1" '
        "(includeInContext is false or absent: no reasoning goes out, BR-001)"
    )


def test_judge_fails_messages_where_a_rejection_is_due():
    verdict, why = judged({"rejected": True}, run(HISTORY, {}), {"stripFromContext": "last"})
    assert verdict == "FAIL"
    assert "must be rejected (ERR-001); the reply sent 5 messages instead" in why


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ([], "the reply is not an object: []"),
        ({}, "exactly one of `messages` or `rejected`; it has neither"),
        ({"messages": [], "rejected": "x"}, "it has messages, rejected"),
        ({"messages": [], "extra": 1}, "it has extra, messages"),
        ({"messages": {}}, "`messages` must be a list, not {}"),
        ({"messages": ["user"]}, 'message 1 is not an object: "user"'),
        (
            {"messages": [{"role": "assistant", "content": "", "reasoning_content": None}]},
            "message 1: reasoning_content must be a string, not null",
        ),
        ({"rejected": ""}, "`rejected` must be a non-empty reason string"),
        ({"rejected": True}, "`rejected` must be a non-empty reason string, not true"),
    ],
)
def test_judge_fails_a_malformed_reply_saying_what_is_wrong(reply: object, reason: str):
    verdict, why = judged(run(HISTORY, INCLUDE_ALL), reply)
    assert verdict == "FAIL"
    assert reason in why


def test_judge_wants_exactly_one_reply():
    expected = run(HISTORY, INCLUDE_ALL)
    verdict, why, actual = egress.judge({"history": HISTORY}, expected, "egress", [])
    assert (verdict, why, actual) == ("FAIL", "expected one reply, got 0", None)


# ------------------------------------------------------------------ corpus and SPEC examples


#: libyaml's loader where PyYAML has it, as the corpus loader does: each xdist worker reads
#: the file as it collects the module.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def corpus_cases() -> list[Any]:
    data = yaml.load(CASES.read_text("utf-8"), LOADER)
    jsonschema.validate(data, schema(egress.SCHEMA))
    return [pytest.param(case, id=case["id"]) for case in data["cases"]]


@pytest.mark.parametrize("case", corpus_cases())
def test_reference_passes_every_corpus_case(case: dict[str, Any]):
    [payload] = egress.requests(case["input"], "egress")
    reply = egress.reference(payload)
    verdict, reason, _ = egress.judge(case["input"], case["expected"], "egress", [reply])
    assert (verdict, reason) == ("PASS", "")


def test_corpus_covers_the_seed():
    text = CASES.read_text("utf-8")
    for rule in ("BR-001", "BR-002", "BR-005", "BR-008", "BR-009", "EC-001", "EC-002"):
        assert f'test: "{rule}:' in text, rule
    for rule in ("EC-004", "EC-006", "EC-007", "ERR-001"):
        assert f'test: "{rule}:' in text, rule


EXAMPLE = re.compile(r"^```egress\n(.*?)^```$", re.S | re.M)


def spec_examples() -> list[Any]:
    text = SPEC.read_text("utf-8")
    found = []
    for match in EXAMPLE.finditer(text):
        fields = {}
        for line in filter(str.strip, match.group(1).splitlines()):
            key, _, value = line.partition(":")
            fields[key.strip()] = json.loads(value)
        line_number = text.count("\n", 0, match.start()) + 1
        found.append(pytest.param(fields, id=f"SPEC.md:{line_number}"))
    return found


@pytest.mark.parametrize("example", spec_examples())
def test_spec_examples_hold(example: dict[str, Any]):
    reply = run(example["history"], example["settings"])
    if "rejected" in example:
        assert example["rejected"] is True and set(reply) == {"rejected"}
    else:
        assert reply == {"messages": example["messages"]}


def test_spec_has_an_example_per_rule():
    assert len(spec_examples()) >= 9


# ------------------------------------------------------------------ the property


texts = st.text(alphabet=st.sampled_from("ab \n"), max_size=4)
tool_calls = st.lists(
    st.fixed_dictionaries({"id": st.sampled_from(["c1", "c2"]), "type": st.just("function")}),
    min_size=1,
    max_size=2,
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from([*egress.ROLES, "assistant", "assistant"]))
    message: dict[str, Any] = {"role": role, "content": draw(st.none() | texts)}
    if role == "assistant":
        if draw(st.booleans()):
            blocks = st.sampled_from(["r", "", "\n"]) | texts
            message["thinking"] = draw(st.lists(blocks, max_size=3))
        if draw(st.booleans()):
            message["tool_calls"] = draw(tool_calls)
    if role == "tool":
        message["tool_call_id"] = "c1"
    if draw(st.booleans()):
        message["name"] = "n"
    return message


histories = st.lists(messages(), max_size=8)
ABSENT = object()


@st.composite
def valid_settings(draw: st.DrawFn) -> dict[str, Any]:
    """Settings with each key absent or set; includeInContext true half of the time, so that
    the strip policies are exercised."""
    chosen = {
        "includeInContext": draw(st.sampled_from([True, True, False, ABSENT])),
        "stripFromContext": draw(st.sampled_from(["allButLast", "none", "all", ABSENT])),
    }
    return {key: value for key, value in chosen.items() if value is not ABSENT}


def scramble(value: Any) -> None:
    """Empty every list and dict inside `value`, as a caller editing the reply might."""
    children = value.values() if isinstance(value, dict) else value
    for child in list(children):
        if isinstance(child, dict | list):
            scramble(child)
    value.clear()


def has_reasoning(message: dict[str, Any]) -> bool:
    return any(message.get("thinking", []))


@examples(100, 300)
def test_egress_invariants_hold_and_history_is_unchanged(max_examples):
    @settings(max_examples=max_examples, deadline=None)
    @given(histories, valid_settings())
    def holds(history, request_settings):
        stored = copy.deepcopy(history)
        sent = run(history, request_settings)["messages"]

        assert history == stored  # BR-002, BR-009: egress never modifies the stored history
        assert len(sent) == len(history)
        for out, message in zip(sent, history, strict=True):
            # Order and every field but the reasoning are unchanged.
            assert {k: v for k, v in out.items() if k != "reasoning_content"} == {
                k: v for k, v in message.items() if k != "thinking"
            }
            assert out.get("reasoning_content") != ""  # EC-007
            if "reasoning_content" in out:
                assert has_reasoning(message)
                blocks = [b for b in message["thinking"] if b]
                assert out["reasoning_content"] == "\n\n".join(blocks)

        carrying = [i for i, out in enumerate(sent) if "reasoning_content" in out]
        with_reasoning = [i for i, message in enumerate(history) if has_reasoning(message)]
        include = request_settings.get("includeInContext", False)
        strip = request_settings.get("stripFromContext", "none")
        if not include or strip == "all":
            assert carrying == []  # BR-001, BR-005
        elif strip == "allButLast":
            assert carrying == with_reasoning[-1:]  # only the most recent reasoning
        else:
            # Every message's reasoning goes out on that message, tool calls included (EC-006).
            assert carrying == with_reasoning

        scramble(sent)
        assert history == stored  # the reply shares no objects with the history

    holds()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(histories, st.dictionaries(st.text(max_size=3), st.none() | st.integers(), min_size=1))
def test_invalid_settings_are_rejected_and_history_unchanged(history, bad):
    stored = copy.deepcopy(history)
    reply = run(history, bad)
    assert set(reply) == {"rejected"} and reply["rejected"]
    assert history == stored


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(histories, valid_settings())
def test_judge_accepts_the_reference_and_flags_an_empty_reasoning_content(
    history, request_settings
):
    case_input = {"history": history, "settings": request_settings}
    expected = run(history, request_settings)
    assert egress.judge(case_input, expected, "egress", [copy.deepcopy(expected)])[0] == "PASS"
    if expected["messages"]:
        broken = copy.deepcopy(expected)
        broken["messages"][-1]["reasoning_content"] = ""
        verdict, reason, _ = egress.judge(case_input, expected, "egress", [broken])
        assert verdict == "FAIL" and "EC-007" in reason
