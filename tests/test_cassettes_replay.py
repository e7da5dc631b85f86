"""Replay: clients in any language through the replay server (`conformance serve`), with the
body re-split at adversarial points, and Python clients that make their own requests through
vcrpy (`conformance replay`). Every client here is a real HTTP client."""

from __future__ import annotations

import functools
import json
import shutil
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.cassettes import bundled_cassettes_dir, decode_cassette, load_cassette
from conformance.cli.main import main
from conformance.corpus.cases import bundled_cases_dir
from conformance.model.options import Options
from conformance.model.results import ImplementationInfo, Verdict
from conformance.replay.http_server import ReplayServer
from conformance.replay.vcrpy_clients import replay_run

from .fakes.http_clients import (
    anthropic_client,
    chat_client,
    doubling_client,
    joined,
    lazy_client,
    naive_events,
    normalize_chat,
    sse_events,
    wrong_path_client,
)
from .helpers import bundled_corpus, conformance_popen

CASES = [case for case in bundled_corpus().cases if case.cassette is not None]
CHAT_SSE = [
    case
    for case in CASES
    if (decoded := decode_cassette(case.cassette.path, case.cassette.interaction)).family
    == "openai-chat"
    and decoded.form == "sse"
]


@pytest.fixture(scope="module")
def adversarial() -> Iterator[ReplayServer]:
    with ReplayServer(bundled_cassettes_dir(), cases=CASES, split="adversarial") as server:
        yield server


# ------------------------------------------------------------------------ clients under test


@functools.cache
def http() -> httpx.Client:
    """One client for the tests' own requests: `httpx.get` makes a client each call, and each
    loads the system's certificates again (for plain HTTP on 127.0.0.1)."""
    return httpx.Client()


@pytest.fixture(scope="module", autouse=True)
def close_http() -> Iterator[None]:
    """Close the tests' client, and its connections, with the module."""
    yield
    if http.cache_info().currsize:
        http().close()
        http.cache_clear()


def base_url(server: ReplayServer, case_id: str) -> str:
    manifest = http().get(server.url + "/").json()
    return next(
        c["base_url"] for c in manifest["cassettes"] if any(x["id"] == case_id for x in c["cases"])
    )


def fetch(server: ReplayServer, case_id: str, reader) -> dict[str, str]:
    case = next(c for c in CASES if c.id == case_id)
    path = decode_cassette(case.cassette.path, case.cassette.interaction).interaction.path
    with http().stream("POST", base_url(server, case_id) + path, json={}) as response:
        events = reader(response.iter_raw())
        try:
            return joined(normalize_chat(events))
        except ValueError:  # a naive client's JSON error: it shows what it had
            return {"assistant": "", "thinking": ""}


def verdict(server: ReplayServer, case_id: str, shown: dict[str, str]) -> str:
    return http().post(f"{server.url}/_verdict/{case_id}", json=shown).json()["verdict"]


# ------------------------------------------------------------------------ the replay server


