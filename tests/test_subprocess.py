"""`cmd:` implementations: SubprocessConnection against the scriptable fake (tests/fakes/) and
the reference as a real subprocess, the protocol schemas, and `conformance smoke`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from conformance.errors import ImplementationStartError
from conformance.model.chunks import Chunk
from conformance.model.families import FAMILIES
from conformance.model.options import CHOICES, OPTION_NAMES
from conformance.model.requests import (
    Error,
    Ok,
    Request,
    StreamRequest,
    Timeout,
    Unsupported,
    WholeRequest,
)
from conformance.reference import normalize_stream, normalize_whole
from conformance.tools.smoke import smoke
from conformance.transport.codec import BYE, HELLO, encode_request
from conformance.transport.impls import connect
from conformance.transport.process import STDERR_TAIL_BYTES, STDERR_TAIL_LINES
from conformance.transport.schemas import protocol_schema, protocol_validator
from conformance.transport.spec import ImplementationSpec, parse_impl
from conformance.transport.subprocess import MAX_RESTARTS, SubprocessConnection

from .helpers import cli

FAKE = Path(__file__).parent / "fakes" / "fake_impl.py"
REFERENCE = [sys.executable, "-m", "conformance.server"]
SPEC = ImplementationSpec("fake", "cmd:fake_impl.py")


def fake(*modes: str, timeout: float = 1.0, **options: object) -> SubprocessConnection:
    return SubprocessConnection(
        [sys.executable, str(FAKE), *modes], SPEC, timeout=timeout, **options
    )


def stream(*contents: str | None) -> StreamRequest:
    return StreamRequest(tuple(Chunk(content) for content in contents))


def echoed(*contents: str) -> Ok:
    """What the fake's echo mode answers to `stream(*contents)`."""
    deltas = [{"assistant": content, "thinking": ""} for content in contents]
    return Ok(deltas=[*deltas, {"assistant": "", "thinking": ""}])


# --- correct behaviour ------------------------------------------------------------------------


def test_echo_answers_streams_and_whole_messages() -> None:
    with fake() as connection:
        assert connection.info.name == "fake"
        assert connection.info.version == "1.0"
        assert connection.info.language == "python"
        assert connection.info.label == "fake"
        assert connection.info.spec == "cmd:fake_impl.py"
        assert connection.info.options["unclosed_at_end"] == "thinking"
        replies = connection.send(
            [
                stream("a", "b"),
                StreamRequest((Chunk(None, "why"), Chunk("x", None))),
                StreamRequest(()),
                WholeRequest("whole", "plan"),
                WholeRequest(None, None),
            ]
        )
    assert replies == [
        echoed("a", "b"),
        Ok(
            deltas=[
                {"assistant": "", "thinking": "why"},
                {"assistant": "x", "thinking": ""},
                {"assistant": "", "thinking": ""},
            ]
        ),
        Ok(deltas=[{"assistant": "", "thinking": ""}]),
        Ok(channels={"assistant": "whole", "thinking": "plan"}),
        Ok(channels={"assistant": "", "thinking": ""}),
    ]


def test_text_survives_the_round_trip_exactly() -> None:
    texts = ["emoji \U0001f600", "line\nbreak\r\n", "sep\u2028arator\u0085", "nul\x00", '"\\']
    with fake() as connection:
        assert connection.send([stream(*texts)]) == [echoed(*texts)]


def test_declared_options_are_overridden_by_the_user() -> None:
    spec = ImplementationSpec("fake", "cmd:fake", options={"unclosed_at_end": "drop"})
    with SubprocessConnection([sys.executable, str(FAKE)], spec, timeout=1) as connection:
        assert connection.info.options["unclosed_at_end"] == "drop"


def test_an_empty_batch_is_answered_with_nothing() -> None:
    with fake() as connection:
        assert connection.send([]) == []
        assert connection.send([stream("a")]) == [echoed("a")]


def test_a_batch_larger_than_the_pipe_does_not_deadlock() -> None:
    # About 2 MB of requests and of replies: far more than a pipe holds, both ways.
    big = "x" * 10_000
    requests = [stream(big, str(index)) for index in range(200)]
    with fake() as connection:
        replies = connection.send(requests)
    assert replies == [echoed(big, str(index)) for index in range(200)]


