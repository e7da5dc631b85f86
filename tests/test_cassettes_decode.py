"""Decoders: every wire family's streaming and non-streaming forms -> chunks, and every kind
of bad input -> a CassetteError naming the cassette, the interaction and the body line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cassettes import (
    CassetteError,
    bundled_cassettes_dir,
    decode_cassette,
    decode_interaction,
    iter_cassette_files,
    load_cassette,
    write_cassette,
)
from conformance.cli.main import main
from conformance.model.chunks import Chunk

SSE = "text/event-stream"
CHAT = "https://api.example.com/v1/chat/completions"
BUNDLED = list(iter_cassette_files(bundled_cassettes_dir()))


def cassette(tmp_path: Path, uri: str, body: str | bytes, content_type: str = SSE, **more) -> Path:
    path = tmp_path / "c.yaml"
    write_cassette(path, [{"uri": uri, "body": body, "content_type": content_type, **more}])
    return path


def chunks(path: Path, **options) -> list[tuple[str | None, str | None]]:
    return [(c.content, c.reasoning) for c in decode_cassette(path, **options).chunks]


def data(*events: object, done: bool = True) -> str:
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return "".join(lines) + ("data: [DONE]\n\n" if done else "")


def delta(finish: str | None = None, **fields: object) -> dict:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


# ----------------------------------------------------------------------- OpenAI chat


@pytest.mark.parametrize(
    "field",
    ["reasoning_content", "reasoning"],
)
def test_openai_chat_stream_reads_each_native_reasoning_field(tmp_path: Path, field: str):
    body = data(delta(**{field: "plan"}), delta(content="Answer"), delta("stop"))
    assert chunks(cassette(tmp_path, CHAT, body)) == [(None, "plan"), ("Answer", None)]


def test_openai_chat_reasoning_details_and_mirrored_fields_count_once(tmp_path: Path):
    mirrored = {"type": "reasoning.text", "text": "r1", "format": "x"}
    body = data(
        delta(reasoning="r1", reasoning_details=[mirrored], content=""),
        delta(reasoning="r2", reasoning_content="r2"),
        delta(reasoning_details=[{"type": "reasoning.summary", "summary": "s"}]),
        delta(reasoning_details=[{"type": "reasoning.encrypted", "data": "gAAA"}]),
        delta("stop", content="A"),
    )
    assert chunks(cassette(tmp_path, CHAT, body)) == [
        ("", "r1"),
        (None, "r2"),
        (None, "s"),
        (None, None),
        ("A", None),
    ]


def test_openai_chat_tags_in_content_usage_chunks_comments_and_no_done(tmp_path: Path):
    body = (
        ": OPENROUTER PROCESSING\n\n"
        + data(
            delta(content="<think>a</think>"),
            {"choices": [], "usage": {"total_tokens": 3}},
            {"choices": None, "usage": {"total_tokens": 3}},
            delta("stop", content="b"),
            done=False,
        )
        + ": keep-alive\n\n"
    )
    assert chunks(cassette(tmp_path, CHAT, body)) == [("<think>a</think>", None), ("b", None)]


def test_openai_chat_json_with_escaped_tags(tmp_path: Path):
    # Go-style escapes, as Ollama and Groq write tags: the decoded content has real tags.
    content = r'"\u003cthink\u003ex\u003c/think\u003ey"'
    body = '{"choices": [{"index": 0, "message": {"content": ' + content + "}}]}"
    path = cassette(tmp_path, CHAT, body, "application/json")
    assert chunks(path) == [("<think>x</think>y", None)]


# ----------------------------------------------------------------------- Anthropic


def named(*events: dict) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


MESSAGES = "https://api.anthropic.com/v1/messages"


def test_anthropic_stream_thinking_redacted_signature_and_text(tmp_path: Path):
    body = named(
        {"type": "message_start", "message": {"content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {"type": "ping"},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "t"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "s"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "x"},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "A"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    )
    assert chunks(cassette(tmp_path, MESSAGES, body)) == [(None, "t"), ("A", None)]


def test_anthropic_json_blocks_in_order(tmp_path: Path):
    body = json.dumps(
        {
            "type": "message",
            "content": [
                {"type": "thinking", "thinking": "t1", "signature": "s"},
                {"type": "redacted_thinking", "data": "x"},
                {"type": "text", "text": "a"},
                {"type": "thinking", "thinking": "t2"},
                {"type": "text", "text": "b"},
            ],
        }
    )
    path = cassette(tmp_path, MESSAGES, body, "application/json")
    assert chunks(path) == [("a", "t1"), ("b", "t2")]


# ----------------------------------------------------------------------- OpenAI Responses

RESPONSES = "https://api.openai.com/v1/responses"


def test_responses_stream_summary_reasoning_text_and_output(tmp_path: Path):
    body = named(
        {"type": "response.created", "response": {}},
        {"type": "response.reasoning_summary_text.delta", "delta": "s"},
        {"type": "response.reasoning_text.delta", "delta": "r"},
        {"type": "response.output_text.delta", "delta": "o"},
        {"type": "response.function_call_arguments.delta", "delta": "{}"},
        {"type": "response.completed", "response": {}},
    )
    assert chunks(cassette(tmp_path, RESPONSES, body)) == [(None, "s"), (None, "r"), ("o", None)]


def test_responses_json_output_items(tmp_path: Path):
    body = json.dumps(
        {
            "output": [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
                {"type": "message", "content": [{"type": "output_text", "text": "o"}]},
            ]
        }
    )
    path = cassette(tmp_path, RESPONSES, body, "application/json")
    assert chunks(path) == [("o", "s")]


# ----------------------------------------------------------------------- Gemini

GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent"


def response(*parts: dict, finish: bool = False) -> dict:
    candidate: dict = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate]}


def test_gemini_sse_with_crlf(tmp_path: Path):
    events = [response({"text": "t", "thought": True}), response({"text": "a"}, finish=True)]
    body = "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events)
    assert chunks(cassette(tmp_path, GEMINI + "?alt=sse", body)) == [(None, "t"), ("a", None)]


def test_gemini_json_array_and_generate_content(tmp_path: Path):
    events = [
        response({"text": "t", "thought": True}, {"text": "a"}),
        response({"text": "", "thoughtSignature": "x"}, finish=True),
    ]
    body = "[" + ",\r\n".join(json.dumps(e, indent=2) for e in events) + "]"
    path = cassette(tmp_path, GEMINI, body, "application/json; charset=UTF-8")
    assert chunks(path) == [("a", "t"), ("", None)]
    whole = GEMINI.replace("streamGenerateContent", "generateContent")
    body = json.dumps(response({"text": "t", "thought": True}, {"text": "a"}, finish=True))
    assert chunks(cassette(tmp_path, whole, body, "application/json")) == [("a", "t")]


# ----------------------------------------------------------------------- Ollama


def test_ollama_chat_and_generate_ndjson_and_json(tmp_path: Path):
    lines = [
        {"message": {"role": "assistant", "content": "", "thinking": "t"}, "done": False},
        {"message": {"role": "assistant", "content": "\\u003cthink\\u003e"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True},
    ]
    body = "".join(json.dumps(line).replace("\\\\", "\\") + "\n" for line in lines)
    path = cassette(tmp_path, "http://localhost:11434/api/chat", body, "application/x-ndjson")
    assert chunks(path) == [("", "t"), ("<think>", None), ("", None)]
    body = json.dumps({"response": "a", "thinking": "t", "done": True})
    path = cassette(tmp_path, "http://localhost:11434/api/generate", body, "application/json")
    assert chunks(path) == [("a", "t")]


# ----------------------------------------------------------------------- bad input


def problem(path: Path, **options) -> str:
    with pytest.raises(CassetteError) as caught:
        decode_cassette(path, **options)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    return message


@pytest.mark.parametrize(
    ("uri", "body", "content_type", "expected"),
    [
        (
            CHAT,
            data(delta(content="a")).replace("\n\ndata: [DONE]\n\n", ""),
            SSE,
            "line 1 (byte 0): ",
        ),
        (CHAT, data(delta(content="a"), done=False), SSE, "neither a finish_reason"),
        (MESSAGES, named({"type": "message_start", "message": {}}), SSE, "no message_stop"),
        (
            RESPONSES,
            named({"type": "response.created", "response": {}}),
            SSE,
            "no response.completed",
        ),
        (
            GEMINI + "?alt=sse",
            f"data: {json.dumps(response({'text': 'a'}))}\r\n\r\n",
            SSE,
            "finishReason",
        ),
        (
            GEMINI,
            "[" + json.dumps(response({"text": "a"}, finish=True)),
            "application/json",
            "not closed",
        ),
        (
            "http://h/api/chat",
            '{"message": {"content": "a"}, "done": false}\n',
            "application/x-ndjson",
            '"done": true',
        ),
    ],
    ids=["sse-cut", "chat", "anthropic", "responses", "gemini-sse", "gemini-array", "ollama"],
)
def test_truncated_bodies_are_reported_not_decoded(
    tmp_path: Path, uri: str, body: str, content_type: str, expected: str
):
    message = problem(cassette(tmp_path, uri, body, content_type))
    assert "interaction 0" in message and "truncated body" in message and expected in message


def test_an_invalid_json_data_line_is_named_by_its_line(tmp_path: Path):
    body = "data: " + json.dumps(delta(content="a")) + "\n\n" + 'data: {"choices": [\n\n'
    message = problem(cassette(tmp_path, CHAT, body))
    assert "interaction 0: response body line 3 (byte " in message
    assert "invalid JSON in a data line" in message


@pytest.mark.parametrize(
    ("uri", "body", "expected"),
    [
        (
            MESSAGES,
            named({"type": "content_block_wiggle"}, {"type": "message_stop"}),
            "unknown event 'content_block_wiggle'",
        ),
        (
            RESPONSES,
            named({"type": "response.telepathy.delta"}, {"type": "response.completed"}),
            "unknown event 'response.telepathy.delta'",
        ),
        (CHAT, "event: surprise\ndata: {}\n\n", "unknown event 'surprise'"),
        (
            MESSAGES,
            named({"type": "content_block_start", "content_block": {"type": "hologram"}}),
            "unknown content block type 'hologram'",
        ),
    ],
    ids=["anthropic", "responses", "chat", "anthropic-block"],
)
def test_unknown_events_are_errors_naming_the_line(
    tmp_path: Path, uri: str, body: str, expected: str
):
    message = problem(cassette(tmp_path, uri, body))
    assert "response body line 2 (byte " in message and expected in message


def test_provider_errors_status_encoding_and_family(tmp_path: Path):
    error = named({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    message = problem(cassette(tmp_path, MESSAGES, error))
    assert "the provider sent an error (overloaded_error): Overloaded" in message
    message = problem(
        cassette(
            tmp_path, CHAT, '{"error": "no"}', "application/json", status=401, reason="Unauthorized"
        )
    )
    assert "HTTP 401 Unauthorized" in message
    message = problem(cassette(tmp_path, CHAT, b"data: \xff\xfe\n\n"))
    assert "response body line 1 (byte 6): the body is not UTF-8" in message
    message = problem(cassette(tmp_path, "https://h/v9/oracle", data(), "application/json"))
    assert "cannot tell the wire family of POST https://h/v9/oracle" in message
    assert chunks(
        cassette(tmp_path, "https://h/v9/oracle", data(delta("stop", content="a"))),
        family="openai-chat",
    ) == [("a", None)]


def test_unloadable_cassettes(tmp_path: Path):
    assert "does not exist" in problem(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [\n")
    assert "malformed YAML" in problem(broken)
    broken.write_text("version: 1\nstuff: 2\n")
    assert "not a cassette this suite reads" in problem(broken)
    path = cassette(tmp_path, CHAT, data(delta("stop", content="a")))
    assert "there is no interaction 3" in problem(path, interaction=3)


def test_every_bundled_cassette_decodes_and_has_provenance():
    assert len(BUNDLED) >= 60
    forms = set()
    recorded = set()
    for path in BUNDLED:
        cassette = load_cassette(path)
        for interaction in cassette.interactions:
            decoded = decode_interaction(interaction)
            forms.add((decoded.family, decoded.streaming))
        provenance = cassette.provenance
        assert provenance and provenance["kind"] in ("written", "recorded"), path
        if provenance["kind"] == "recorded" and provenance.get("repository"):
            # Recorded by another project's test suite: where exactly, under which license.
            assert provenance.get("commit") and provenance.get("path"), path
            assert provenance.get("license"), path
            recorded.add((provenance["provider"], path))
        else:
            assert provenance.get("document") or provenance.get("server"), path
    families = {"openai-chat", "anthropic", "openai-responses", "gemini", "ollama", "bedrock"}
    expected = {(family, streaming) for family in families for streaming in (True, False)}
    assert forms == expected | {("cohere", False)}
    assert len(recorded) >= 15
    assert len({provider for provider, _ in recorded}) >= 8


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(BUNDLED), st.data())
def test_cut_or_corrupted_bodies_never_crash(tmp_path: Path, source: Path, draw: st.DataObject):
    interaction = load_cassette(source).interactions[0]
    body = interaction.body
    cut = draw.draw(st.integers(0, len(body)))
    junk = draw.draw(st.binary(max_size=4))
    mangled = (
        body[:cut] + junk + body[cut + len(junk) :] if draw.draw(st.booleans()) else body[:cut]
    )
    content_type = interaction.response_headers.get("content-type", ("",))[0]
    path = cassette(tmp_path, interaction.uri, mangled, content_type)
    try:
        decoded = decode_cassette(path)
    except CassetteError as error:
        assert str(error).startswith(f"{path}: interaction 0")
    else:
        assert all(isinstance(chunk, Chunk) for chunk in decoded.chunks)


def test_decode_command_prints_json_lines_and_the_family():
    runner = CliRunner()
    path = bundled_cassettes_dir() / "vllm" / "both-keys-stream.yaml"
    result = runner.invoke(main, ["decode", str(path)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {"content": None, "reasoning": "好的"} in lines
    assert "openai-chat (sse), 5 chunks" in result.stderr
    bad = runner.invoke(main, ["decode", str(path), "--family", "anthropic"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith(f"error: {path}: interaction 0: response body line 1 (byte 0): ")


def test_a_cassette_with_several_interactions(tmp_path: Path):
    path = tmp_path / "two.yaml"
    first = data(delta("stop", content="first"))
    second = json.dumps({"choices": [{"index": 0, "message": {"content": "second"}}]})
    write_cassette(
        path,
        [
            {"uri": CHAT, "body": first, "content_type": SSE},
            {"uri": CHAT, "body": second, "content_type": "application/json"},
        ],
    )
    assert chunks(path) == [("first", None)]
    assert chunks(path, interaction=1) == [("second", None)]
    assert "has 2 interaction(s); there is no interaction 2" in problem(path, interaction=2)
