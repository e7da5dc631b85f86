"""The public API is curated: these lists change only on purpose (and then in the docs)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import conformance

PUBLIC = {
    "conformance": [
        "Case",
        "CaseResult",
        "Channels",
        "Chunk",
        "ConformanceError",
        "Connection",
        "Contract",
        "ContractCase",
        "Corpus",
        "FuzzResult",
        "HttpCall",
        "ImplementationInfo",
        "ImplementationRun",
        "ImplementationSpec",
        "ImplementationStartError",
        "OpContract",
        "Options",
        "PROTOCOL_VERSION",
        "Run",
        "SPEC_VERSION",
        "StreamNormalizer",
        "UsageError",
        "Verdict",
        "__version__",
        "bundled_cases_dir",
        "connect",
        "from_function",
        "from_generator",
        "implementation",
        "load_corpus",
        "load_results",
        "parse_impl",
        "register",
        "run_implementation",
        "write_reports",
    ],
    "conformance.interface": [
        "Chunk",
        "Delta",
        "Factory",
        "HttpCall",
        "StreamNormalizer",
        "from_function",
        "from_generator",
        "implementation",
        "metadata",
    ],
    "conformance.reference": [
        "Delta",
        "Normalizer",
        "Options",
        "OptionsError",
        "join",
        "normalize_stream",
        "normalize_whole",
    ],
    "conformance.strategies": [
        "chunkings",
        "documents",
        "egress_requests",
        "flatten",
        "rechunkings",
        "render_events",
        "segments",
        "streams",
    ],
    "conformance.reports": ["ResultsFileError", "load_results", "write_reports"],
    "conformance.contracts": [
        "Contract",
        "OpContract",
        "ReferenceImplementation",
        "RegistryError",
        "all_checks",
        "contract",
        "contract_checks",
        "fuzz_properties",
        "names",
        "op_contract",
        "op_contracts",
        "register",
        "registered",
        "unregister",
    ],
    "conformance.server": ["serve"],
    "conformance.errors": ["ConformanceError", "ImplementationStartError", "UsageError"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_each_public_module_exports_exactly_its_api(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(PUBLIC[module])
    for name in imported.__all__:
        assert getattr(imported, name) is not None, f"{module}.{name}"


def test_the_package_resolves_names_from_their_layers() -> None:
    from conformance.model.results import Run

    assert conformance.Run is Run
    assert conformance.load_results.__module__ == "conformance.reports._json"
    with pytest.raises(AttributeError):
        conformance.nothing_here  # noqa: B018


def test_a_protocol_program_starts_without_the_harness() -> None:
    """`python -m conformance.server` is what a `cmd:` run restarts: run as that program, it
    must not import jsonschema, Hypothesis, the corpus loader, the runner or the command line
    (`-X importtime` names every module the process imports)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "conformance.server"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()}
    assert "conformance.reference" in imported
    heavy = ("jsonschema", "hypothesis", "click", "conformance.engine", "conformance.corpus")
    assert sorted(name for name in imported if name.startswith((*heavy, "conformance.cli"))) == []