def test_a_reply_longer_than_one_read() -> None:
    huge = "y" * 500_000
    with fake() as connection:
        assert connection.send([stream(huge), stream("after")]) == [echoed(huge), echoed("after")]


def test_the_reference_through_cmd_answers_thousands_of_pipelined_requests() -> None:
    pieces = ["Hello <thi", "nk>plan", "</th", "ink>Answer", " a < b", "<think", ">x"]
    requests: list[Request] = []
    for index in range(3000):
        count = 1 + index % 6
        chunks = tuple(Chunk(pieces[(index + k) % len(pieces)]) for k in range(count))
        requests.append(StreamRequest(chunks))
        if index % 10 == 0:
            requests.append(WholeRequest("".join(c.content or "" for c in chunks), None))
    expected = []
    for request in requests:
        if isinstance(request, StreamRequest):
            chunks = [chunk.to_json() for chunk in request.chunks]
            expected.append(Ok(deltas=[dict(d) for d in normalize_stream(chunks)]))
        else:
            expected.append(Ok(channels=dict(normalize_whole(request.content, None))))
    connection = connect(parse_impl(f"cmd:{sys.executable} -m conformance.server"))
    try:
        assert connection.info.name == "reference"
        assert connection.send(requests) == expected
        assert connection.send(requests[:7]) == expected[:7]  # the process lives on
    finally:
        connection.close()


# --- timeouts, crashes, unreadable output: the run goes on ---------------------------------------


@pytest.mark.slow
def test_a_hang_times_out_and_later_requests_are_answered_after_a_restart() -> None:
    started = time.monotonic()
    with fake("hang", timeout=0.5) as connection:
        first_pid = connection._process.popen.pid  # type: ignore[union-attr]
        replies = connection.send([stream("a"), stream("HANG"), stream("b"), stream("c")])
        assert connection._process.popen.pid != first_pid  # type: ignore[union-attr]
    assert replies[0] == echoed("a")
    assert isinstance(replies[1], Timeout)
    assert replies[1].message == "no reply within 0.5 s"
    assert replies[1].stderr == "fake: hanging on request 2"
    assert replies[2:] == [echoed("b"), echoed("c")]
    assert time.monotonic() - started < 3


def test_the_timeout_counts_per_request_not_per_batch() -> None:
    # 6 requests of 0.1 s each take 0.6 s in all, each well within its 0.35 s.
    with fake("slow", "0.1", timeout=0.35) as connection:
        replies = connection.send([stream(str(index)) for index in range(6)])
    assert replies == [echoed(str(index)) for index in range(6)]


def test_a_slow_implementation_times_out() -> None:
    with fake("slow", "2", timeout=0.3, start_timeout=5) as connection:
        replies = connection.send([stream("a")])
    assert replies == [Timeout("no reply within 0.3 s")]


def test_a_crash_is_an_error_with_the_exit_status_and_the_run_goes_on() -> None:
    with fake("crash") as connection:
        replies = connection.send([stream("a"), stream("CRASH"), stream("b")])
    assert replies[0] == echoed("a")
    assert replies[1].message == "the implementation exited with status 3 while answering request 2"
    assert replies[1].stderr == "fake: crashing on request 2"
    assert replies[2] == echoed("b")


def test_exiting_between_requests_is_reported_on_the_next_one() -> None:
    with fake("exit-after", "2") as connection:
        replies = connection.send([stream(str(index)) for index in range(5)])
    assert replies[:2] == [echoed("0"), echoed("1")]
    assert replies[2].message == "the implementation exited with status 0 while answering request 3"
    assert replies[2].stderr == "fake: exiting after 2 replies"
    assert replies[3:] == [echoed("3"), echoed("4")]


def test_garbage_is_quoted_and_the_process_restarted() -> None:
    with fake("garbage") as connection:
        first_pid = connection._process.popen.pid  # type: ignore[union-attr]
        replies = connection.send([stream("GARBAGE"), stream("b")])
        assert connection._process.popen.pid != first_pid  # type: ignore[union-attr]
    assert replies[0].message is not None
    assert replies[0].message.startswith(
        "unreadable reply to request 1: a line that is not JSON: 'this is not JSON: {"
    )
    assert replies[1] == echoed("b")


