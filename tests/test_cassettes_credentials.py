"""One credential scanner everywhere: every vendor key placement (headers, query strings,
JSON and form bodies), in every form the loader reads (vcrpy YAML and JSON, pydantic-ai's
`parsed_body`, Ruby VCR, HAR, any extension), is refused by `approve` and `check` and never
copied by `import --pending`; `record` keeps no key given in `--base-url`. And captures and
expectation files are read with the alias and depth guards of case files."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cassettes import bundled_cassettes_dir, load_cassette
from conformance.cassettes._model import CassetteError
from conformance.cassettes._secret_rules import secret_field, secret_header
from conformance.cassettes._secrets import scan_cassette_file, scan_cassette_text
from conformance.corpus.expectations import load_expected_failures
from conformance.errors import UsageError

from .helpers import cli
from .test_cassettes_record import KEY, provider, small_corpus

__all__ = ["provider"]  # the fixture, shared with the recording tests

CLEAN = load_cassette(bundled_cassettes_dir() / "fake-provider/anthropic-split-tags-stream.yaml")
SOURCE = CLEAN.interactions[0]

# Each placement the scanner missed, with a value of its own so each is found by itself.
HEADERS = {
    "x-api-key": "xak0123456789abcdef0123456789",  # missed by import in a flow mapping
    "Ocp-Apim-Subscription-Key": "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    "x-functions-key": "fnKey0123456789abcdefABCDEF0123456789",
    "x-subscription-key": "subKey0123456789abcdef0123456789",
    "x-openai-key": "oaiKey0123456789abcdef0123456789",
    "anthropic-api-key": "antKey0123456789abcdef0123456789",
    "X-Auth-Token": "authTok0123456789abcdef0123456789",
    "x-amz-security-token": "FwoGZXIvYXdzEJr0123456789abcdefEXAMPLE",
    "X-Vendor-Key": "vendorKey0123456789abcdef01234567",  # the generic rule
}
QUERY = {"code": "fnCode0123456789abcdefABCDEF==", "subscription-key": "qsk0123456789abcdef0123"}
JSON_FIELDS = {"subscription_key": "jsk0123456789abcdef0123", "api_key": "jak0123456789abcdef01"}
FORM_FIELDS = {"client_secret": "fcs0123456789abcdef0123", "api_key": "fak0123456789abcdef0123"}


def placements() -> list[str]:
    """Every credential value placed: what must not get through."""
    return [*HEADERS.values(), *QUERY.values(), *JSON_FIELDS.values(), *FORM_FIELDS.values()]


def exchange(form_body: bool) -> dict[str, Any]:
    """The clean capture's exchange with every placement of one body kind added."""
    query = "&".join(f"{name}={value}" for name, value in QUERY.items())
    if form_body:
        body = "&".join(f"{name}={value}" for name, value in FORM_FIELDS.items())
    else:
        body = json.dumps({**json.loads(SOURCE.request_body or b"{}"), **JSON_FIELDS})
    return {
        "uri": f"https://api.anthropic.com/v1/messages?{query}",
        "headers": {"content-type": "application/json", **HEADERS},
        "body": body,
        "response_headers": {k: list(v) for k, v in SOURCE.response_headers.items()},
        "response_body": SOURCE.body.decode(),
    }


def vcrpy(x: dict[str, Any], *, parsed: bool = False) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": "POST",
        "uri": x["uri"],
        "headers": {name: [value] for name, value in x["headers"].items()},
    }
    if parsed and x["body"].startswith("{"):
        request["parsed_body"] = json.loads(x["body"])
    else:
        request["body"] = x["body"]
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": x["response_headers"],
        "body": {"string": x["response_body"]},
    }
    return {"interactions": [{"request": request, "response": response}], "version": 1}


def ruby_vcr(x: dict[str, Any]) -> dict[str, Any]:
    return {
        "http_interactions": [
            {
                "request": {
                    "method": "post",
                    "uri": x["uri"],
                    "body": {"encoding": "UTF-8", "string": x["body"]},
                    "headers": {name: [value] for name, value in x["headers"].items()},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": x["response_headers"],
                    "body": {"encoding": "UTF-8", "string": x["response_body"]},
                },
            }
        ]
    }


def har(x: dict[str, Any]) -> dict[str, Any]:
    def listed(headers: dict[str, Any]) -> list[dict[str, str]]:
        return [
            {"name": name, "value": value}
            for name, values in headers.items()
            for value in (values if isinstance(values, list) else [values])
        ]

    request = {
        "method": "POST",
        "url": x["uri"],
        "headers": listed(x["headers"]),
        "queryString": [{"name": name, "value": value} for name, value in QUERY.items()],
        "postData": {"mimeType": "application/json", "text": x["body"]},
    }
    content = {"mimeType": "text/event-stream", "text": x["response_body"]}
    response = {"status": 200, "statusText": "OK", "headers": listed(x["response_headers"])}
    entry = {"request": request, "response": {**response, "content": content}}
    return {"log": {"version": "1.2", "entries": [entry]}}


