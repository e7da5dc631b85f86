"""Captures as other tools store them: vcrpy YAML and JSON, pydantic-ai's `parsed_body`,
Ruby VCR, HAR 1.2, bodies as text, !!binary or base64, compressed; the Mistral, Cohere and
Bedrock wire formats; bodies framed by content type and the request's stream flag; and
`conformance import`."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import zlib
from pathlib import Path

import brotli
import pytest
import yaml
from click.testing import CliRunner

from conformance.capture.importer import chunks_hash, scan
from conformance.cassettes import (
    CassetteError,
    bundled_cassettes_dir,
    decode_cassette,
    decode_interaction,
    guess_family,
    iter_cassette_files,
    load_cassette,
)
from conformance.cassettes._formats import read_capture
from conformance.cassettes._har import to_har
from conformance.cli.main import main
from conformance.corpus.cases import bundled_cases_dir, load_corpus

BUNDLED = list(iter_cassette_files(bundled_cassettes_dir()))
RECORDED = [path for path in BUNDLED if (load_cassette(path).provenance or {}).get("repository")]
CHAT = "https://api.mistral.ai/v1/chat/completions"
SSE_BODY = (
    'data: {"choices":[{"index":0,"delta":{"reasoning_content":"plan"}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"content":"<think>x</think>Answer"},'
    '"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
EXPECTED = [(None, "plan"), ("<think>x</think>Answer", None)]


def chunks_of(path: Path, interaction: int = 0) -> list[tuple[str | None, str | None]]:
    return [(c.content, c.reasoning) for c in decode_cassette(path, interaction).chunks]


def model_calls(path: Path) -> dict[int, tuple]:
    """Every model call's family, form and chunks, by interaction."""
    found = {}
    for interaction in load_cassette(path).interactions:
        if interaction.method == "POST" and guess_family(interaction) is not None:
            decoded = decode_interaction(interaction)
            found[interaction.index] = (decoded.family, decoded.form, decoded.chunks)
    return found


def vcr_yaml(tmp_path: Path, response: dict, request: dict | None = None, name="c.yaml") -> Path:
    request = request or {"method": "POST", "uri": CHAT, "body": None, "headers": {}}
    path = tmp_path / name
    path.write_text(
        yaml.safe_dump({"interactions": [{"request": request, "response": response}]}), "utf-8"
    )
    return path


def response(body: object, content_type: str = "text/event-stream", **headers) -> dict:
    all_headers = {"content-type": [content_type], **{k: [v] for k, v in headers.items()}}
    return {"status": {"code": 200, "message": "OK"}, "headers": all_headers, "body": body}


# ------------------------------------------------------------------------- storage forms


@pytest.mark.parametrize(
    "stored",
    [
        pytest.param(lambda: {"string": SSE_BODY}, id="text"),
        pytest.param(lambda: {"string": SSE_BODY.encode()}, id="binary"),
        pytest.param(
            lambda: {"base64_string": base64.b64encode(SSE_BODY.encode()).decode()}, id="base64"
        ),
        pytest.param(
            lambda: {"encoding": "base64", "string": base64.b64encode(SSE_BODY.encode()).decode()},
            id="encoding-base64",
        ),
    ],
)
def test_bodies_as_text_binary_or_base64(tmp_path: Path, stored):
    assert chunks_of(vcr_yaml(tmp_path, response(stored()))) == EXPECTED


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: _raw_deflate(b)),
        ("br", brotli.compress),
        ("gzip, br", lambda b: brotli.compress(gzip.compress(b))),
    ],
    ids=["gzip", "deflate", "raw-deflate", "br", "gzip-then-br"],
)
def test_compressed_bodies_are_decompressed(tmp_path: Path, coding: str, compress):
    stored = {"string": compress(SSE_BODY.encode())}
    path = vcr_yaml(tmp_path, response(stored, **{"Content-Encoding": coding}))
    assert chunks_of(path) == EXPECTED
    interaction = load_cassette(path).interactions[0]
    assert "content-encoding" not in interaction.response_headers  # the body is decoded


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(data) + compressor.flush()


def test_a_body_that_does_not_match_its_encoding_is_an_error(tmp_path: Path):
    path = vcr_yaml(
        tmp_path, response({"string": b"not gzip at all"}, **{"content-encoding": "gzip"})
    )
    with pytest.raises(CassetteError, match="interaction 0: the response says Content-Encoding"):
        load_cassette(path)
    # A text body was stored decoded already, whatever the header says.
    path = vcr_yaml(tmp_path, response({"string": SSE_BODY}, **{"content-encoding": "gzip"}))
    assert chunks_of(path) == EXPECTED


