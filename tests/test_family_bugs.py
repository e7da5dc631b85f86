"""Bugs under the model-family profiles (`tests/fakes/family_bugs.py`): each fails a run under
its family's profile, the failing case named in the report, and fuzzing finds it and writes
its case file; the reference finds nothing under any family."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.model.families import FAMILIES

from .helpers import cli, conformance_process

FAKES = "tests.fakes.family_bugs"

TOOL_CALL = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>"
ANALYSIS = "<|channel|>analysis<|message|>Hm.<|end|>"
SECTION = "<|tool_calls_section_begin|>"


def case(
    ident: str,
    slug: str,
    chunks: list[str],
    default: tuple[str, str],
    family: str,
    expected: tuple[str, str],
) -> dict[str, Any]:
    """A case with its expectation under the default options (where the family's delimiters
    are text, or a marker a mere tag) and a variant under the family's profile."""
    section = "5.8" if family == "gpt_oss" else "5.7"
    return {
        "id": ident,
        "slug": slug,
        "title": slug.replace("-", " "),
        "taxonomy": "TEXT.markup" if family == "gpt_oss" else "BLOCK.inline",
        "level": "must",
        "chunks": chunks,
        "expected": dict(zip(("assistant", "thinking"), default, strict=True)),
        "variants": [
            {
                "when": {"profile": family},
                "expected": dict(zip(("assistant", "thinking"), expected, strict=True)),
            }
        ],
        "provenance": [{"kind": "spec", "ref": f"SPEC {section}"}],
    }


#: What each family's parser must get right.
CASES = {
    "category": "families",
    "description": "Harmony messages and tool markers, under the profiles of their families.",
    "cases": [
        case(
            "HTC2",
            "harmony-tool-call-reaches-the-answer-whole",
            [ANALYSIS, TOOL_CALL + "{}<|call|>"],
            (ANALYSIS + TOOL_CALL + "{}<|call|>", ""),
            "gpt_oss",
            (TOOL_CALL + "{}<|call|>", "Hm."),
        ),
        case(
            "HSP2",
            "harmony-header-in-two-chunks",
            ["<|channel|>", "analysis<|message|>Hm.<|end|><|channel|>final<|message|>Hi"],
            (ANALYSIS + "<|channel|>final<|message|>Hi", ""),
            "gpt_oss",
            ("Hi", "Hm."),
        ),
        case(
            "HRT2",
            "harmony-return-after-the-answer",
            ["<|channel|>final<|message|>Hi", "<|return|>"],
            ("<|channel|>final<|message|>Hi<|return|>", ""),
            "gpt_oss",
            ("Hi", ""),
        ),
        case(
            "QMK2",
            "qwen3-tool-call-ends-the-block",
            ["<think>plan", "<tool_call>{}</think>ok"],
            ("ok", "plan<tool_call>{}"),
            "qwen3",
            ("<tool_call>{}</think>ok", "plan"),
        ),
        case(
            "KMK2",
            "kimi-k2-tool-section-ends-the-block",
            ["<think>plan", SECTION + "x</think>ok"],
            ("ok", f"plan{SECTION}x"),
            "kimi_k2",
            (SECTION + "x</think>ok", "plan"),
        ),
    ],
}

#: Each fake: its family, and the cases its bugs fail (case ID: slug). A split header shown
#: fails every case where a check cuts a header between its tokens as well.
BUGS: dict[str, tuple[str, dict[str, str]]] = {
    "SplitHeaderShown": ("gpt_oss", {"HSP2": "harmony-header-in-two-chunks"}),
    "ToolCallThought": ("gpt_oss", {"HTC2": "harmony-tool-call-reaches-the-answer-whole"}),
    "MarkerStaysInThinking": ("qwen3", {"QMK2": "qwen3-tool-call-ends-the-block"}),
    "MarkerDropped": ("kimi_k2", {"KMK2": "kimi-k2-tool-section-ends-the-block"}),
    "ThreeHarmonyBugs": (
        "gpt_oss",
        {
            "HSP2": "harmony-header-in-two-chunks",
            "HTC2": "harmony-tool-call-reaches-the-answer-whole",
            "HRT2": "harmony-return-after-the-answer",
        },
    ),
}


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "families.yaml"
    path.write_text(yaml.safe_dump(CASES, allow_unicode=True), "utf-8")
    return path


def run(cases: Path, impl: str, family: str, reports: Path, *, process: bool = False) -> Any:
    """`conformance run` of the family cases under `family`'s profile: its results."""
    command = conformance_process if process else cli
    options = json.dumps({"profile": family})
    ran = command(
        "run", "--impl", impl, "--cases", cases, "--options", options, "--no-growth",
        "--report-dir", reports,
    )  # fmt: skip
    results = json.loads((reports / "results.json").read_text())["implementations"][0]
    return ran, results