def raw_chunks(url: str, path: str) -> list[bytes]:
    """POST over a bare socket and split the chunked body at the server's chunk boundaries."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n"
        sock.sendall(head.encode() + b"\r\n{}")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    pieces = []
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return pieces
        pieces.append(body[:size])
        body = body[size + 2 :]


def recorded(name: str) -> bytes:
    return load_cassette(bundled_cassettes_dir() / f"{name}.yaml").interactions[0].body


@pytest.mark.slow
def test_frames_split_after_each_event_and_keep_the_body(tmp_path: Path):
    with ReplayServer(bundled_cassettes_dir(), split="frames") as server:
        pieces = raw_chunks(
            server.url, "/gemini/thought-stream/v1beta/models/gemini-2.5-pro:streamGenerateContent"
        )
    assert b"".join(pieces) == recorded("gemini/thought-stream")
    assert len(pieces) == 4 and all(piece.endswith(b"\r\n\r\n") for piece in pieces)


def test_adversarial_splits_cut_inside_delimiters_and_utf8(adversarial: ReplayServer):
    body = recorded("groq/raw-escaped-tags-stream")
    pieces = raw_chunks(adversarial.url, "/groq/raw-escaped-tags-stream/openai/v1/chat/completions")
    assert b"".join(pieces) == body
    cuts = {sum(map(len, pieces[:i])) for i in range(1, len(pieces))}
    for tag in (b"\\u003cthink\\u003e", b"\\u003c/think\\u003e"):
        start = body.find(tag)
        assert set(range(start + 1, start + len(tag))) <= cuts
    body = recorded("vllm/both-keys-stream")
    pieces = raw_chunks(adversarial.url, "/vllm/both-keys-stream/v1/chat/completions")
    assert b"".join(pieces) == body
    # A cut inside each multi-byte character: the piece before it does not decode alone.
    wide = sum(1 for char in body.decode() if len(char.encode()) > 1)
    assert sum(1 for p in pieces if not _decodes(p)) >= wide > 10


def _decodes(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_bytes_split_sends_one_byte_per_chunk():
    with ReplayServer(bundled_cassettes_dir(), split="bytes") as server:
        pieces = raw_chunks(server.url, "/ollama/chat/api/chat")
    assert b"".join(pieces) == recorded("ollama/chat") and {len(p) for p in pieces} == {1}


def test_a_careful_client_passes_every_chat_stream_under_adversarial_splits(
    adversarial: ReplayServer,
):
    assert len(CHAT_SSE) >= 15
    verdicts = {
        case.id: verdict(adversarial, case.id, fetch(adversarial, case.id, sse_events))
        for case in CHAT_SSE
    }
    assert set(verdicts.values()) == {"PASS"}, verdicts


def test_a_naive_client_is_caught_by_adversarial_splits(adversarial: ReplayServer):
    verdicts = {
        case.id: verdict(adversarial, case.id, fetch(adversarial, case.id, naive_events))
        for case in CHAT_SSE
    }
    assert "FAIL" in verdicts.values()
    assert verdicts["3E2P"] == "FAIL"  # the Chinese text was cut inside its characters


def test_unknown_paths_and_bad_verdicts_are_explained(adversarial: ReplayServer):
    answer = http().post(adversarial.url + "/deepseek/reasoner-stream/v1/nope")
    assert (
        answer.status_code == 404
        and "it recorded: POST /chat/completions" in answer.json()["error"]
    )
    assert http().get(adversarial.url + "/nowhere").status_code == 404
    assert http().post(adversarial.url + "/_verdict/3E2P", json={"assistant": 1}).status_code == 400
    assert http().post(adversarial.url + "/_verdict/ZZZZ", json={}).status_code == 404


def test_the_serve_command_and_a_client_in_another_language(tmp_path: Path):
    process = conformance_popen(
        *("serve", bundled_cassettes_dir(), "--port", "0", "--split", "adversarial"),
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = first.split(" on ")[1].split(" ")[0]
        manifest = http().get(url + "/").json()
        assert len(manifest["cassettes"]) >= 30 and manifest["split"] == "adversarial"
        base = url + "/deepseek/reasoner-stream"
        curl = shutil.which("curl")
        if curl:  # a client that is not Python at all
            body = subprocess.run(
                [curl, "-sN", "-X", "POST", "-d", "{}", base + "/chat/completions"],
                capture_output=True,
                check=True,
                timeout=30,
            ).stdout
        else:
            request = urllib.request.Request(base + "/chat/completions", data=b"{}", method="POST")
            with urllib.request.urlopen(request, timeout=30) as response:
                body = response.read()
        assert body == recorded("deepseek/reasoner-stream")
        shown = joined(normalize_chat(sse_events([body])))
        assert http().post(url + "/_verdict/8L8J", json=shown).json()["verdict"] == "PASS"
    finally:
        process.terminate()
        process.wait(timeout=10)


def replay(client) -> dict[str, tuple[Verdict, str]]:
    info = ImplementationInfo("x", "x", "1", "python", Options().to_json(), "python:x")
    run = replay_run(client, info, CASES)
    assert all(r.check == "http" for r in run.results)
    return {r.case: (r.verdict, r.reason) for r in run.results}


def test_python_clients_that_make_their_own_requests_are_checked_through_vcrpy():
    chat = replay(chat_client)
    for case in CASES:
        family = decode_cassette(case.cassette.path, case.cassette.interaction).family
        assert chat[case.id][0] == (Verdict.PASS if family == "openai-chat" else Verdict.SKIP), (
            case.id
        )
    anthropic = replay(anthropic_client)
    streams = {
        case.id
        for case in CASES
        if (decoded := decode_cassette(case.cassette.path, case.cassette.interaction)).family
        == "anthropic"
        and decoded.streaming
    }
    assert len(streams) >= 3
    assert {case for case, (v, _) in anthropic.items() if v == Verdict.PASS} == streams


@pytest.mark.slow
def test_a_wrong_client_fails_and_a_misbehaving_one_is_an_error():
    doubled = replay(doubling_client)
    assert doubled["8L8J"][0] == Verdict.FAIL and "thinking differs" in doubled["8L8J"][1]
    assert doubled["85BJ"][0] == Verdict.FAIL
    wrong = replay(wrong_path_client)
    assert (
        wrong["8L8J"][0] == Verdict.ERROR
        and "deepseek/reasoner-stream.yaml did not record" in wrong["8L8J"][1]
    )
    lazy = replay(lazy_client)
    assert lazy["8L8J"][0] == Verdict.ERROR
    assert "the client made no HTTP request (it should POST http://127.0.0.1:" in lazy["8L8J"][1]


def test_the_replay_command(tmp_path: Path):
    runner = CliRunner()
    only = ["--cases", str(bundled_cases_dir() / "cassettes.yaml"), "--report-dir", str(tmp_path)]
    good = runner.invoke(
        main,
        [
            "replay",
            "--impl",
            "python:tests.fakes.http_clients:chat_client",
            "-k",
            "deepseek or groq",
            *only,
        ],
    )
    assert good.exit_code == 0, good.output
    results = json.loads((tmp_path / "results.json").read_text())
    checks = {r["check"] for r in results["implementations"][0]["results"]}
    assert checks == {"http"} and "PASS" in good.stdout
    bad = runner.invoke(
        main,
        [
            "replay",
            "--impl",
            "python:tests.fakes.http_clients:doubling_client",
            *only,
        ],
    )
    assert bad.exit_code == 1
    plain = runner.invoke(
        main,
        ["replay", "--impl", "python:tests.fakes.broken_impls:NoCarry", *only],
    )
    assert plain.exit_code == 2 and "does not declare the http capability" in plain.stderr
    other = runner.invoke(main, ["replay", "--impl", "reference", *only])
    assert other.exit_code == 2 and "conformance serve" in other.stderr


# ------------------------------------------------------------- replay under other profiles


def replay_declared(client) -> list:
    """`replay_run` with the client's declared options, as the command passes them."""
    from conformance.interface import metadata

    options = metadata(client)["options"]
    info = ImplementationInfo("x", "x", "1", "python", options, "python:x")
    return replay_run(client, info, CASES).results