def test_a_long_offending_line_is_truncated_in_the_message() -> None:
    with fake("garbage") as connection:
        (reply,) = connection.send([stream("GARBAGE" + "z" * 5000)])
    assert reply.message is not None
    assert len(reply.message) < 350
    assert reply.message.endswith(" characters)'")


def test_a_wrong_id_means_out_of_step_and_repeated_failures_give_up() -> None:
    with fake("wrong-id") as connection:
        replies = connection.send([stream(str(index)) for index in range(6)])
        later = connection.send([stream("later")])
    for index, reply in enumerate(replies[: MAX_RESTARTS + 1], start=1):
        assert reply.message is not None
        assert reply.message.startswith(
            f"unreadable reply to request {index}: it has id '{index}-wrong' where '{index}' "
            "was due: "
        )
    last = f"unreadable reply to request {MAX_RESTARTS + 1}: it has id"
    for reply in [*replies[MAX_RESTARTS + 1 :], *later]:
        assert reply.message is not None
        assert reply.message.startswith(f"gave up after {MAX_RESTARTS} restarts: {last}")


def test_a_process_that_dies_right_after_hello_is_given_up_on() -> None:
    # A death is noticed at once, not at the timeout: a 10 s timeout waited out even once
    # would pass the bound, which leaves the four starts of the process time on a loaded
    # machine.
    started = time.monotonic()
    with fake("exit-after", "0", timeout=10) as connection:
        replies = connection.send([stream(str(index)) for index in range(10)])
    assert all(reply.message for reply in replies)
    dying = "the implementation exited with status 0 while answering request"
    assert [reply.message for reply in replies[: MAX_RESTARTS + 1]] == [
        f"{dying} {index}" for index in range(1, MAX_RESTARTS + 2)
    ]
    assert replies[-1].message == f"gave up after {MAX_RESTARTS} restarts: {dying} 4"
    assert replies[-1].stderr == "fake: exiting after 0 replies"
    assert time.monotonic() - started < 8


def test_restarts_that_fail_at_hello_give_up(tmp_path: Path) -> None:
    # Starts once, then every later start fails: the script removes its own marker file.
    marker = tmp_path / "first-start"
    marker.touch()
    script = tmp_path / "once.py"
    script.write_text(
        "import os, sys\n"
        f"if not os.path.exists({str(marker)!r}):\n"
        "    sys.exit('second start refused')\n"
        f"os.remove({str(marker)!r})\n"
        f"sys.argv = [{str(FAKE)!r}, 'crash']\n"
        f"exec(open({str(FAKE)!r}).read())\n"
    )
    with SubprocessConnection([sys.executable, str(script)], SPEC, timeout=1) as connection:
        replies = connection.send([stream("a"), stream("CRASH"), stream("b"), stream("c")])
    assert replies[0] == echoed("a")
    assert replies[1].message == "the implementation exited with status 3 while answering request 2"
    assert replies[2] == replies[3]
    assert replies[2].message is not None
    assert replies[2].message.startswith(
        f"gave up after {MAX_RESTARTS} restarts: exited with status 1 before answering hello"
    )
    assert replies[2].stderr == "second start refused"


# --- well-formed but wrong replies: the process stays ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "request_", "error"),
    [
        ("wrong-count", stream("a"), "expected 2 deltas (1 chunks + the final flush), got 1"),
        ("missing-key", stream("a"), "deltas[0] has no 'thinking' key: {'assistant': 'a'}"),
        (
            "missing-key",
            WholeRequest("a", None),
            "the whole reply has no 'thinking' key: {'id': '1', 'assistant': 'a'}",
        ),
        ("non-string", stream("a"), "deltas[0]['thinking'] must be a string, not 0"),
        ("error", stream("a"), "the implementation reported: deliberate failure"),
        ("error", WholeRequest("a", None), "the implementation reported: deliberate failure"),
    ],
)
def test_malformed_replies_are_errors_without_a_restart(
    mode: str, request_: Request, error: str
) -> None:
    with fake(mode) as connection:
        pid = connection._process.popen.pid  # type: ignore[union-attr]
        first, second = connection.send([request_, request_])
        assert connection._process.popen.pid == pid  # type: ignore[union-attr]
    assert first == Error(error)
    assert second == Error(error.replace("'id': '1'", "'id': '2'"))


def test_unsupported_whole_is_not_an_error() -> None:
    with fake("unsupported-whole") as connection:
        replies = connection.send([WholeRequest("a", None), stream("a")])
    assert replies == [Unsupported("only streams are implemented"), echoed("a")]


