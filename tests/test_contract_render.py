"""The rendering contract (SPEC.md section 12): reference renderer, judge, corpus and examples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from conformance.contracts import render
from conformance.contracts.render import CLOSE, OPEN

ROOT = Path(__file__).resolve().parent.parent
RENDER_BLOCK = re.compile(r"^```render\n(.*?)^```$", re.S | re.M)


def payload(*events: tuple[str, str]) -> dict[str, Any]:
    return {"events": [{"type": kind, "text": text} for kind, text in events]}


def outputs(*events: tuple[str, str]) -> list[str]:
    return render.reference(payload(*events))["outputs"]


# -- the reference renderer ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([("thinking", "plan"), ("text", "Answer")], [OPEN + "plan", CLOSE + "Answer"]),
        ([("thinking", "a"), ("thinking", "b")], [OPEN + "a", "b"]),
        ([("thinking", "a"), ("progress", "p"), ("text", "t")], [OPEN + "a", CLOSE + "p", "t"]),
        ([("text", "x"), ("thinking", "y")], ["x", OPEN + "y"]),
        ([("thinking", "a"), ("turn_end", ""), ("thinking", "b")], [OPEN + "a", CLOSE, OPEN + "b"]),
        ([("turn_end", ""), ("text", "t"), ("turn_end", "")], ["", "t", ""]),
        ([("thinking", ""), ("text", "t")], ["", "t"]),
        ([("thinking", "a"), ("text", ""), ("thinking", "b")], [OPEN + "a", "", "b"]),
        ([("thinking", " ")], [OPEN + " "]),
        ([], []),
    ],
)
def test_reference_rules(events: list[tuple[str, str]], expected: list[str]) -> None:
    assert outputs(*events) == expected


def test_delimiters_are_the_seeds() -> None:
    assert (OPEN, CLOSE) == ("\n\n---\n", "\n---\n\n")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({}, '"events": a list'),
        ({"events": ["x"]}, "event 0 must be an object"),
        ({"events": [{"type": "reasoning", "text": "x"}]}, "event 0 has type 'reasoning'"),
        ({"events": [{"type": "text"}]}, 'event 0 needs "text"'),
        ({"events": [{"type": "turn_end", "text": "x"}]}, "turn_end carries no text"),
    ],
)
def test_reference_rejects_malformed_payloads(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        render.reference(bad)


# -- requests and judge -------------------------------------------------------------------

CASE = payload(("thinking", "plan"), ("text", "Answer"))
EXPECTED = {"outputs": [OPEN + "plan", CLOSE + "Answer"]}


def test_both_checks_send_the_events_once() -> None:
    for check in render.CHECKS:
        assert render.requests(CASE, check) == [CASE]
    with pytest.raises(ValueError, match="no check 'exact'"):
        render.requests(CASE, "exact")


def test_roundtrip_does_not_apply_where_the_grammar_is_ambiguous() -> None:
    ends_in_newline = payload(("thinking", "plan\n"), ("text", "Answer"))
    holds_delimiter = payload(("text", "a" + OPEN + "b"))
    for case in (ends_in_newline, holds_delimiter):
        assert render.requests(case, "render") == [case]
        assert render.requests(case, "roundtrip") == []
        assert "only the exact-output check applies" in render.skip_reason(case, "roundtrip")


def test_judge_passes_the_reference() -> None:
    for check in render.CHECKS:
        verdict, reason, actual = render.judge(CASE, EXPECTED, check, [render.reference(CASE)])
        assert (verdict, reason) == ("PASS", "")
        assert actual is not None and actual["outputs"] == EXPECTED["outputs"]


def test_judge_fails_a_wrong_output_naming_the_event() -> None:
    reply = {"outputs": [OPEN + "plan", "Answer"]}
    verdict, reason, actual = render.judge(CASE, EXPECTED, "render", [reply])
    assert verdict == "FAIL"
    assert reason == ("event 1 (text 'Answer') rendered 'Answer'; expected '\\n---\\n\\nAnswer'")
    assert actual == {"outputs": reply["outputs"]}


@pytest.mark.parametrize("check", render.CHECKS)
@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([{"outputs": [OPEN + "plan"]}], "expected 2 outputs (one per event), got 1"),
        ([{"outputs": [OPEN + "plan", None]}], "output 1 is NoneType None, not a string"),
        ([{"outputs": [OPEN + "plan", 3]}], "output 1 is int 3, not a string"),
        ([{"outputs": "x"}], "the reply needs \"outputs\": a list of strings, got 'x'"),
        ([{}], 'the reply needs "outputs": a list of strings, got None'),
        ([], "expected one reply to the one request, got 0"),
    ],
)
def test_judge_fails_malformed_replies(
    check: str, replies: list[dict[str, Any]], reason: str
) -> None:
    verdict, got, _ = render.judge(CASE, EXPECTED, check, replies)
    assert (verdict, got) == ("FAIL", reason)


def _seed_bug(events: list[dict[str, str]]) -> list[str]:
    """The seed's symptom: thinking written without the leading rule, closed later."""
    open_, out = False, []
    for event in events:
        if event["type"] == "thinking" and event["text"]:
            open_ = True
            out.append(event["text"])
        elif open_ and (event["text"] or event["type"] == "turn_end"):
            open_ = False
            out.append(CLOSE + event["text"])
        else:
            out.append(event["text"])
    return out


