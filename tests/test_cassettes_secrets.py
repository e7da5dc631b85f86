"""No credential reaches the corpus: the one scanner, and `record`, `approve`, `approve
--accept` and `check` using it. Recording is end to end against the fake provider on
127.0.0.1 (`conformance record`, a real request)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from conformance.capture.provider_request import Recording, build_request
from conformance.cassettes import bundled_cassettes_dir, decode_cassette, load_cassette
from conformance.cassettes._scrub import scrub_text
from conformance.cassettes._secret_rules import PLACEHOLDER
from conformance.cassettes._secrets import scan, scan_cassette_file, scan_cassette_text

from .test_cassettes_record import KEY, conformance, provider, record, small_corpus

__all__ = ["provider"]  # the fixture, shared with the recording tests

CLEAN = "fake-provider/anthropic-split-tags-stream.yaml"

# Credential shapes, each as it would sit in a header, a URI or a body. Fake, but shaped
# like the real thing.
SHAPED = {
    "sk-ant": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "sk-proj": "sk-proj-AbCdEfGhIjKlMnOpQrStUv0123456789",
    "sk": "sk-AbCdEfGhIjKlMnOpQrStUv0123456789",
    "AIza": "AIzaSyA0123456789abcdefghijklmnopqrstu",
    "xai": "xai-AbCdEfGhIjKlMnOpQrStUv0123456789",
    "gsk": "gsk_AbCdEfGhIjKlMnOpQrStUv0123456789",
    "AKIA": "AKIAIOSFODNN7EXAMPLE",
    "ASIA": "ASIAY34FZKBOKMUTVV7A",
    "sigv4": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request",
    "x-amz-signature": "?X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6"
    + "789a8edb4c82c400e06b5924a6f2b5d7",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "Bearer abcdefghij0123456789",
    "basic": "Basic dXNlcjpwYXNzd29yZA==",
    "query": "https://x.example/v1?api_key=abc123def456",
    "private key": "-----BEGIN RSA PRIVATE KEY-----",
}  # fmt: skip


@pytest.mark.parametrize("name", SHAPED)
def test_every_credential_shape_is_found_and_scrubbed(name: str):
    text = f"before {SHAPED[name]} after"
    assert scan(text), name
    scrubbed = scrub_text(text)
    assert scan(scrubbed) == [] and PLACEHOLDER in scrubbed, scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "signature: EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+Vu",
        "the bearer of bad news",
        "Basic arithmetic is taught first",
        "desk-0123456789abcdefghij is a word with sk- inside",
        f"Authorization: Bearer {PLACEHOLDER}",
        f"https://x.example/v1?key={PLACEHOLDER}",
        "https://x.example/v1?alt=sse&key=%5Bscrubbed%5D",
        PLACEHOLDER,
    ],
)
def test_text_that_is_no_credential_and_the_placeholder_are_not_found(text: str):
    assert scan(text) == []


def cassette(request_headers=None, uri="https://api.example/v1/chat/completions", body=None):
    """A cassette's YAML with the given request, and the bundled clean response."""
    data = yaml.safe_load((bundled_cassettes_dir() / CLEAN).read_text())
    request = data["interactions"][0]["request"]
    request["uri"] = uri
    if request_headers is not None:
        request["headers"] = {name: [value] for name, value in request_headers.items()}
    if body is not None:
        request["body"] = json.dumps(body)
    return yaml.safe_dump(data, sort_keys=False)


def where(text: str) -> list[str]:
    return [finding.where for finding in scan_cassette_text(text)]


def test_the_scanner_says_where_each_credential_sits():
    text = cassette(
        {"Authorization": f"Bearer {SHAPED['sk']}", "api-key": "0123456789abcdef0123"},
        uri="https://x.openai.azure.com/openai/deployments/d/chat/completions?key=plainvalue1",
        body={"model": "m", "api_key": "plain-secret-value", "messages": []},
    )
    found = where(text)
    assert "interaction 0: request header 'Authorization'" in found
    assert "interaction 0: request header 'api-key'" in found
    assert "interaction 0: request URI" in found
    assert "interaction 0: request body, JSON field 'api_key'" in found
    text = "\n".join(str(finding) for finding in scan_cassette_text(text))
    assert "(line " in text and SHAPED["sk"] not in text and "plain-secret-value" not in text


