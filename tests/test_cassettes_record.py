"""Recording and approving captures, end to end against the fake provider on 127.0.0.1:
`conformance record` (a real request, vcrpy recording), scrubbing, the credential scan, then
`conformance approve` -> pending -> `--accept` -> a passing case. The commands run in this
process; the whole journey also runs as real processes (slow tier)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from conformance.capture.provider_request import Recording, build_request
from conformance.cassettes import decode_cassette, load_cassette
from conformance.cassettes._secrets import scan
from conformance.corpus.cases import bundled_cases_dir

from .fakes.fake_provider import FakeProviderServer
from .helpers import ROOT, Ran, cli, conformance_process

KEY = "sk-test-fake0123456789abcdefXYZ"
SECRETS = [
    KEY,
    "org-secret0123",
    "proj_secret0123",
    "session=cookie0123",
    # What the fake provider sends back, which must not be kept either.
    "__cf_bm=fAkEcOoKiE",
    "org-fake0123456789",
    "proj_fake0123456789",
    "1f2e3d4c-fake",
    "req_fake0123456789",
    "8f00fake0000abcd",
]


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with FakeProviderServer() as url:
        yield url


def conformance(*args: str, cwd: Path = ROOT) -> Ran:
    """`conformance ARGS` in this process, with the key the fake provider expects."""
    return cli(*args, cwd=cwd, env={"FAKE_KEY": KEY})


def as_process(*args: str, cwd: Path = ROOT) -> Ran:
    """`conformance ARGS` as a real process, with the key the fake provider expects."""
    return conformance_process(*args, cwd=cwd, env={"FAKE_KEY": KEY}, timeout=120)


def record(
    provider: str,
    out: Path,
    family: str,
    *more: str,
    model: str = "fake-native",
    run: Callable[..., Ran] = conformance,
) -> Ran:
    base = provider + "/v1" if family.startswith("openai") else provider
    return run(
        "record",
        "--provider",
        family,
        "--base-url",
        base,
        "--model",
        model,
        "--prompt",
        "hello <b>",
        "--out",
        str(out),
        "--api-key-env",
        "FAKE_KEY",
        "--header",
        "OpenAI-Organization: org-secret0123",
        "--header",
        "OpenAI-Project: proj_secret0123",
        "--header",
        "Cookie: session=cookie0123",
        *more,
    )


@pytest.mark.parametrize(
    ("family", "flags", "form"),
    [
        ("openai-chat", ["--stream"], "sse"),
        ("openai-responses", [], "json"),
        ("anthropic", ["--stream"], "sse"),
        ("gemini", ["--stream", "--key-in-query"], "sse"),
        ("gemini", [], "json"),
        ("ollama", ["--stream"], "ndjson"),
    ],
)
def test_record_scrubs_every_secret(
    provider: str, tmp_path: Path, family: str, flags: list[str], form: str
):
    out = tmp_path / "cassettes" / "fake" / "capture.yaml"
    result = record(provider, out, family, *flags)
    assert result.returncode == 0, result.stderr
    assert (
        f"{family.split('-')[0]}" in result.stdout and "next: conformance approve" in result.stdout
    )
    text = out.read_text()
    for secret in SECRETS:
        assert secret not in text
    assert "key=" not in text and scan(text) == []
    decoded = decode_cassette(out)
    assert decoded.form == form
    assert "".join(c.content or "" for c in decoded.chunks) == "Echo: hello <b>"
    assert "".join(c.reasoning or "" for c in decoded.chunks) == "The user says: hello <b>."
    provenance = load_cassette(out).provenance
    assert provenance is not None and provenance["kind"] == "recorded"
    assert (
        provenance["server"].startswith("http://127.0.0.1:")
        and provenance["model"] == "fake-native"
    )


def test_a_credential_in_the_response_is_never_written(provider: str, tmp_path: Path):
    out = tmp_path / "leak.yaml"
    result = record(provider, out, "openai-chat", "--stream", model="fake-leak")
    assert result.returncode == 1
    assert (
        "refusing to write" in result.stderr and "the key or token that was sent" in result.stderr
    )
    assert KEY not in result.stderr  # the message masks what it found
    assert not out.exists()


def test_failed_requests_and_existing_files_write_nothing(provider: str, tmp_path: Path):
    out = tmp_path / "x.yaml"
    unauthorized = conformance(
        "record", "--provider", "openai-chat", "--base-url", provider + "/v1", "--model", "m",
        "--prompt", "p", "--out", str(out), "--api-key-env", "NO_SUCH_VARIABLE_SET",
    )  # fmt: skip
    assert unauthorized.returncode == 1 and "HTTP 401" in unauthorized.stderr
    assert not out.exists()
    out.write_text("keep me")
    again = record(provider, out, "openai-chat")
    assert again.returncode == 1 and "exists" in again.stderr and out.read_text() == "keep me"


def test_scan_finds_credential_shapes():
    text = "a: Bearer abcdefghijklmnop\nb: AIzaSyA0123456789abcdefghijklmnopqrstu\n"
    text += "c: gsk_0123456789abcdefghijkl\n"
    assert [f.line for f in scan(text)] == [1, 2, 3]
    assert scan("signature: EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+Vu") == []
    url, headers, _ = build_request(
        Recording("gemini", "https://g.example", "m", "p", True, "k3y-value", key_in_query=True)
    )
    assert (
        url.endswith(":streamGenerateContent?alt=sse&key=k3y-value")
        and "x-goog-api-key" not in headers
    )


def small_corpus(tmp_path: Path, *entries: str) -> None:
    """A corpus of no cases yet whose taxonomy has just `entries`, so that `conformance
    check` can pass once the new case covers them."""
    taxonomy = yaml.safe_load((bundled_cases_dir() / "taxonomy.yaml").read_text())["entries"]
    (tmp_path / "cases").mkdir()
    chosen = {"entries": {entry: taxonomy[entry] for entry in entries}}
    (tmp_path / "cases" / "taxonomy.yaml").write_text(yaml.safe_dump(chosen))
    (tmp_path / "cassettes" / "fake").mkdir(parents=True)


@pytest.mark.parametrize(
    "conformance",
    [conformance, pytest.param(as_process, marks=pytest.mark.slow)],
    ids=["in-process", "processes"],
)
def test_a_new_capture_is_approved_reviewed_and_accepted(
    conformance: Callable[..., Ran], provider: str, tmp_path: Path
):
    """The whole journey; in the slow tier each step is a real process, as a user runs it."""
    small_corpus(tmp_path, "SPLIT.open")
    out = tmp_path / "cassettes" / "fake" / "tags-stream.yaml"
    recorded = record(provider, out, "anthropic", "--stream", model="fake-tags", run=conformance)
    assert recorded.returncode == 0
    pending = conformance("approve", "cassettes/fake/tags-stream.yaml", cwd=tmp_path)
    assert pending.returncode == 0, pending.stderr
    written = next((tmp_path / "cases" / "pending").glob("*.yaml"))
    text = written.read_text()
    case_id = json.loads(text.split("  - id: ")[1].split("\n")[0])
    assert case_id[0] in "23456789" and "pending: true" in text
    assert (
        'expected: {assistant: "\\n\\nEcho: hello <b>", thinking: "Thinking about hello <b>."}'
        in text
    )
    assert 'taxonomy: "SPLIT.open"' in text  # the tags arrive cut: `<th` + `ink>`
    ran = conformance(
        "run",
        "--cases",
        "cases",
        "--id",
        case_id,
        "--report-dir",
        "reports",
        "--allow-unjudged",  # a pending case alone judges nothing: no green run unless asked
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    results = json.loads((tmp_path / "reports" / "results.json").read_text())["implementations"][0]
    case_results = [r for r in results["results"] if r["check"] != "growth"]
    assert {r["verdict"] for r in case_results} == {"SKIP"}
    assert all(r["reason"].startswith("pending review") for r in case_results)
    # The reviewer agrees with the split, and names the capture properly.
    written.write_text(
        text.replace('"Capture fake/tags-stream"', '"Fake provider: tags cut apart"')
    )
    accepted = conformance("approve", "cassettes/fake/tags-stream.yaml", "--accept", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    assert not written.exists()
    assert f'id: "{case_id}"' in (tmp_path / "cases" / "cassettes.yaml").read_text()
    check = conformance("check", "--cases", "cases", cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    ran = conformance(
        "run", "--cases", "cases", "--id", case_id, "--report-dir", "reports", cwd=tmp_path
    )
    results = json.loads((tmp_path / "reports" / "results.json").read_text())["implementations"][0]
    assert ran.returncode == 0 and {r["verdict"] for r in results["results"]} == {"PASS"}
    again = conformance("approve", "cassettes/fake/tags-stream.yaml", cwd=tmp_path)
    assert again.returncode == 2 and f"already case {case_id}" in again.stderr


def test_accept_refuses_an_expectation_the_reference_disagrees_with(provider: str, tmp_path: Path):
    small_corpus(tmp_path, "NATIVE.only")
    out = tmp_path / "cassettes" / "fake" / "native.yaml"
    assert record(provider, out, "ollama", "--stream").returncode == 0
    assert conformance("approve", str(out), "--cases", "cases", cwd=tmp_path).returncode == 0
    written = next((tmp_path / "cases" / "pending").glob("*.yaml"))
    written.write_text(
        written.read_text().replace('assistant: "Echo: hello <b>"', 'assistant: "Echo"')
    )
    refused = conformance("approve", str(out), "--cases", "cases", "--accept", cwd=tmp_path)
    assert refused.returncode == 1 and "is not ready" in refused.stderr
    assert "the reference disagrees" in refused.stderr and written.exists()