def test_stderr_is_drained_and_its_tail_bounded() -> None:
    # 1 MB of stderr per request would fill the pipe 16 times over if nobody read it.
    with fake("stderr-spam", "error") as connection:
        replies = connection.send([stream(str(index)) for index in range(5)])
    for reply in replies:
        assert reply.message == "the implementation reported: deliberate failure"
        assert reply.stderr is not None
        assert len(reply.stderr.encode()) <= STDERR_TAIL_BYTES
        assert len(reply.stderr.splitlines()) == STDERR_TAIL_LINES
        # stderr is a pipe of its own: the reply can overtake the end of the last line.
        *whole, last = reply.stderr.splitlines()
        assert set(whole) == {"spam " * 20}
        assert ("spam " * 20).startswith(last)


def test_stderr_spam_with_good_replies_does_not_block() -> None:
    with fake("stderr-spam") as connection:
        replies = connection.send([stream(str(index)) for index in range(5)])
    assert replies == [echoed(str(index)) for index in range(5)]


@pytest.mark.slow
def test_a_wrapper_script_and_its_child_are_killed_together() -> None:
    # `sh` keeps running while its child hangs; both hold the pipes. Killing only `sh`
    # would leave the reads waiting on the grandchild.
    command = f"{sys.executable} {FAKE} hang; echo wrapper done >&2"
    started = time.monotonic()
    with SubprocessConnection(["sh", "-c", command], SPEC, timeout=0.5) as connection:
        replies = connection.send([stream("HANG"), stream("b")])
    assert isinstance(replies[0], Timeout)
    assert replies[1] == echoed("b")
    assert time.monotonic() - started < 4


# --- starting ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("modes", "message"),
    [
        (["no-hello"], "implementation 'fake': exited with status 1 before answering hello"),
        (["bad-hello"], "speaks protocol 2, but this harness speaks protocol 1"),
        (
            ["garbage-hello"],
            "answered hello with a line that is not JSON: 'Starting fake implementation...'. "
            "The first line on standard output must be the hello reply",
        ),
        (["no-metadata"], "the hello reply needs `implementation`: an object with string"),
        (["bad-options"], "bad options: option 'matching' cannot be 'fuzzy'"),
    ],
)
def test_start_failures_say_what_is_wrong(modes: list[str], message: str) -> None:
    with pytest.raises(ImplementationStartError) as caught:
        fake(*modes)
    assert message in str(caught.value)


def test_a_start_failure_carries_the_stderr_tail() -> None:
    with pytest.raises(ImplementationStartError) as caught:
        fake("no-hello")
    assert caught.value.stderr == "fake: refusing to start (no-hello mode)"
    assert "fake: refusing to start" in str(caught.value)


def test_a_command_that_cannot_run() -> None:
    with pytest.raises(ImplementationStartError, match="cannot run 'no-such-program-x'"):
        SubprocessConnection(["no-such-program-x"], SPEC, timeout=1)


def test_a_hello_that_never_comes() -> None:
    started = time.monotonic()
    with pytest.raises(ImplementationStartError, match=r"did not answer hello within 0.5 s"):
        fake("hang-hello", timeout=0.2, start_timeout=0.5)
    assert time.monotonic() - started < 2


def test_close_never_hangs_and_is_idempotent() -> None:
    connection = fake("ignore-bye")
    assert connection.send([stream("a")]) == [echoed("a")]
    process = connection._process
    assert process is not None
    started = time.monotonic()
    connection.close()
    connection.close()
    assert time.monotonic() - started < 2
    assert process.popen.returncode is not None
    with pytest.raises(ValueError, match="closed"):
        connection.send([stream("a")])


def test_close_lets_a_well_behaved_process_exit_on_bye() -> None:
    connection = fake()
    process = connection._process
    assert process is not None
    connection.close()
    assert process.popen.returncode == 0


# --- --validate-protocol -------------------------------------------------------------------------


def test_validation_reports_the_first_violation_with_its_path() -> None:
    with fake("extra-key") as lenient:
        assert isinstance(lenient.send([stream("a")])[0], Ok)
    with fake("extra-key", validate_protocol=True) as strict:
        (reply,) = strict.send([stream("a")])
    assert reply.message == (
        "protocol violation in reply to request 1: $.deltas[0]: Additional properties are not "
        "allowed ('debug' was unexpected)"
    )


