"""The other contracts run on the same engine: cases, connections, verdicts, reports, plugin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conformance.corpus.select import Selection
from conformance.engine.runner import run_implementation
from conformance.model.cases import ContractCase
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import bundled_corpus, cli

CASES = bundled_corpus().cases
CONTRACT_CASES = [case for case in CASES if isinstance(case, ContractCase)]
REFERENCE_CMD = f"cmd:{sys.executable} -m conformance.server"


def verdicts(spec: str, contract: str) -> Counter:
    cases = [case for case in CONTRACT_CASES if case.contract == contract]
    run = run_implementation(connect(parse_impl(spec)), cases)
    return Counter(result.verdict for result in run.results)


def test_both_contracts_have_cases():
    assert Counter(case.contract for case in CONTRACT_CASES).keys() == {"render", "egress"}


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["reference", REFERENCE_CMD])
@pytest.mark.parametrize("contract", ["render", "egress"])
def test_the_reference_passes_in_process_and_through_cmd(spec, contract):
    counts = verdicts(spec, contract)
    assert counts[Verdict.PASS] > 0
    assert set(counts) <= {Verdict.PASS, Verdict.SKIP}


def test_broken_renderer_and_egress_are_flagged():
    assert verdicts("python:tests.fakes.broken_impls:RenderDropsClose", "render")[Verdict.FAIL] > 0
    egress = verdicts("python:tests.fakes.broken_impls:EgressSendsEmptyReasoning", "egress")
    assert egress[Verdict.FAIL] > 0


def test_an_implementation_without_the_op_skips_its_cases():
    counts = verdicts("python:tests.fakes.broken_impls:NoCarry", "render")
    assert set(counts) == {Verdict.SKIP}


def test_hello_announces_the_capabilities():
    hello = subprocess.run(
        [sys.executable, "-m", "conformance.server"],
        input='{"op": "hello", "protocol": 1}\n{"op": "bye"}\n',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(hello.stdout.splitlines()[0])["capabilities"] == ["render", "egress"]


def test_selection_by_check_and_the_cli(tmp_path: Path):
    chosen = Selection(checks=("render",)).apply(CASES)
    assert chosen
    result = cli(
        "run",
        "--check",
        "render",
        "--check",
        "egress",
        "--impl",
        "python:tests.fakes.broken_impls:RenderDropsClose",
        "--report-dir",
        str(tmp_path),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    data = json.loads((tmp_path / "results.json").read_text())
    results = data["implementations"][0]["results"]
    assert {r["check"] for r in results} <= {"render", "roundtrip", "egress"}
    assert any(r["verdict"] == "FAIL" and r["check"] == "render" for r in results)
    assert "render" in (tmp_path / "report.md").read_text()


def test_dump_carries_contract_cases():
    result = cli("dump")
    cases = json.loads(result.stdout)["cases"]
    egress = [case for case in cases if case.get("contract") == "egress"]
    assert egress and all("input" in case and "expected" in case for case in egress)


def test_changing_the_stored_history_is_an_error():
    counts = verdicts("python:tests.fakes.broken_impls:EgressMutatesHistory", "egress")
    assert counts[Verdict.ERROR] > 0


@pytest.mark.slow
def test_fuzzing_the_contracts(tmp_path: Path):
    def fuzz(impl: str, prop: str, name: str) -> dict:
        cli(
            "fuzz",
            "--impl",
            impl,
            "--property",
            prop,
            "--seed",
            "3",
            "--database",
            "none",
            "--max-examples",
            "200",
            "--report-dir",
            str(tmp_path / name),
        )
        data = json.loads((tmp_path / name / "results.json").read_text())
        return data["implementations"][0]["fuzz"][0]

    assert fuzz("reference", "render", "ref-render")["verdict"] == "PASS"
    assert fuzz("reference", "egress", "ref-egress")["verdict"] == "PASS"
    assert fuzz("python:tests.fakes.broken_impls:NoCarry", "render", "skip")["verdict"] == "SKIP"
    found = fuzz("python:tests.fakes.broken_impls:RenderDropsClose", "render", "bad-render")
    assert found["verdict"] == "FAIL" and found["counterexample"]["contract"] == "render"
    case_file = Path(found["case_file"])
    checked = cli("check", "--cases", str(case_file.parent))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    bad = fuzz("python:tests.fakes.broken_impls:EgressSendsEmptyReasoning", "egress", "bad-egress")
    assert bad["verdict"] == "FAIL"