def test_headers_and_fields_named_like_credentials_are_found_whatever_their_value():
    text = cassette({"anthropic-api-key": "hunter2hunter2", "X-Session-Token": "opaque"})
    assert where(text) == [
        "interaction 0: request header 'anthropic-api-key'",
        "interaction 0: request header 'X-Session-Token'",
    ]
    data = yaml.safe_load(text)
    data["interactions"][0]["response"]["headers"]["set-cookie"] = ["session=abc; HttpOnly"]
    assert sorted(where(yaml.safe_dump(data))) == [
        "interaction 0: request header 'X-Session-Token'",
        "interaction 0: request header 'anthropic-api-key'",
        "interaction 0: response header 'set-cookie'",
    ]
    # Scrubbed values and what only looks like a credential name are fine.
    fine = cassette(
        {"Authorization": PLACEHOLDER, "x-api-key": PLACEHOLDER},
        body={"max_tokens": 1024, "thinking": {"budget_tokens": 512}},
    )
    assert where(fine) == []


def test_every_bundled_cassette_scans_clean():
    paths = sorted(bundled_cassettes_dir().rglob("*.yaml"))
    assert len(paths) >= 40
    assert {str(path): scan_cassette_file(path) for path in paths if scan_cassette_file(path)} == {}


# ------------------------------------------------------------------------ check and approve


def captured(tmp_path: Path) -> Path:
    """A clean capture in a fresh corpus whose taxonomy has just what it needs."""
    small_corpus(tmp_path, "SPLIT.open")
    out = tmp_path / "cassettes" / "fake" / "capture.yaml"
    shutil.copy(bundled_cassettes_dir() / CLEAN, out)
    return out


def leak(path: Path) -> None:
    """Put, as the issue found them going in silently, a bearer key, an `api-key` header, a
    key in the query string and a key in the JSON body into a cassette."""
    data = yaml.safe_load(path.read_text())
    request = data["interactions"][0]["request"]
    request["headers"]["Authorization"] = [f"Bearer {KEY}"]
    request["headers"]["api-key"] = ["0123456789abcdef0123456789abcdef"]
    request["uri"] += "?key=AIzaSyA0123456789abcdefghijklmnopqrstu"
    request["body"] = json.dumps({**json.loads(request["body"]), "api_key": "sekrit-sekrit"})
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def assert_refused(output: str, path: str) -> None:
    for place in (
        "interaction 0: request header 'Authorization'",
        "interaction 0: request header 'api-key'",
        "interaction 0: request URI",
        "interaction 0: request body, JSON field 'api_key'",
    ):
        assert f"{path}:" in output and place in output, output
    for secret in (KEY, "0123456789abcdef0123456789abcdef", "AIzaSyA0", "sekrit-sekrit"):
        assert secret not in output