def test_validation_covers_whole_error_and_unsupported_replies() -> None:
    with fake("non-string", validate_protocol=True) as connection:
        (reply,) = connection.send([WholeRequest("a", None)])
    assert (
        reply.message
        == "protocol violation in reply to request 1: $.thinking: 0 is not of type 'string'"
    )
    with fake("unsupported-whole", validate_protocol=True) as connection:
        assert connection.send([WholeRequest("a", None)]) == [
            Unsupported("only streams are implemented")
        ]
    with fake("error", validate_protocol=True) as connection:
        assert connection.send([stream("a")]) == [
            Error("the implementation reported: deliberate failure")
        ]


def test_validation_of_the_hello_reply() -> None:
    with pytest.raises(ImplementationStartError) as caught:
        fake("bad-options", validate_protocol=True)
    assert "protocol violation in the hello reply: $.options.matching: 'fuzzy' is not one of" in (
        str(caught.value)
    )


def test_the_reference_replies_validate_against_the_schemas() -> None:
    requests = [
        StreamRequest((Chunk("<think>a</thi"), Chunk("nk>b", "r"), Chunk(None, None))),
        StreamRequest(()),
        WholeRequest("<think>a</think>b", None),
        WholeRequest(None, "r"),
    ]
    lines = [HELLO, *(encode_request(r, str(i)) for i, r in enumerate(requests)), BYE]
    done = subprocess.run(REFERENCE, input=b"".join(lines), capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    schemas = ["hello-response", "stream-response", "stream-response"]
    schemas += ["whole-response", "whole-response"]
    assert len(replies) == len(schemas)
    for reply, schema in zip(replies, schemas, strict=True):
        protocol_validator(schema).validate(reply)
    spec = parse_impl(f"cmd:{sys.executable} -m conformance.server")
    connection = connect(spec, validate_protocol=True)
    try:
        assert all(isinstance(reply, Ok) for reply in connection.send(requests))
    finally:
        connection.close()


def test_the_harness_requests_validate_against_the_schemas() -> None:
    protocol_validator("hello-request").validate(json.loads(HELLO))
    protocol_validator("bye-request").validate(json.loads(BYE))
    streams = [
        StreamRequest(()),
        StreamRequest((Chunk(), Chunk("a"), Chunk(None, "r"), Chunk("\U0001f600\n", ""))),
    ]
    for request in streams:
        line = encode_request(request, "17")
        assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
        protocol_validator("stream-request").validate(json.loads(line))
    for whole in [WholeRequest(None, None), WholeRequest("<think>a</think>b", "\u2028")]:
        protocol_validator("whole-request").validate(json.loads(encode_request(whole, "18")))


def test_the_schemas_are_valid_and_their_examples_pass() -> None:
    names = [
        "hello-request",
        "hello-response",
        "stream-request",
        "stream-response",
        "whole-request",
        "whole-response",
        "error-response",
        "unsupported-response",
        "bye-request",
    ]
    for name in names:
        schema = protocol_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"].endswith(f"/protocol/{name}.json")
        for example in schema["examples"]:
            protocol_validator(name).validate(example)


def test_the_hello_schema_knows_exactly_the_spec_options() -> None:
    options = protocol_schema("hello-response")["properties"]["options"]["properties"]
    assert tuple(options) == (*OPTION_NAMES, "profile")
    assert options["profile"]["enum"] == list(FAMILIES)
    for name, values in CHOICES.items():
        if name == "delimiters":
            assert tuple(options[name]["oneOf"][0]["enum"]) == values
        elif name in ("start_in_reasoning", "atomic_delimiters"):
            assert options[name] == {"type": "boolean"}
        elif name == "tool_markers":
            assert options[name]["type"] == "array"
        else:
            assert tuple(options[name]["enum"]) == values


# --- smoke ----------------------------------------------------------------------------------------


def test_smoke_results_for_a_correct_implementation() -> None:
    connection = connect(parse_impl("reference"))
    results = smoke(connection)
    assert [r.name for r in results] == [
        "plain text",
        "one block",
        "split close tag",
        "native reasoning",
        "unclosed block",
        "fresh state",
        "whole form",
    ]
    assert all(r.ok for r in results)
    assert results[1].message == "assistant='Answer' thinking='plan'"


def test_smoke_notes_differences_from_the_reference_without_failing() -> None:
    with fake() as connection:
        results = {r.name: r for r in smoke(connection)}
    assert all(r.ok for r in results.values())
    assert results["one block"].message == (
        "assistant='<think>plan</think>Answer' thinking='' (the reference gives "
        "assistant='Answer' thinking='plan' under these options)"
    )
    assert results["one block"].status == "DIFF" and not results["one block"].agrees


def test_the_smoke_command_never_prints_ok_beside_a_wrong_split() -> None:
    done = cli("smoke", "--impl", "python:tests.fakes.broken_impls:NoCarry")
    assert done.returncode == 0, done.stderr  # it speaks the protocol
    lines = done.stdout.splitlines()
    [wrong] = [line for line in lines if "the reference gives" in line]
    assert wrong.split()[:4] == ["DIFF", "split", "close", "tag"]
    assert not [line for line in lines if line.startswith("ok") and "reference gives" in line]
    assert lines[-1] == (
        "DIFF: 1 of its answers differs from the reference's split under its options; "
        "`conformance run --impl python:tests.fakes.broken_impls:NoCarry` checks its splits "
        "on the whole corpus"
    )


def test_smoke_catches_state_kept_between_streams() -> None:
    with fake("stateful") as connection:
        results = {r.name: r for r in smoke(connection)}
    assert results["unclosed block"].ok
    assert not results["fresh state"].ok
    assert results["fresh state"].message == (
        "assistant='' thinking='Hello, world.', but the same stream gave "
        "assistant='Hello, world.' thinking='' before: state carried over from the previous "
        "stream (each stream request must start from a fresh normalizer)"
    )


def test_smoke_command_on_the_reference_as_a_subprocess() -> None:
    done = cli(
        "smoke",
        "--impl",
        f"ref=cmd:{sys.executable} -m conformance.server",
        "--validate-protocol",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "ref: reference 0.1.0 (python)"
    assert lines[1].split() == [
        "ok",
        "plain",
        "text",
        "assistant='Hello,",
        "world.'",
        "thinking=''",
    ]
    assert len(lines) == 9
    assert lines[-1] == "OK: ref speaks the protocol (7 smoke requests answered)"


def test_smoke_command_fails_on_malformed_replies() -> None:
    done = cli("smoke", "--impl", f"cmd:{sys.executable} {FAKE} wrong-count")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  plain text        expected 2 deltas (1 chunks + the final flush), got 1" in (
        done.stdout
    )
    assert done.stdout.splitlines()[-1] == (
        "FAIL: wrong-count does not speak the protocol (6 of 7 smoke requests failed)"
    )


@pytest.mark.slow
def test_smoke_command_fails_on_a_slow_implementation_quickly() -> None:
    command = f"cmd:{sys.executable} {FAKE} slow 1"
    started = time.monotonic()
    done = cli("smoke", "--impl", command, "--timeout", "0.2")
    assert done.returncode == 1
    assert "FAIL  plain text        no reply within 0.2 s" in done.stdout
    # A timeout charges its request only; streams that keep timing out are no longer sent.
    assert "FAIL  native reasoning  not run: the implementation timed out on 3 stream" in (
        done.stdout
    )
    assert "FAIL  whole form        no reply within 0.2 s" in done.stdout
    assert time.monotonic() - started < 10


def test_smoke_command_cannot_start() -> None:
    done = cli("smoke", "--impl", f"cmd:{sys.executable} {FAKE} no-hello")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: implementation 'no-hello': exited with status 1 before answering hello"
    )
    assert "fake: refusing to start (no-hello mode)" in done.stderr
    done = cli("smoke", "--impl", "nonsense")
    assert done.returncode == 2
    assert "an implementation is `reference`" in done.stderr


def test_the_minimal_implementation_in_the_protocol_doc_passes_smoke(tmp_path: Path) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "PROTOCOL.md").read_text("utf-8")
    section = doc.split("## A minimal implementation", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 30
    program = tmp_path / "minimal.py"
    program.write_text(code, "utf-8")
    done = cli("smoke", "--impl", f"cmd:{sys.executable} {program}", "--validate-protocol")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "minimal.py: minimal 0.1 (python)"
