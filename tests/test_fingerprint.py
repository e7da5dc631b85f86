"""`conformance fingerprint`: the options an implementation follows are recovered from its
outputs, for the reference under every profile, for the deliberately broken normalizers, and
for programs behind `cmd:`."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

from conformance.model.options import CHOICES, Options
from conformance.tools.fingerprint import PROBED, Fingerprint, fingerprint
from conformance.tools.fingerprint_report import render_fingerprint
from conformance.tools.fingerprint_results import INCONSISTENT, NONE, UNDETERMINED
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import cli

FAKE = Path(__file__).parent / "fakes" / "fake_impl.py"
REFERENCE_CMD = f"cmd:{sys.executable} -m conformance.server"

PROFILES = [
    dict(zip(PROBED, values, strict=True))
    for values in itertools.product(*(CHOICES[name] for name in PROBED))
]


def probe(spec: str, options: dict | None = None) -> Fingerprint:
    connection = connect(parse_impl(spec, options))
    try:
        return fingerprint(connection)
    finally:
        connection.close()


@pytest.mark.slow
@pytest.mark.parametrize("options", PROFILES, ids=lambda o: json.dumps(Options(**o).differences()))
def test_the_reference_is_recovered_under_every_profile(options: dict) -> None:
    result = probe("reference", options)
    family_defaults = {"tool_markers": (), "sections": "many", "framing": "tags"}
    assert {axis.option: axis.value for axis in result.axes} == {**options, **family_defaults}
    assert result.consistent
    assert result.declared_options() == Options(**options).differences()


def test_a_custom_grammar_is_recovered_as_the_list_of_pairs_it_recognises() -> None:
    pairs = [{"open": "<think>", "close": "</think>"}, {"open": "[THINK]", "close": "[/THINK]"}]
    result = probe("reference", {"delimiters": pairs, "unclosed_at_end": "drop"})
    assert result.axis("delimiters").value == (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
    assert result.declared_options() == {"delimiters": pairs, "unclosed_at_end": "drop"}
    assert result.consistent
    assert result.follows()["delimiters"] == "custom: <think>, [THINK]"


def test_duplicates_native_fingerprints_as_merge_although_it_declares_native_only() -> None:
    result = probe("python:tests.fakes.broken_impls:DuplicatesNative")
    axis = result.axis("native_with_tags")
    assert (axis.value, axis.declared, axis.agrees) == ("merge", "native_only", False)
    assert all(p.matches == ("merge",) for p in axis.probes)
    assert result.declared_options() == {"native_with_tags": "merge"}
    assert not result.consistent
    assert [a.option for a in result.axes if not a.agrees] == ["native_with_tags"]


def test_ignores_case_fingerprints_as_tolerant_matching() -> None:
    result = probe("python:tests.fakes.broken_impls:IgnoresCase")
    axis = result.axis("matching")
    assert axis.value in ("tolerant", INCONSISTENT)
    assert axis.declared == "exact"
    case = next(p for p in axis.probes if p.name == "case changed")
    assert case.actual == {"assistant": "b", "thinking": "a"}
    assert case.matches == ("tolerant",)


def test_an_orphan_close_left_visible_is_a_bug_the_start_probes_outvote() -> None:
    # Two start probes agree with false, the orphan close with no value: the start is
    # placed (issue 11), the orphan close is for `conformance run` to report.
    result = probe("python:tests.fakes.broken_impls:LeaksOrphanClose")
    axis = result.axis("start_in_reasoning")
    assert axis.value is False
    orphan = next(p for p in axis.probes if p.name == "orphan close")
    assert orphan.actual == {"assistant": "a</think>b", "thinking": ""}
    assert orphan.matches == ()
    assert "start_in_reasoning" not in result.declared_options()
    text = render_fingerprint(result)
    assert "    got               assistant '" in text  # channels are labelled
    assert "some options follow no single value" in text


def test_start_in_reasoning_is_placed_when_one_probe_shows_another_bug() -> None:
    result = probe("python:tests.fakes.broken_impls:StartMissesSplitClose")
    assert result.axis("start_in_reasoning").value is True
    assert result.declared_options().get("start_in_reasoning") is True


def test_think_only_and_declared_custom_grammars_are_recovered() -> None:
    only = probe("reference", {"delimiters": "think_only"})
    assert only.axis("delimiters").value == "think_only"
    assert only.consistent
    seed = probe("reference", {"delimiters": [{"open": "<seed:think>", "close": "</seed:think>"}]})
    assert seed.axis("delimiters").value == (("<seed:think>", "</seed:think>"),)
    assert seed.consistent
    # Declares <seed:think> alone, strips <think> too: the pairs it recognises are found.
    bad = probe("python:tests.fakes.broken_impls:SeedAlsoStripsThink")
    assert bad.axis("delimiters").value == (
        ("<think>", "</think>"),
        ("<thinking>", "</thinking>"),
        ("<seed:think>", "</seed:think>"),
    )
    assert "does not do what it declares" in render_fingerprint(bad)


def test_nothing_declared_is_not_called_a_broken_declaration() -> None:
    text = render_fingerprint(probe("python:tests.fakes.broken_impls:DuplicatesNative"))
    assert "does not do what it declares" not in text
    assert "declares no options beyond the defaults" in text


def test_native_reasoning_lost_by_a_wrapper_is_inconsistent() -> None:
    # LeaksOrphanClose hides chunks before the first open from its inner normalizer, so it
    # forgets native reasoning that came first: native_only in one probe, merge in another.
    axis = probe("python:tests.fakes.broken_impls:LeaksOrphanClose").axis("native_with_tags")
    assert axis.value == INCONSISTENT
    assert {p.name: p.matches for p in axis.probes} == {
        "native with the open tag": ("native_only",),
        "native before the block": ("merge",),
        "native inside the block": ("native_only",),
    }


def test_probes_are_streamed_one_delimiter_per_chunk() -> None:
    # A regex over each chunk never sees a whole block when the tags come as tokens.
    result = probe("python:tests.fakes.broken_impls:PerChunkRegex")
    axis = result.axis("delimiters")
    assert axis.value == NONE
    first = axis.probes[0]
    assert [chunk.content for chunk in first.chunks] == ["<think>", "a", "</think>", "b"]
    assert first.actual == {"assistant": "<think>a</think>b", "thinking": ""}
    native = result.axis("native_with_tags").probes[0]
    assert [(c.content, c.reasoning) for c in native.chunks] == [
        ("<think>", "plan"),
        ("plan", None),
        ("</think>", None),
        ("Answer", None),
    ]


def test_a_probe_the_implementation_fails_on_is_evidence_not_a_verdict() -> None:
    result = probe("python:tests.fakes.broken_impls:Raises")
    axis = result.axis("delimiters")
    # Without the <thinking> probe, think and think_only cannot be told apart.
    assert axis.value == UNDETERMINED
    failed = [p for p in axis.probes if p.problem is not None]
    assert [p.name for p in failed] == ["<thinking>a</thinking>b"]
    assert failed[0].problem == "error: raised ValueError: cannot handle <thinking>"


def test_a_fake_that_echoes_recognises_no_delimiter() -> None:
    result = probe(f"cmd:{sys.executable} {FAKE}")
    assert result.axis("delimiters").value == NONE
    assert not result.consistent
    assert result.requests > 0


def test_a_fake_that_answers_only_errors_is_undetermined() -> None:
    result = probe(f"cmd:{sys.executable} {FAKE} error")
    assert {axis.value for axis in result.axes} == {UNDETERMINED}
    assert result.declared_options() == {}


def test_fingerprint_command_on_the_reference_through_cmd() -> None:
    options = '{"start_in_reasoning": true, "unclosed_at_end": "drop"}'
    done = cli("fingerprint", "--impl", f"ref={REFERENCE_CMD} --options '{options}'")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ref: reference 0.1.0 (python), 31 probes in ")
    assert lines[-1] == f"options to declare: {options}"
    row = next(line for line in lines if line.startswith("start_in_reasoning"))
    assert row.split()[:5] == ["start_in_reasoning", "true", "true", "yes", "orphan"]


def test_fingerprint_command_json_and_exit_status() -> None:
    done = cli(
        "fingerprint",
        "--impl",
        "python:tests.fakes.broken_impls:DuplicatesNative",
        "--format",
        "json",
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["declare"] == {"native_with_tags": "merge"}
    assert data["consistent"] is False
    axes = {axis["option"]: axis for axis in data["axes"]}
    assert axes["native_with_tags"]["follows"] == "merge"
    assert axes["native_with_tags"]["probes"][0]["matches"] == ["merge"]
    assert cli("fingerprint", "--impl", f"cmd:{sys.executable} {FAKE} no-hello").returncode == 2


@pytest.mark.parametrize(
    "family", ["qwen3", "kimi", "granite", "seed_oss", "gemma4", "deepseek_v3"]
)
def test_the_reference_under_a_family_profile_is_recognised_as_that_family(family: str) -> None:
    result = probe("reference", {"profile": family})
    assert result.consistent
    matches, exact = result.families()
    assert exact and family in [match.name for match in matches]
    found = {axis.option: axis.value for axis in result.axes}
    # Every family listed has exactly the values found (atomic delimiters aside).
    for match in matches:
        profile = Options.from_mapping({"profile": match.name})
        assert found["sections"] == profile.sections
        assert set(found["tool_markers"]) == set(profile.tool_markers)


def test_tool_markers_sections_and_harmony_are_found_through_cmd() -> None:
    for family, expected in [
        ("qwen3", {"tool_markers": ("<tool_call>",), "sections": "one", "framing": "tags"}),
        ("gpt_oss", {"tool_markers": (), "sections": "many", "framing": "harmony"}),
    ]:
        result = probe(f"{REFERENCE_CMD} --options '{json.dumps({'profile': family})}'")
        assert {option: result.axis(option).value for option in expected} == expected
        matches, exact = result.families()
        assert exact and family in [match.name for match in matches], family
        text = render_fingerprint(result)
        assert "model family profiles with these values: " in text
    # Harmony framing has its own tokens: the probes of the tag grammar are not sent.
    assert result.requests < 15
    assert "(harmony framing: not an option)" in render_fingerprint(result)


def test_an_implementation_of_no_family_gets_the_closest_and_what_differs() -> None:
    # Qwen3's tags and tool marker, but a second block parsed as a block.
    result = probe("reference", {"profile": "qwen3", "sections": "many"})
    matches, exact = result.families()
    assert not exact
    assert "qwen3" in [match.name for match in matches]
    assert all(dict(match.differences) == {"sections": ("many", "one")} for match in matches)
    assert (
        "no model family profile has these values; the closest: qwen3 (sections many, "
        "theirs one)" in render_fingerprint(result)
    )
    data = json.loads(render_fingerprint(result, "json"))
    assert data["families"]["exact"] is False
    assert data["families"]["matches"][0]["differences"] == {
        "sections": {"found": "many", "profile": "one"}
    }


def test_a_broken_normalizer_is_closest_to_the_families_it_differs_least_from() -> None:
    # Merges tag bodies with native reasoning, which no family does.
    matches, exact = probe("python:tests.fakes.broken_impls:DuplicatesNative").families()
    assert not exact
    assert all("native_with_tags" in match.differences for match in matches)