def chat_case_ids() -> set[str]:
    return {
        case.id
        for case in CASES
        if decode_cassette(case.cassette.path, case.cassette.interaction).family == "openai-chat"
    }


@pytest.mark.parametrize(
    "name",
    [
        "think_only_client",
        pytest.param("vllm_profile_client", marks=pytest.mark.slow),
        pytest.param("bracket_client", marks=pytest.mark.slow),
    ],
)
def test_replay_runs_the_cases_run_runs_under_the_declared_profile(name: str):
    """Under a profile the case files do not name, the derived cases stand in (SPEC 5.6), as
    in `run`: with `delimiters: think_only` every chat capture is judged, none skipped for
    want of an expectation; a derived input is replayed from the recording rewritten."""
    from tests.fakes import http_clients

    results = replay_declared(getattr(http_clients, name))
    written = {r.case.split("~")[0] for r in results if r.verdict == Verdict.PASS}
    assert not [r for r in results if r.verdict in (Verdict.FAIL, Verdict.ERROR)]
    assert not [r for r in results if "no expectation" in (r.reason or "")]
    assert written == chat_case_ids()
    assert any("~" in r.case and r.verdict == Verdict.PASS for r in results)


def test_the_replay_progress_total_counts_the_cases_replayed_under_the_profile():
    """The session's total for a client is `replayed_cases` under its declared options (the
    recount once it connects): one result each, so progress ends on its total, not past it."""
    from conformance.interface import metadata
    from conformance.replay.vcrpy_clients import replayed_cases
    from tests.fakes import http_clients

    client = http_clients.think_only_client
    options = Options.from_mapping(metadata(client)["options"])
    counted = replayed_cases(CASES, options)
    assert len(counted) > len(CASES)  # derived cases stand in: more than the written ones
    assert len(replay_declared(client)) == len(counted)


def test_a_derived_input_is_replayed_from_the_recording_rewritten():
    from conformance.engine.plans import profiled
    from conformance.replay.derived import derived_body

    options = Options.from_mapping({"delimiters": "bracket", "start_in_reasoning": True})
    [case] = [case for case in CASES if case.id == "8L8J"]
    decoded = decode_cassette(case.cassette.path)
    forms = {form.id: form for form in profiled([case], options)}
    assert set(forms) == {"8L8J~start+bracket", "8L8J~start.glued+bracket"}
    for form in forms.values():
        body = derived_body(decoded, form.chunks, None)
        assert isinstance(body, bytes) and body.count(b"[/THINK]") == 1
        assert b"[/THINK]" not in decoded.interaction.body
    whole = next(case for case in CASES if not decode_cassette(case.cassette.path).streaming)
    [own, _] = profiled([whole], options)
    assert "a non-streaming response holds one message" in derived_body(
        decode_cassette(whole.cassette.path), own.chunks, None
    )


def status_column(stdout: str) -> str:
    """The status column of the summary table's one implementation row."""
    return stdout.splitlines()[2].split()[-1]


@pytest.mark.slow
def test_the_replay_commands_status_column_agrees_with_its_exit_status(tmp_path: Path):
    only = ["--cases", str(bundled_cases_dir() / "cassettes.yaml"), "--report-dir", str(tmp_path)]
    spec = "python:tests.fakes.http_clients:"
    runner = CliRunner()
    think_only = runner.invoke(main, ["replay", "--impl", spec + "think_only_client", *only])
    assert (think_only.exit_code, status_column(think_only.stdout)) == (0, "ok")
    results = json.loads((tmp_path / "results.json").read_text())["implementations"][0]
    assert results["summary"]["PASS"] >= len(chat_case_ids())
    doubled = runner.invoke(
        main, ["replay", "--impl", spec + "doubling_client", "-k", "deepseek", *only]
    )
    assert (doubled.exit_code, status_column(doubled.stdout)) == (1, "FAILED")
    kimi = ["--options", '{"delimiters": "kimi"}', "-k", "anthropic"]
    nothing = runner.invoke(main, ["replay", "--impl", spec + "chat_client", *kimi, *only])
    assert (nothing.exit_code, status_column(nothing.stdout)) == (1, "UNJUDGED")