def test_pydantic_ai_parsed_body_in_request_and_response(tmp_path: Path):
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "Think."}]},
            {"type": "text", "text": "Done."},
        ],
    }
    document = {
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": CHAT,
                    "headers": {"content-type": ["application/json"]},
                    "parsed_body": {"model": "magistral-medium-latest", "stream": False},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"]},
                    "parsed_body": {"choices": [{"index": 0, "message": message}]},
                },
            }
        ],
        "version": 1,
    }
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(document), "utf-8")
    cassette = load_cassette(path)
    assert cassette.format == "pydantic-ai"
    assert cassette.interactions[0].requested_stream is False
    assert json.loads(cassette.interactions[0].request_body)["model"] == "magistral-medium-latest"
    assert chunks_of(path) == [("Done.", "Think.")]


def test_vcrpy_json_and_ruby_vcr(tmp_path: Path):
    exchange = {
        "request": {"method": "POST", "uri": CHAT, "body": None, "headers": {}},
        "response": response({"string": SSE_BODY}),
    }
    json_path = tmp_path / "c.json"
    json_path.write_text(json.dumps({"interactions": [exchange], "version": 1}, indent=4))
    assert load_cassette(json_path).format == "vcrpy-json"
    assert chunks_of(json_path) == EXPECTED
    ruby = tmp_path / "ruby.yml"
    ruby.write_text(
        yaml.safe_dump(
            {
                "http_interactions": [
                    {
                        "request": {"method": "post", "uri": CHAT, "body": {"string": ""}},
                        "response": {
                            "status": {"code": 200, "message": "OK"},
                            "headers": {"Content-Type": ["text/event-stream"]},
                            "body": {"encoding": "UTF-8", "string": SSE_BODY},
                        },
                    }
                ],
                "recorded_with": "VCR 6.2.0",
            }
        )
    )
    assert load_cassette(ruby).format == "ruby-vcr"
    assert chunks_of(ruby) == EXPECTED