#: (form, file name, the capture's text) for every stored form, each body kind.
def captures(form_body: bool) -> list[tuple[str, str, str]]:
    x = exchange(form_body)
    kind = "form" if form_body else "json"
    return [
        ("vcrpy-yaml", f"vcrpy-{kind}.yaml", yaml.safe_dump(vcrpy(x), sort_keys=False)),
        ("vcrpy-json", f"vcrpy-{kind}.json", json.dumps(vcrpy(x), indent=1)),
        ("pydantic-ai", f"pydantic-{kind}.yml", yaml.safe_dump(vcrpy(x, parsed=True))),
        ("ruby-vcr", f"ruby-{kind}.yml", yaml.safe_dump(ruby_vcr(x), sort_keys=False)),
        ("har", f"session-{kind}.har", json.dumps(har(x))),
        (
            "flow-yaml",
            f"flow-{kind}.yaml",
            yaml.safe_dump(vcrpy(x), default_flow_style=True, width=10_000),
        ),
    ]


ALL = [(form, name, text) for body in (False, True) for form, name, text in captures(body)]
IDS = [name for _, name, _ in ALL]


def expected_values(name: str) -> list[str]:
    body = FORM_FIELDS if "-form" in name else JSON_FIELDS
    return [*HEADERS.values(), *QUERY.values(), *body.values()]


@pytest.mark.parametrize(("form", "name", "text"), ALL, ids=IDS)
def test_every_placement_is_found_in_every_form(form: str, name: str, text: str, tmp_path):
    path = tmp_path / name
    path.write_text(text)
    assert load_cassette(path).format in (form, "vcrpy-yaml")  # the loader reads it
    masked = "\n".join(str(finding) for finding in scan_cassette_file(path))
    for value in expected_values(name):
        assert repr(value[:4] + "...") in masked, (value, masked)
        assert value not in masked


def test_the_clean_capture_scans_clean_in_every_form(tmp_path):
    x = exchange(False)
    x["uri"], x["headers"], x["body"] = SOURCE.uri, {"content-type": "application/json"}, "{}"
    for document in (vcrpy(x), vcrpy(x, parsed=True), ruby_vcr(x)):
        assert scan_cassette_text(yaml.safe_dump(document)) == []
    clean_har = har(x)
    clean_har["log"]["entries"][0]["request"]["queryString"] = []
    assert scan_cassette_text(json.dumps(clean_har)) == []


@pytest.mark.parametrize(
    ("name", "value", "credential"),
    [
        ("max_tokens", "4096", False),
        ("prompt_tokens", "1234567890123", False),
        ("token_count", 12345678901234, False),
        ("token_count", "123456789012345", False),
        ("eos_token", "<|endoftext|>", False),
        ("tokenizer", "meta-llama/Llama-3.1-8B-Instruct", False),
        ("cache_key", "short", False),
        ("x-vendor-key", "vendorKey0123456789abcdef", True),
        ("refreshToken", "rt0123456789abcdefXYZ", True),
    ],
)
def test_the_generic_rule_takes_only_values_that_look_like_credentials(
    name: str, value: Any, credential: bool
):
    assert secret_field(name, value, request=True) is credential
    assert secret_header(name, value) is credential or name.endswith(("tokens", "token"))


def corpus_with(tmp_path: Path, body: bool) -> list[str]:
    """A corpus of one accepted clean capture, and the captures of every form beside it."""
    small_corpus(tmp_path, "SPLIT.open")
    clean = tmp_path / "cassettes" / "fake" / "capture.yaml"
    shutil.copy(CLEAN.path, clean)
    assert cli("approve", str(clean), "--cases", "cases", cwd=tmp_path).returncode == 0
    assert cli("approve", str(clean), "--accept", cwd=tmp_path).returncode == 0
    names = []
    for _, name, text in captures(body):
        (tmp_path / "cassettes" / "fake" / name).write_text(text)
        names.append(name)
    return names


