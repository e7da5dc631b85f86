"""The examples in other languages (examples/rust, examples/node) are built and checked through
`cmd:` exactly as their READMEs say: the whole corpus, `conformance smoke`, the fingerprint,
and their own unit tests. Skipped, with the reason, where `cargo` or `node` is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.model.chunks import Chunk
from conformance.model.requests import Error, Ok, StreamRequest
from conformance.model.results import Verdict
from conformance.tools.fingerprint import fingerprint
from conformance.transport.impls import connect
from conformance.transport.spec import parse_impl

from .helpers import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
OK = {Verdict.PASS.value, Verdict.NON_STRICT.value, Verdict.SKIP.value}


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"`{name}` is not installed, so the {name} example cannot be built and run")
    return path


@pytest.fixture(scope="module")
def rust_crate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/rust, so that building leaves no target/ or Cargo.lock behind."""
    crate = tmp_path_factory.mktemp("rust") / "think-normalizer"
    shutil.copytree(EXAMPLES / "rust", crate, ignore=shutil.ignore_patterns("target"))
    return crate


@pytest.fixture(scope="module")
def rust_binary(rust_crate: Path) -> Path:
    cargo = tool("cargo")
    done = subprocess.run(
        [cargo, "build", "--release", "--quiet"],
        cwd=rust_crate,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CARGO_TARGET_DIR": str(rust_crate / "target")},
    )
    assert done.returncode == 0, done.stderr
    return rust_crate / "target" / "release" / "think-normalizer"


@pytest.fixture(scope="module")
def node_server() -> Path:
    tool("node")
    return EXAMPLES / "node" / "server.js"


# Building the Rust example from a clean copy takes seconds: its runs are in the slow tier.
@pytest.fixture(params=[pytest.param("rust", marks=pytest.mark.slow), "node"])
def example(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(label, spec) of each example, built."""
    if request.param == "rust":
        return "rust", f"cmd:{request.getfixturevalue('rust_binary')}"
    return "node", f"cmd:node {request.getfixturevalue('node_server')}"


@pytest.mark.slow
def test_the_example_passes_the_whole_corpus(example: tuple[str, str], tmp_path: Path) -> None:
    label, spec = example
    done = cli("run", "--impl", f"{label}={spec}", "--report-dir", str(tmp_path))
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    (impl,) = json.loads((tmp_path / "results.json").read_text())["implementations"]
    assert impl["language"] == {"rust": "rust", "node": "javascript"}[label]
    verdicts = {r["verdict"] for r in impl["results"]}
    assert verdicts <= OK, [r for r in impl["results"] if r["verdict"] not in OK][:3]
    assert impl["summary"]["PASS"] > 2000


@pytest.mark.slow
def test_the_example_speaks_the_protocol(example: tuple[str, str]) -> None:
    done = cli("smoke", "--impl", example[1], "--validate-protocol")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].endswith("speaks the protocol (7 smoke requests answered)")


@pytest.mark.slow
def test_the_example_follows_the_default_profile(example: tuple[str, str]) -> None:
    connection = connect(parse_impl(example[1]))
    try:
        result = fingerprint(connection)
    finally:
        connection.close()
    assert result.consistent
    assert result.declared_options() == {}


def test_text_survives_the_example_exactly(example: tuple[str, str]) -> None:
    text = 'q"\\ \n\r\t \x00\x1f \u2028\u0085 caf\u00e9 \U0001f600 e\u0301 \u202e'
    chunks = (Chunk(f"<think>{text}</thi"), Chunk(f"nk>{text}<"), Chunk(None, text))
    connection = connect(parse_impl(example[1]))
    try:
        (reply,) = connection.send([StreamRequest(chunks)])
    finally:
        connection.close()
    assert reply.deltas == [
        {"assistant": "", "thinking": text},
        {"assistant": text, "thinking": ""},
        {"assistant": "", "thinking": text},
        {"assistant": "<", "thinking": ""},
    ]


def test_a_lone_surrogate_is_an_error_in_rust_and_text_in_node(example: tuple[str, str]) -> None:
    connection = connect(parse_impl(example[1]))
    try:
        (reply,) = connection.send([StreamRequest((Chunk("a\ud800b"),))])
    finally:
        connection.close()
    if example[0] == "rust":
        assert isinstance(reply, Error)
        assert "lone surrogate" in reply.message
    else:
        assert isinstance(reply, Ok)
        assert reply.deltas == [
            {"assistant": "a\ud800b", "thinking": ""},
            {"assistant": "", "thinking": ""},
        ]


@pytest.mark.slow
def test_the_rust_example_unit_tests(rust_crate: Path) -> None:
    done = subprocess.run(
        [tool("cargo"), "test", "--release", "--quiet"],
        cwd=rust_crate,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CARGO_TARGET_DIR": str(rust_crate / "target")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test result: ok" in done.stdout


@pytest.mark.slow
def test_the_node_example_unit_tests() -> None:
    done = subprocess.run(
        [tool("node"), "--test"],
        cwd=EXAMPLES / "node",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