def test_files_that_are_not_captures(tmp_path: Path):
    other = tmp_path / "package.json"
    other.write_text('{"name": "x"}')
    with pytest.raises(CassetteError, match="not a cassette this suite reads"):
        load_cassette(other)
    empty = tmp_path / "e.yaml"
    empty.write_text("")
    with pytest.raises(CassetteError, match="the cassette is empty"):
        load_cassette(empty)
    unsafe = tmp_path / "u.yaml"
    unsafe.write_text("interactions: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(CassetteError, match="malformed YAML"):
        load_cassette(unsafe)  # the safe loader only: a capture never runs code


# ----------------------------------------------------------------------------------- HAR


def test_every_bundled_cassette_saved_as_har_decodes_identically(tmp_path: Path):
    for path in BUNDLED:
        capture = read_capture(path.read_bytes())
        har = tmp_path / (path.stem + ".har")
        har.write_text(json.dumps(to_har(capture.exchanges), indent=2), "utf-8")
        assert load_cassette(har).format == "har"
        assert model_calls(har) == model_calls(path), path


def test_har_entries_that_are_not_model_calls_are_listed_and_skipped(tmp_path: Path):
    capture = read_capture((bundled_cassettes_dir() / "ollama" / "chat.yaml").read_bytes())
    document = to_har(capture.exchanges)
    page = {
        "request": {"method": "GET", "url": "https://chat.example/favicon.ico", "headers": []},
        "response": {
            "status": 200,
            "headers": [],
            "content": {"mimeType": "image/png", "text": "iVBORw0KGgo=", "encoding": "base64"},
        },
    }
    document["log"]["entries"].insert(0, page)
    har = tmp_path / "session.har"
    har.write_text(json.dumps(document))
    findings = list(scan([har]))
    assert findings[0].skipped == "not a model call"
    assert findings[1].family == "ollama" and findings[1].error is None
    result = CliRunner().invoke(main, ["decode", str(har)])
    assert result.exit_code == 0, result.output
    assert "interaction 0: skipped, not a model call (GET https://chat.example/favicon.ico)" in (
        result.stderr
    )
    assert "interaction 1: ollama (json), 1 chunks" in result.stderr


# ---------------------------------------------------------------------- wire formats


def test_mistral_content_chunk_arrays_stream_and_whole():
    stream = decode_cassette(
        bundled_cassettes_dir() / "mistral/test_mistral_model_thinking_part_iter.yaml"
    )
    assert stream.family == "openai-chat" and stream.form == "sse"
    reasoning = "".join(c.reasoning or "" for c in stream.chunks)
    content = "".join(c.content or "" for c in stream.chunks)
    assert reasoning.startswith("Okay, the user is asking how to cross the street.")
    assert content.startswith("To cross the street safely, follow these steps:")
    assert "thinking" not in content and "[{" not in content
    whole = decode_cassette(
        bundled_cassettes_dir() / "mistral/test_mistral_model_thinking_part.yaml", 1
    )
    assert whole.form == "json" and len(whole.chunks) == 1
    assert whole.chunks[0].reasoning.startswith("**Analogizing crossing a river**")
    assert whole.chunks[0].content.startswith("Crossing a river is quite different")


def test_mistral_chunk_order_and_unknown_types(tmp_path: Path):
    def delta(*items: dict) -> str:
        event = {"choices": [{"index": 0, "delta": {"content": list(items)}}]}
        return f"data: {json.dumps(event)}\n\n"

    think = {"type": "thinking", "thinking": [{"type": "text", "text": "a"}]}
    text = {"type": "text", "text": "b"}
    body = (
        delta(think, text) + delta(text, think) + delta({"type": "reference", "reference_ids": [1]})
    )
    path = vcr_yaml(tmp_path, response({"string": body + "data: [DONE]\n\n"}))
    # A thinking piece after text starts a new chunk: a chunk's reasoning comes first.
    assert chunks_of(path) == [("b", "a"), ("b", None), (None, "a"), (None, None)]
    path = vcr_yaml(tmp_path, response({"string": delta({"type": "audio"}) + "data: [DONE]\n\n"}))
    with pytest.raises(CassetteError, match="unknown content chunk type 'audio'"):
        decode_cassette(path)


OLLAMA_PRETTY = json.dumps(
    {
        "model": "qwen3",
        "message": {"role": "assistant", "content": "Hi!", "thinking": "Greet back."},
        "done": True,
    },
    indent=2,
)


@pytest.mark.parametrize(
    ("content_type", "stream"),
    [("application/json; charset=utf-8", None), ("", False), ("application/json", True)],
    ids=["declared-json", "no-type-stream-false", "json-wins-over-stream-flag"],
)
def test_a_pretty_printed_non_streaming_ollama_body_is_one_document(
    tmp_path: Path, content_type: str, stream: bool | None
):
    body = {"model": "qwen3", **({"stream": stream} if stream is not None else {})}
    request = {"method": "POST", "uri": "http://localhost:11434/api/chat", "body": json.dumps(body)}
    headers = {"content-type": [content_type]} if content_type else {}
    stored = {
        "status": {"code": 200, "message": "OK"},
        "headers": headers,
        "body": {"string": OLLAMA_PRETTY},
    }
    path = vcr_yaml(tmp_path, stored, request)
    decoded = decode_cassette(path)
    assert (decoded.family, decoded.form) == ("ollama", "json")
    assert chunks_of(path) == [("Hi!", "Greet back.")]


def test_ndjson_without_a_content_type_is_still_read_line_by_line(tmp_path: Path):
    lines = [
        {"message": {"content": "", "thinking": "a"}, "done": False},
        {"message": {"content": "b"}, "done": True},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines)
    request = {
        "method": "POST",
        "uri": "http://localhost:11434/api/chat",
        "body": '{"stream": true}',
    }
    stored = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": body}}
    assert chunks_of(vcr_yaml(tmp_path, stored, request)) == [("", "a"), ("b", None)]


def test_errors_name_family_interaction_line_and_byte(tmp_path: Path):
    body = 'data: {"choices":[]}\n\ndata: {"choices": [oops]}\n\n'
    path = vcr_yaml(tmp_path, response({"string": body}))
    with pytest.raises(CassetteError) as caught:
        decode_cassette(path)
    message = str(caught.value)
    offset = body.index('data: {"choices": [oops]')
    assert (
        f"interaction 0: response body line 3 (byte {offset}): openai-chat sse: invalid JSON"
        in message
    )
    assert caught.value.offset == offset


def test_cohere_v2_whole_and_stream(tmp_path: Path):
    whole = decode_cassette(
        bundled_cassettes_dir() / "cohere/test_cohere_model_thinking_part.yaml", 1
    )
    assert whole.family == "cohere" and whole.chunks[0].reasoning.startswith("Okay, the user")
    events = [
        {"type": "message-start", "id": "1", "delta": {"message": {"role": "assistant"}}},
        {
            "type": "content-start",
            "index": 0,
            "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}},
        },
        {
            "type": "content-delta",
            "index": 0,
            "delta": {"message": {"content": {"thinking": "Hmm."}}},
        },
        {"type": "content-end", "index": 0},
        {"type": "content-delta", "index": 1, "delta": {"message": {"content": {"text": "Yes."}}}},
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    request = {
        "method": "POST",
        "uri": "https://api.cohere.com/v2/chat",
        "body": '{"stream": true}',
    }
    path = vcr_yaml(tmp_path, response({"string": body}), request)
    assert chunks_of(path) == [(None, "Hmm."), ("Yes.", None)]
    cut = body[: body.index("event: message-end")]
    path = vcr_yaml(tmp_path, response({"string": cut}), request)
    with pytest.raises(CassetteError, match="cohere sse: truncated body"):
        decode_cassette(path)


def test_bedrock_converse_json_and_event_stream(tmp_path: Path):
    stream = bundled_cassettes_dir() / "bedrock/test_bedrock_model_stream_empty_text_delta.yaml"
    decoded = decode_cassette(stream)
    assert (decoded.family, decoded.form) == ("bedrock", "eventstream")
    assert decoded.chunks[0].content == ""  # the empty text delta is a chunk
    assert decoded.chunks[1].reasoning and decoded.chunks[-1].content
    whole = decode_cassette(
        bundled_cassettes_dir() / "bedrock/test_bedrock_thinking_true_openai_variant.yaml"
    )
    assert whole.form == "json" and whole.chunks[0].content == "ok"
    # Cut inside a message: the error names the byte where the incomplete message starts.
    interaction = load_cassette(stream).interactions[0]
    document = yaml.safe_load(stream.read_text())
    document["interactions"][0]["response"]["body"]["string"] = interaction.body[:-20]
    cut = tmp_path / "cut.yaml"
    cut.write_text(yaml.safe_dump(document))
    with pytest.raises(
        CassetteError, match=r"response body byte \d+: bedrock eventstream: truncated"
    ):
        decode_cassette(cut)


# ----------------------------------------------------------------- a directory as stored


def test_a_copied_test_suite_directory_decodes_and_imports(tmp_path: Path):
    """pytest-recording's layout (cassettes/<module>/<test>.yaml), files as stored."""
    assert len(RECORDED) >= 15
    suite = tmp_path / "tests" / "cassettes"
    for path in RECORDED:
        source = (load_cassette(path).provenance or {})["path"]
        target = suite / Path(source).parent.name / Path(source).name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (suite / "conftest.json").write_text('{"not": "a capture"}')
    runner = CliRunner()
    decoded = runner.invoke(main, ["decode", str(tmp_path)])
    assert decoded.exit_code == 0, decoded.stderr
    assert "conftest.json: skipped, not a capture" in decoded.stderr
    imported = runner.invoke(main, ["import", str(tmp_path), "--json"])
    assert imported.exit_code == 0, imported.stderr
    rows = [json.loads(line) for line in imported.stdout.splitlines()]
    families = {row.get("family") for row in rows if row.get("native_reasoning")}
    assert {
        "openai-chat",
        "anthropic",
        "openai-responses",
        "gemini",
        "cohere",
        "bedrock",
    } <= families
    assert any(row.get("tags_in_content") for row in rows)
    providers = {row["provider"] for row in rows if row.get("family")}
    assert len(providers) >= 8


def test_import_writes_pending_cases_deduplicated_against_the_corpus(tmp_path: Path):
    corpus = tmp_path / "cases"
    shutil.copytree(bundled_cases_dir(), corpus)
    shutil.copytree(bundled_cassettes_dir(), tmp_path / "cassettes")
    runner = CliRunner()
    # Already in the corpus (same chunks): no case.
    known = bundled_cassettes_dir() / "huggingface/test_simple_completion.yaml"
    result = runner.invoke(
        main, ["import", str(known), "--interaction", "0", "--pending", str(corpus / "pending")]
    )
    assert result.exit_code == 0, result.stderr
    assert "no case: already in the corpus as 8PNN" in result.stderr
    # A new capture, with a cookie that must not be copied.
    source = tmp_path / "elsewhere" / "capture.yaml"
    source.parent.mkdir()
    text = (
        known.read_text().split("\nmetadata:")[0].replace("Keeping it simple", "Keeping it short")
    )
    text = text.replace("      host:\n", "      cookie:\n      - session=abc\n      host:\n", 1)
    source.write_text(text)
    result = runner.invoke(
        main,
        [
            "import",
            str(source),
            "--interaction",
            "0",
            "--pending",
            str(corpus / "pending"),
            "--repository",
            "o/r",
            "--commit",
            "c0ffee",
            "--license",
            "MIT",
        ],
    )
    assert result.exit_code == 0, result.stderr
    [pending] = list((corpus / "pending").glob("*.yaml"))
    copied = tmp_path / "cassettes" / "huggingface" / "capture.yaml"
    assert copied.exists()
    provenance = load_cassette(copied).provenance
    assert provenance["kind"] == "recorded" and provenance["repository"] == "o/r"
    assert provenance["commit"] == "c0ffee" and provenance["scrubbed"] == "headers removed: cookie"
    assert "session=abc" not in copied.read_text()
    loaded = load_corpus([corpus])
    [case] = [c for c in loaded.cases if getattr(c, "pending", False)]
    assert case.cassette.path.resolve() == copied.resolve()
    assert "Keeping it short" in case.expected.thinking
    assert chunks_hash(case.chunks) != chunks_hash(decode_cassette(known).chunks)
    assert pending.read_text().startswith("# Pending review: written by `conformance import`")