@pytest.mark.slow
@pytest.mark.parametrize("form_body", [False, True], ids=["json-body", "form-body"])
def test_check_refuses_every_placement_in_every_form_and_extension(form_body: bool, tmp_path):
    names = corpus_with(tmp_path, form_body)
    checked = cli("check", "--cases", "cases", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    for name in names:
        lines = [line for line in checked.stdout.splitlines() if f"fake/{name}:" in line]
        shown = "\n".join(lines)
        for value in expected_values(name):
            assert repr(value[:4] + "...") in shown, (name, value, shown)
    for value in placements():
        assert value not in checked.stdout + checked.stderr


@pytest.mark.parametrize(("form", "name", "text"), ALL, ids=IDS)
def test_approve_refuses_every_placement_in_every_form(form: str, name: str, text: str, tmp_path):
    small_corpus(tmp_path, "SPLIT.open")
    path = tmp_path / "cassettes" / "fake" / name
    path.write_text(text)
    refused = cli("approve", str(path), "--cases", "cases", cwd=tmp_path)
    assert refused.returncode != 0
    assert "holds what looks like a credential" in refused.stderr
    for value in expected_values(name):
        assert repr(value[:4] + "...") in refused.stderr, (value, refused.stderr)
        assert value not in refused.stderr
    assert not (tmp_path / "cases" / "pending").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("form", "name", "text"), ALL, ids=IDS)
def test_import_never_copies_a_credential(form: str, name: str, text: str, tmp_path):
    small_corpus(tmp_path, "SPLIT.open")
    source = tmp_path / "elsewhere" / name
    source.parent.mkdir()
    source.write_text(text)
    done = cli("import", str(source), "--pending", "cases/pending", cwd=tmp_path)
    copies = [p for p in (tmp_path / "cassettes").rglob("*") if p.is_file()]
    for copy in copies:
        copied = copy.read_text()
        for value in placements():
            assert value not in copied, (copy.name, value)
        assert scan_cassette_text(copied) == [], copy.name
    if name.endswith((".yaml", ".yml")):  # a case may name only a YAML cassette
        assert done.returncode == 0 and copies, done


def test_serve_never_serves_a_capture_that_holds_a_credential(tmp_path):
    from conformance.replay.http_server import ReplayServer

    shutil.copy(CLEAN.path, tmp_path / "clean.yaml")
    for _, name, text in captures(False):
        (tmp_path / name).write_text(text)
    with ReplayServer(tmp_path) as server:
        assert [entry.name for entry in server.served] == ["clean"]
        assert len(server.problems) == len(captures(False))
        assert all("holds what looks like a credential" in p for p in server.problems)
        for value in placements():
            assert value not in "\n".join(server.problems)


def test_record_writes_no_key_given_in_the_base_url(provider: str, tmp_path):
    out = tmp_path / "azure.yaml"
    key = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
    base = f"{provider}/v1?api-version=2024-10-21&subscription-key={key}"
    result = cli(
        "record", "--provider", "openai-chat", "--base-url", base, "--model", "fake-native",
        "--prompt", "hi", "--out", str(out), "--api-key-env", "FAKE_KEY",
        env={"FAKE_KEY": KEY},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert key not in out.read_text()
    assert "api-version=2024-10-21" in load_cassette(out).interactions[0].uri


# --------------------------------------------------------------------- aliases and depth

BOMB = "\n".join(
    [
        'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]',
        *(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}]"
            for i in range(9)
        ),
        "interactions: [*j]",
    ]
)
DEEP = "interactions: []\nmetadata: " + "[" * 900 + "]" * 900 + "\n"


@pytest.mark.parametrize("text", [BOMB, DEEP], ids=["alias-bomb", "900-deep"])
def test_a_hostile_cassette_is_refused_quickly_by_load_scan_check_and_approve(text, tmp_path):
    small_corpus(tmp_path, "SPLIT.open")
    path = tmp_path / "cassettes" / "fake" / "hostile.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(CassetteError, match=r"aliases|deeper"):
        load_cassette(path)
    assert scan_cassette_file(path) == []
    cases = tmp_path / "cases" / "hostile.yaml"
    cases.write_text(
        "category: cassettes\ncases:\n  - id: '2AAA'\n    slug: hostile\n    title: t\n"
        "    taxonomy: SPLIT.open\n    level: must\n    cassette: fake/hostile.yaml\n"
        "    expected: {assistant: '', thinking: ''}\n"
    )
    checked = cli("check", "--cases", "cases", cwd=tmp_path)
    assert checked.returncode == 2 and "hostile.yaml" in checked.stdout + checked.stderr
    approved = cli("approve", str(path), "--cases", "cases", cwd=tmp_path)
    assert approved.returncode == 2
    assert "aliases" in approved.stderr or "deeper" in approved.stderr
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("text", [BOMB, "K7QF: " + "[" * 900 + "]" * 900], ids=["bomb", "deep"])
def test_a_hostile_expectation_file_is_refused_with_its_line(text: str, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"aliases|deeper"):
        load_expected_failures(path)
    assert time.monotonic() - started < 2


def test_the_bundled_cassettes_of_every_extension_scan_clean():
    from conformance.cassettes._load import iter_cassette_files

    paths = list(iter_cassette_files(bundled_cassettes_dir()))
    assert {str(p): scan_cassette_file(p) for p in paths if scan_cassette_file(p)} == {}
