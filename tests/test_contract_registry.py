"""A contract is one module and one `register()` call: this test registers a toy contract
from here, and the loader, runner, reference, fuzzer and command line take it up without a
change anywhere else."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import strategies as st

from conformance.cli.main import main
from conformance.contracts import (
    ReferenceImplementation,
    RegistryError,
    all_checks,
    contract,
    fuzz_properties,
    names,
    op_contract,
    register,
    registered,
    unregister,
)
from conformance.corpus.cases import load_corpus
from conformance.engine.runner import run_implementation
from conformance.interface import implementation
from conformance.model.cases import ContractCase
from conformance.model.results import Verdict
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl
from tests.helpers import bundled_corpus

SCHEMA = {
    "type": "object",
    "required": ["contract", "category", "cases"],
    "properties": {
        "contract": {"const": "shout"},
        "category": {"type": "string"},
        "cases": {"type": "array", "items": {"type": "object"}},
    },
}


def _requests(case_input: Mapping[str, Any], check: str) -> list[dict[str, Any]]:
    return [dict(case_input)] if case_input["text"] else []


def _judge(
    case_input: Mapping[str, Any], expected: Mapping[str, Any], check: str, replies: Sequence[Any]
) -> tuple[Verdict, str, Any]:
    (reply,) = replies
    if reply == expected:
        return Verdict.PASS, "", reply
    return Verdict.FAIL, f"expected {expected!r}, got {reply!r}", reply


def _reference(payload: Mapping[str, Any]) -> dict[str, Any]:
    return {"text": payload["text"].upper()}


#: The toy contract: shout the text back in capitals.
SHOUT = types.SimpleNamespace(
    NAME="shout",
    SCHEMA=SCHEMA,
    CHECKS=("shout",),
    PROPERTIES=("shout",),
    METHOD="shout",
    requests=_requests,
    skip_reason=lambda case_input, check: "nothing to shout",
    judge=_judge,
    reference=_reference,
    expected_for=_reference,
    guess_taxonomy=lambda case_input: "SHOUT.basic",
    inputs=lambda: st.text(alphabet="abc", max_size=5).map(lambda text: {"text": text}),
)


@implementation(name="whisper")
class Whisper(ReferenceImplementation):
    """Answers every contract as the reference does, but whispers instead of shouting."""

    def shout(self, **payload: Any) -> dict[str, Any]:
        return {"text": super().shout(**payload)["text"].lower()}


@pytest.fixture
def shout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    register(SHOUT)  # type: ignore[arg-type]
    sys.modules[__name__].Whisper = Whisper  # importable as python:tests.test_contract_registry
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "shout.yaml").write_text(
        yaml.safe_dump(
            {
                "contract": "shout",
                "category": "shout",
                "cases": [
                    {
                        "id": "SH01",
                        "slug": "shout-a-word",
                        "title": "A word comes back in capitals",
                        "taxonomy": "SHOUT.basic",
                        "level": "must",
                        "input": {"text": "hey"},
                        "expected": {"text": "HEY"},
                        "provenance": [{"kind": "spec", "ref": "toy"}],
                    },
                    {
                        "id": "SH02",
                        "slug": "shout-nothing",
                        "title": "Nothing to shout",
                        "taxonomy": "SHOUT.basic",
                        "level": "must",
                        "input": {"text": ""},
                        "expected": {"text": ""},
                        "provenance": [{"kind": "spec", "ref": "toy"}],
                    },
                ],
            }
        ),
        "utf-8",
    )
    yield cases
    unregister("shout")


def test_the_registry_derives_checks_properties_and_reference_ops(shout: Path) -> None:
    assert op_contract("shout") is SHOUT and contract("shout").NAME == "shout"
    assert all_checks()[-1] == "shout"
    assert fuzz_properties()[-1] == "shout"
    assert ReferenceImplementation().shout(text="hi") == {"text": "HI"}
    with pytest.raises(RegistryError):
        register(SHOUT)  # type: ignore[arg-type]


def test_the_normalizer_is_the_first_entry_and_its_names_are_taken() -> None:
    first = registered()[0]
    assert first.NAME == "normalizer" and contract("normalizer") is first
    assert (
        all_checks()[: len(first.CHECKS)] == first.CHECKS == ("whole", "stream", "chars", "splits")
    )
    assert fuzz_properties()[: len(first.PROPERTIES)] == first.PROPERTIES
    assert {case.contract for case in bundled_corpus().cases} <= set(names())
    # Names of the normalizer's are as taken as any other contract's.
    for clash in (
        types.SimpleNamespace(**{**vars(SHOUT), "NAME": "chunking"}),
        types.SimpleNamespace(**{**vars(SHOUT), "CHECKS": ("splits",)}),
        types.SimpleNamespace(**{**vars(SHOUT), "PROPERTIES": ("differential",)}),
    ):
        with pytest.raises(RegistryError):
            register(clash)  # type: ignore[arg-type]
    assert names() == ("normalizer", "render", "egress")


def test_a_registered_contract_is_loaded_run_and_judged(shout: Path) -> None:
    corpus = load_corpus([shout])
    assert not corpus.errors
    assert all(isinstance(case, ContractCase) for case in corpus.cases)
    reference = run_implementation(connect(parse_impl("reference")), corpus.cases)
    verdicts = {(r.case, r.verdict) for r in reference.results}
    assert verdicts == {("SH01", Verdict.PASS), ("SH02", Verdict.SKIP)}
    whisper = run_implementation(
        connect(parse_impl("python:tests.test_contract_registry:Whisper")), corpus.cases
    )
    failed = next(r for r in whisper.results if r.case == "SH01")
    assert failed.verdict == Verdict.FAIL and "'HEY'" in failed.reason


def test_the_command_line_offers_and_fuzzes_a_registered_contract(
    shout: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    ran = runner.invoke(
        main,
        ["run", "--cases", str(shout), "--check", "shout", "--report-dir", str(tmp_path / "r")],
    )
    assert ran.exit_code == 0, ran.output
    fuzzed = runner.invoke(
        main,
        [
            "fuzz",
            "--impl",
            "python:tests.test_contract_registry:Whisper",
            "--property",
            "shout",
            "--max-examples",
            "50",
            "--database",
            "none",
            "--report-dir",
            str(tmp_path / "f"),
        ],
    )
    assert fuzzed.exit_code == 1, fuzzed.output
    assert "shout" in fuzzed.output