def test_check_fails_on_a_cassette_that_holds_a_credential(tmp_path: Path):
    out = captured(tmp_path)
    assert conformance("approve", str(out), "--cases", "cases", cwd=tmp_path).returncode == 0
    accepted = conformance("approve", str(out), "--cases", "cases", "--accept", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    assert conformance("check", "--cases", "cases", cwd=tmp_path).returncode == 0
    leak(out)
    assert decode_cassette(out).chunks  # it still decodes: nothing else would notice
    checked = conformance("check", "--cases", "cases", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert_refused(checked.stdout, "cassettes/fake/capture.yaml")


def test_check_finds_a_credential_in_a_cassette_no_case_uses_yet(tmp_path: Path):
    out = captured(tmp_path)
    assert conformance("approve", str(out), "--cases", "cases", cwd=tmp_path).returncode == 0
    assert conformance("approve", str(out), "--accept", cwd=tmp_path).returncode == 0
    unused = out.with_name("not-yet-approved.yaml")
    shutil.copy(out, unused)
    leak(unused)
    checked = conformance("check", "--cases", "cases", cwd=tmp_path)
    assert checked.returncode == 1
    assert_refused(checked.stdout, "cassettes/fake/not-yet-approved.yaml")
    assert "cassettes/fake/capture.yaml" not in checked.stdout


def test_approve_refuses_a_cassette_that_holds_a_credential(tmp_path: Path):
    out = captured(tmp_path)
    leak(out)
    refused = conformance("approve", str(out), "--cases", "cases", cwd=tmp_path)
    assert refused.returncode != 0
    assert "holds what looks like a credential" in refused.stderr
    assert_refused(refused.stderr, str(out))
    assert not (tmp_path / "cases" / "pending").exists()


def test_accept_refuses_a_cassette_that_gained_a_credential_after_review(tmp_path: Path):
    out = captured(tmp_path)
    assert conformance("approve", str(out), "--cases", "cases", cwd=tmp_path).returncode == 0
    leak(out)
    refused = conformance("approve", str(out), "--cases", "cases", "--accept", cwd=tmp_path)
    assert refused.returncode == 1
    assert_refused(refused.stderr, str(out))
    assert not (tmp_path / "cases" / "cassettes.yaml").exists()
    assert list((tmp_path / "cases" / "pending").glob("*.yaml"))


# ------------------------------------------------------------------------ record


def test_record_scrubs_custom_headers_extra_tokens_and_unknown_response_headers(
    provider: str, tmp_path: Path
):
    out = tmp_path / "capture.yaml"
    extra = {
        "api_key": "plain-secret-in-extra",
        "metadata": {"user": "someone", "note": SHAPED["xai"]},
        "reasoning_effort": "low",
    }
    result = record(
        provider,
        out,
        "openai-chat",
        "--stream",
        "--header",
        "X-Custom-Auth: hunter2-custom-value",
        "--header",
        "X-Trace: trace-kept-as-given",
        "--keep-header",
        "x-trace",
        "--header",
        "anthropic-beta: interleaved-thinking-2025-05-14",
        "--extra",
        json.dumps(extra),
        model="fake-native",
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    for secret in ("hunter2-custom-value", "plain-secret-in-extra", SHAPED["xai"], KEY):
        assert secret not in text
    for secret in ("sk-proj-fakeFAKE", "fAkEsEsSiOn0123456789"):  # from the fake's headers
        assert secret not in text
    assert scan_cassette_text(text) == []
    request = load_cassette(out).interactions[0]
    assert request.request_headers["x-custom-auth"] == PLACEHOLDER
    assert request.request_headers["x-trace"] == "trace-kept-as-given"
    assert request.request_headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    body = json.loads(request.request_body)
    assert body["api_key"] == PLACEHOLDER and body["metadata"]["note"] == PLACEHOLDER
    assert body["metadata"]["user"] == "someone" and body["reasoning_effort"] == "low"
    assert int(request.request_headers["content-length"]) == len(request.request_body)
    headers = request.response_headers
    assert headers["x-echo-debug"] == (f"upstream key {PLACEHOLDER}",)
    assert headers["x-session-handle"] == (PLACEHOLDER,)
    assert headers["content-type"][0].startswith("text/event-stream")
    assert decode_cassette(out).chunks


def test_a_header_named_like_a_credential_is_removed_even_if_kept(provider: str, tmp_path: Path):
    out = tmp_path / "capture.yaml"
    result = record(
        provider,
        out,
        "openai-chat",
        "--header",
        "X-Session-Token: opaque-session-value",
        "--keep-header",
        "X-Session-Token",
    )
    # Named like a credential: removed, kept or not.
    assert result.returncode == 0, result.stderr
    assert "opaque-session-value" not in out.read_text()
    assert "x-session-token" not in load_cassette(out).interactions[0].request_headers


def test_record_keeps_the_query_of_the_base_url(provider: str, tmp_path: Path):
    # Azure OpenAI's base URL carries `?api-version=`: the route goes before the query.
    out = tmp_path / "azure.yaml"
    base = provider + "/v1?api-version=2024-10-21"
    result = conformance(
        "record", "--provider", "openai-chat", "--base-url", base, "--model", "fake-native",
        "--prompt", "hi", "--out", str(out), "--api-key-env", "FAKE_KEY",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    uri = load_cassette(out).interactions[0].uri
    assert uri == provider + "/v1/chat/completions?api-version=2024-10-21"
    gemini = Recording("gemini", "https://g.example/?x=1", "m", "p", True, "k3y", key_in_query=True)
    url, _, _ = build_request(gemini)
    assert url == "https://g.example/v1beta/models/m:streamGenerateContent?x=1&alt=sse&key=k3y"
    # A key in the base URL's query is sent, and scrubbed like any other.
    out = tmp_path / "gemini.yaml"
    result = conformance(
        "record", "--provider", "gemini", "--base-url", provider + "?key=" + KEY, "--model",
        "fake-native", "--prompt", "hi", "--out", str(out), "--api-key-env", "NO_SUCH_VARIABLE",
        "--stream",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert KEY not in out.read_text()
    assert load_cassette(out).interactions[0].uri.endswith(":streamGenerateContent?alt=sse")


def test_cors_headers_name_credentials_but_hold_none() -> None:
    """Recorded DeepSeek responses carry `access-control-allow-credentials: true`."""
    from conformance.cassettes._secret_rules import secret_header

    assert not secret_header("Access-Control-Allow-Credentials")
    assert secret_header("X-Api-Key") and secret_header("Authorization")