@pytest.mark.slow
def test_the_family_cases_hold_for_the_reference(cases: Path, tmp_path: Path) -> None:
    """The cases the fakes fail are right: `conformance check` proves them, and the reference
    passes them under each family named in a variant's `when`."""
    checked = cli("check", "--cases", cases)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for family in ("gpt_oss", "qwen3", "kimi_k2"):
        ran, results = run(cases, "reference", family, tmp_path / family)
        assert ran.returncode == 0 and results["summary"]["PASS"], ran.stdout + ran.stderr


@pytest.mark.slow
@pytest.mark.parametrize("fake", BUGS)
def test_each_family_bug_fails_its_run_and_is_named(cases: Path, tmp_path: Path, fake: str) -> None:
    family, failing = BUGS[fake]
    ran, results = run(cases, f"python:{FAKES}:{fake}", family, tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    failed = {(r["case"], r["check"]) for r in results["results"] if r["verdict"] == "FAIL"}
    assert set(failing) <= {case for case, _ in failed}
    others = {check for case, check in failed if case not in failing}
    assert others <= ({"splits", "chars"} if "HSP2" in failing else set()), failed
    report = (tmp_path / "report.md").read_text("utf-8")
    assert all(slug in report for slug in failing.values())


@pytest.mark.slow
def test_a_family_bug_fails_its_run_as_a_protocol_program(cases: Path, tmp_path: Path) -> None:
    """The fake as users run theirs in another language: a program declaring its profile."""
    impl = f"cmd:python {Path(*FAKES.split('.'))}.py ToolCallThought"
    ran, results = run(cases, impl, "gpt_oss", tmp_path, process=True)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert results["options"]["framing"] == "harmony"
    assert {r["case"] for r in results["results"] if r["verdict"] == "FAIL"} == {"HTC2"}


# --- fuzzing ---------------------------------------------------------------------------------


def fuzz(tmp_path: Path, impl: str, *args: str, process: bool = False) -> list[dict[str, Any]]:
    """`conformance fuzz` of `impl` under its declared profile: its results, each failure
    written as a case file that replays its counterexample."""
    command = conformance_process if process else cli
    reports = tmp_path / "reports"
    args = ("--impl", impl, "--database", "none", "--report-dir", str(reports), *args)
    ran = command("fuzz", *args)
    results = json.loads((reports / "results.json").read_text())["implementations"][0]["fuzz"]
    if impl == "reference":
        assert ran.returncode == 0, ran.stdout + ran.stderr
        return results
    assert ran.returncode == 1, ran.stdout + ran.stderr
    written = [r for r in results if r.get("case_file")]
    assert written and sorted(Path(r["case_file"]) for r in written) == sorted(
        (reports / "found").iterdir()
    )
    for entry in written:
        case = yaml.safe_load(Path(entry["case_file"]).read_text("utf-8"))["cases"][0]
        assert case["chunks"] == entry["counterexample"]["chunks"]
    return results


@pytest.mark.slow
@pytest.mark.parametrize(
    "fake",
    [
        name if name == "ThreeHarmonyBugs" else pytest.param(name, marks=pytest.mark.slow)
        for name in BUGS
    ],
)
def test_fuzzing_finds_each_family_bug_quickly(tmp_path: Path, fake: str) -> None:
    """One property, a small budget: the bugs are found and written (each of the three bugs
    of `ThreeHarmonyBugs` apart)."""
    quick = ("--property", "differential", "--seed", "1", "--max-examples", "100")
    results = fuzz(tmp_path, f"python:{FAKES}:{fake}", *quick)
    bugs = {r["bug"] for r in results if r.get("counterexample")}
    assert len(bugs) >= (3 if fake == "ThreeHarmonyBugs" else 1), bugs


@pytest.mark.slow
@pytest.mark.parametrize("fake", BUGS)
def test_fuzzing_finds_each_family_bug_in_the_default_budget(tmp_path: Path, fake: str) -> None:
    fuzz(tmp_path, f"python:{FAKES}:{fake}", "--seed", "2", process=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "family",
    [
        name if name == "gpt_oss" else pytest.param(name, marks=pytest.mark.slow)
        for name in FAMILIES
    ],
)
def test_fuzzing_the_reference_under_each_family_finds_nothing(tmp_path: Path, family: str) -> None:
    """Every property of the normalizer holds for the reference under every family's profile
    (the streams carry the family's markers, or harmony messages; no cut inside a delimiter
    where the family's delimiters are atomic)."""
    budget = "30" if family == "gpt_oss" else "300"
    options = json.dumps({"profile": family})
    properties = ("differential", "chunking", "whole", "discipline", "idempotence", "conservation")
    args = [arg for name in properties for arg in ("--property", name)]
    results = fuzz(
        tmp_path, "reference", "--options", options, "--seed", "1", "--max-examples", budget, *args
    )
    assert [r["verdict"] for r in results] == ["PASS"] * len(properties)