def test_both_checks_flag_the_seeds_missing_leading_rule() -> None:
    reply = {"outputs": _seed_bug(CASE["events"])}
    verdict, reason, _ = render.judge(CASE, EXPECTED, "render", [reply])
    assert verdict == "FAIL" and reason.startswith("event 0 (thinking 'plan') rendered 'plan'")
    verdict, reason, actual = render.judge(CASE, EXPECTED, "roundtrip", [reply])
    assert verdict == "FAIL"
    assert reason.startswith("the rendered stream splits back differently: thinking differs")
    assert actual is not None and actual["split"] == {"assistant": "planAnswer", "thinking": ""}


def test_roundtrip_accepts_a_different_but_readable_rendering() -> None:
    """A section per delta reads back the same: only the exact check tells it apart."""
    case = payload(("thinking", "a"), ("thinking", "b"), ("text", "c"))
    reply = {"outputs": [OPEN + "a" + CLOSE, OPEN + "b" + CLOSE, "c"]}
    expected = render.reference(case)
    assert render.judge(case, expected, "roundtrip", [reply])[0] == "PASS"
    verdict, reason, _ = render.judge(case, expected, "render", [reply])
    assert verdict == "FAIL" and reason.startswith("event 0 ")


# -- the corpus and SPEC.md ---------------------------------------------------------------


#: libyaml's loader where PyYAML has it, as the corpus loader does: each xdist worker reads
#: the file as it collects the module.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def corpus_cases() -> list[Any]:
    data = yaml.load((ROOT / "cases" / "render.yaml").read_text("utf-8"), LOADER)
    assert data["contract"] == render.NAME
    return [pytest.param(case, id=case["id"]) for case in data["cases"]]


@pytest.mark.parametrize("case", corpus_cases())
def test_corpus_case_holds_for_the_reference(case: dict[str, Any]) -> None:
    assert len(case["expected"]["outputs"]) == len(case["input"]["events"])
    assert render.reference(case["input"]) == case["expected"]
    for check in render.CHECKS:
        for request in render.requests(case["input"], check):
            reply = render.reference(request)
            assert render.judge(case["input"], case["expected"], check, [reply])[0] == "PASS"


def spec_blocks() -> list[Any]:
    text = (ROOT / "SPEC.md").read_text("utf-8")
    found = []
    for match in RENDER_BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append(pytest.param(match.group(1), id=f"SPEC.md:{line}"))
    return found


def test_spec_has_render_examples() -> None:
    assert len(spec_blocks()) >= 7


@pytest.mark.parametrize("body", spec_blocks())
def test_spec_render_example(body: str) -> None:
    fields = dict(line.split(":", 1) for line in body.splitlines() if line.strip())
    events = json.loads(fields["events"])
    assert render.reference({"events": events}) == {"outputs": json.loads(fields["outputs"])}


# -- properties ---------------------------------------------------------------------------

# Texts with line breaks and rules' dashes, but no dash next to a line break in a way that
# could spell a delimiter: see roundtrip_events.
ANY_TEXT = st.text(alphabet="ab -\n\r\u00e9\U0001f600", max_size=6)
KINDS = st.sampled_from(("thinking", "progress", "text", "turn_end"))


def events_from(kinds_texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(kind, "" if kind == "turn_end" else text) for kind, text in kinds_texts]


any_events = st.lists(st.tuples(KINDS, ANY_TEXT), max_size=12).map(events_from)

# Texts the section grammar can carry back: no dashes (so no text holds or completes a
# delimiter) and no thinking delta ending in a line break (which would run into the close).
_NO_DASH = st.text(alphabet="ab \n\r\u00e9\U0001f600", max_size=6)
roundtrip_events = st.lists(
    st.tuples(KINDS, _NO_DASH).map(
        lambda e: (e[0], e[1].rstrip("\n") if e[0] == "thinking" else e[1])
    ),
    max_size=12,
).map(events_from)


@given(roundtrip_events)
def test_rendered_stream_splits_back_into_the_texts(events: list[tuple[str, str]]) -> None:
    rendered = "".join(render.render_events(events))
    assert render.split_rendered(rendered) == render.original_channels(events)
    case = payload(*events)
    assert render.requests(case, "roundtrip") == [case]


@given(any_events, st.integers(min_value=0, max_value=12))
def test_each_output_depends_only_on_the_events_so_far(
    events: list[tuple[str, str]], cut: int
) -> None:
    whole = render.render_events(events)
    assert len(whole) == len(events)
    assert render.render_events(events[:cut]) == whole[:cut]


@given(any_events)
def test_the_judge_passes_the_reference_on_any_events(events: list[tuple[str, str]]) -> None:
    case = payload(*events)
    expected = render.reference(case)
    for check in render.CHECKS:
        for request in render.requests(case, check):
            verdict, reason, _ = render.judge(case, expected, check, [render.reference(request)])
            assert (verdict, reason) == ("PASS", "")
