"""The protocol codec (conformance/transport/codec.py, messages.py, lines.py): its message
shapes against the JSON Schemas, both ends of the codec, the line buffer and the quarantine."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conformance.contracts import op_contracts
from conformance.model.chunks import Chunk
from conformance.model.requests import (
    Error,
    Ok,
    OpRequest,
    StreamRequest,
    Timeout,
    Unsupported,
    WholeRequest,
)
from conformance.model.results import Verdict
from conformance.transport.codec import (
    HELLO,
    Addressed,
    Bye,
    ClientCodec,
    Hello,
    OutOfStep,
    ProtocolError,
    decode_request,
    encode_reply,
    encode_request,
    hello_reply,
)
from conformance.transport.lines import LineBuffer, escape_controls
from conformance.transport.messages import SHAPES
from conformance.transport.quarantine import Quarantine
from conformance.transport.schemas import protocol_schema, protocol_validator, schema_names

STREAM = StreamRequest((Chunk("<think>a</thi"), Chunk("nk>b", "r")))
WHOLE = WholeRequest("<think>a</think>b", None)


def test_every_schema_is_a_message_of_the_codec_or_of_a_contract() -> None:
    contract_schemas = {
        f"{entry.NAME}-{end}" for entry in op_contracts() for end in ("request", "response")
    }
    assert set(schema_names()) == set(SHAPES) | contract_schemas


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_matches_its_schema(name: str) -> None:
    schema = protocol_schema(name)
    shape = SHAPES[name]
    assert set(schema["required"]) == set(shape.required)
    assert set(schema["properties"]) == set(shape.required) | set(shape.optional)
    assert schema.get("additionalProperties") is False


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_what_the_codec_writes_validates(name: str) -> None:
    written = {
        "hello-request": json.loads(HELLO),
        "bye-request": {"op": "bye"},
        "stream-request": json.loads(encode_request(STREAM, "7")),
        "whole-request": json.loads(encode_request(WHOLE, "8")),
        "hello-response": hello_reply({"name": "n", "version": "1", "language": "go"}, {}),
        "stream-response": encode_reply("7", Ok(deltas=[{"assistant": "", "thinking": ""}])),
        "whole-response": encode_reply("8", Ok(channels={"assistant": "b", "thinking": "a"})),
        "error-response": encode_reply("9", Error("boom")),
        "unsupported-response": encode_reply("9", Unsupported("no whole")),
    }[name]
    jsonschema.Draft202012Validator.check_schema(protocol_schema(name))
    protocol_validator(name).validate(written)


@pytest.mark.parametrize("name", ["stream-request", "whole-request"])
def test_request_examples_decode_and_encode_back(name: str) -> None:
    for example in protocol_schema(name)["examples"]:
        decoded = decode_request(example, {})
        assert isinstance(decoded, Addressed)
        assert not isinstance(decoded.request, (Error, Unsupported))
        assert decoded.request.to_wire(decoded.ident) == example


def test_response_examples_read_as_replies() -> None:
    codec = ClientCodec(validate=True)
    cases = [
        ("stream-response", StreamRequest((Chunk("<think>plan</thi"), Chunk("nk>Answer")))),
        ("whole-response", WHOLE),
        ("error-response", WHOLE),
        ("unsupported-response", WHOLE),
    ]
    kinds = []
    for name, request in cases:
        for example in protocol_schema(name)["examples"]:
            reply = codec.reply(json.dumps(example).encode(), request, example["id"])
            kinds.append(type(reply).__name__)
    assert kinds == ["Ok", "Ok", "Error", "Unsupported"]


def test_the_implementation_side_decodes_every_op() -> None:
    assert decode_request({"op": "hello", "protocol": 1}, {}) == Hello(1)
    assert decode_request({"op": "bye"}, {}) == Bye()
    op = decode_request({"op": "render", "id": "3", "events": []}, {"render": "render"})
    assert op == Addressed("3", OpRequest("render", {"events": []}, "render"))
    unknown = decode_request({"op": "dance", "id": "4"}, {})
    assert unknown == Addressed("4", Unsupported("unknown op 'dance'"))
    malformed = decode_request({"op": "stream", "id": "5"}, {})
    assert isinstance(malformed, Addressed) and isinstance(malformed.request, Error)
    assert isinstance(decode_request([1], {}), Addressed)


def test_the_harness_side_tells_out_of_step_from_malformed() -> None:
    codec = ClientCodec()
    assert isinstance(codec.reply(b"not json", STREAM, "1"), OutOfStep)
    assert isinstance(codec.reply(b"[1]", STREAM, "1"), OutOfStep)
    assert isinstance(codec.reply(b'{"id": "2", "deltas": []}', STREAM, "1"), OutOfStep)
    wrong_count = codec.reply(b'{"id": "1", "deltas": []}', STREAM, "1")
    assert wrong_count == Error("expected 3 deltas (2 chunks + the final flush), got 0")
    with pytest.raises(ProtocolError, match="refused hello: no \\\\x1b"):
        codec.hello_reply(b'{"error": "no \\u001b"}')


def test_the_reply_variants_say_what_failed_in_one_place() -> None:
    assert (Error("x").verdict, Error("x").reason) == (Verdict.ERROR, "x")
    assert (Unsupported("x").verdict, Unsupported("x").reason) == (Verdict.SKIP, "unsupported: x")
    assert (Timeout().verdict, Timeout().reason) == (Verdict.TIMEOUT, "no reply within the timeout")
    assert Error("x").problem == "error: x"


def test_the_line_buffer_splits_on_newline_bytes_only() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b'{"a": "x\xe2\x80\xa8y\r') == []
    assert buffer.unfinished == b'{"a": "x\xe2\x80\xa8y\r'
    assert buffer.feed(b'"}\n{"b"') == [b'{"a": "x\xe2\x80\xa8y\r"}']
    assert buffer.feed(b": 1}\n\n") == [b'{"b": 1}', b""]
    assert buffer.unfinished == b""


def test_the_line_buffer_hands_on_a_runaway_line_cut() -> None:
    buffer = LineBuffer(max_line=10)
    assert buffer.feed(b"12345") == []
    (line,) = buffer.feed(b"678901234")
    assert line == b"12345678901234"
    assert buffer.unfinished == b""


def test_control_characters_are_escaped_but_newlines_and_tabs_kept() -> None:
    assert escape_controls("a\x1b[31mb\tc\nd\x07\x9b") == "a\\x1b[31mb\tc\nd\\x07\\x9b"


def test_the_quarantine_blocks_the_piece_common_to_three_timeouts() -> None:
    quarantine = Quarantine()
    fine = StreamRequest((Chunk("a"), Chunk("b")))
    quarantine.answered(fine)
    hangs = [StreamRequest((Chunk(x), Chunk("<"))) for x in ("a", "b", "c")]
    for request in hangs:
        assert quarantine.check(request) is None
        quarantine.timed_out(request)
    blocked = quarantine.check(StreamRequest((Chunk("z"), Chunk("<"))))
    assert isinstance(blocked, Timeout) and blocked.message.startswith("not run")
    assert "'<'" in blocked.message
    assert quarantine.check(fine) is None
    assert quarantine.check(StreamRequest((Chunk("c"),))) is None
    assert quarantine.check(WHOLE) is None


def test_a_piece_answered_since_is_not_blocked() -> None:
    quarantine = Quarantine()
    quarantine.answered(WHOLE)
    quarantine.answered(StreamRequest((Chunk("x"),)))
    quarantine.timed_out(StreamRequest((Chunk("<"), Chunk("t"))))
    quarantine.answered(StreamRequest((Chunk("t"),)))
    quarantine.timed_out(StreamRequest((Chunk("<"), Chunk("t"))))
    quarantine.timed_out(StreamRequest((Chunk("<"), Chunk("t"))))
    assert quarantine.check(StreamRequest((Chunk("t"),))) is None
    assert quarantine.check(StreamRequest((Chunk("<"),))) is not None


def test_an_op_never_answered_is_blocked_after_three_timeouts() -> None:
    quarantine = Quarantine()
    for text in ("a", "b", "c"):
        quarantine.timed_out(StreamRequest((Chunk(text),)))
    blocked = quarantine.check(StreamRequest((Chunk("d"),)))
    assert isinstance(blocked, Timeout) and "never answered one" in blocked.message
    assert quarantine.check(WHOLE) is None
