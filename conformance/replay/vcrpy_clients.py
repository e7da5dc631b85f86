"""`conformance replay`: Python clients that make their own HTTP requests, checked on
cassette-backed cases with vcrpy replaying the recorded response.

A client declares `capabilities=["http"]` (conformance.interface.implementation) and is
called once per case with an `HttpCall`: a base URL on 127.0.0.1 and the request as it was
recorded. It sends the request with whatever HTTP library it uses (vcrpy intercepts httpx,
requests, urllib3, aiohttp and http.client; record mode `none`, so nothing reaches a network),
parses the response itself, and returns what it showed: a list of deltas, or one
`{"assistant", "thinking"}` for a non-streaming call. Raising NotImplementedError says it
does not speak the family (SKIP, "unsupported"), as `unsupported` does an operation in the
protocol, and as there it holds for the family as a whole: the first call of a family
decides, and raising it for some calls of a family the client answers is an ERROR of those
(conformance/engine/declines.py). The joined channels are judged like any
other check (check name `http`); the deltas do not line up with the cassette's chunks, so
promptness is not judged here. The cases are those `run` runs under the client's profile
(`engine.plans.profiled`): under a profile the case files do not name, derived cases, each
replayed from the recording with its change made in the body (`derived`).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import vcr
from vcr.errors import CannotOverwriteExistingCassetteException

from conformance.cassettes._decode import decode_cassette
from conformance.cassettes._load import CapturePersister
from conformance.cassettes._model import CassetteError
from conformance.contracts.normalizer import own_cases
from conformance.engine.declines import Declines
from conformance.engine.plans import profiled
from conformance.interface import HttpCall
from conformance.model.cases import Case, CaseIdentity
from conformance.model.chunks import CHANNELS
from conformance.model.judge import compare
from conformance.model.options import Options
from conformance.model.requests import Error, Ok, Unsupported
from conformance.model.results import CaseResult, ImplementationInfo, ImplementationRun, Verdict
from conformance.replay.derived import derived_body
from conformance.transport.messages import check_delta

#: The check name http results carry.
CHECK = "http"


Client = Callable[[HttpCall], Any]


@contextmanager
def _closed_port() -> Iterator[int]:
    """A local port that is bound but not listening: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def replay_run(
    client: Client, info: ImplementationInfo, cases: Iterable[CaseIdentity]
) -> ImplementationRun:
    """Check `client` on every cassette-backed case of `cases`."""
    options = Options.from_mapping(info.options)
    run = ImplementationRun(info)
    declines = Declines()
    with _closed_port() as port:
        for case in replayed_cases(cases, options):
            base_url = f"http://127.0.0.1:{port}"
            run.results.append(check_case(client, case, options, base_url, declines))
    return run


def replayed_cases(cases: Iterable[CaseIdentity], options: Options) -> list[Case]:
    """The cassette-backed cases `run` runs under this profile: derived ones stand in for the
    written ones under a profile the case files do not name (SPEC 5.6). One result each."""
    return [
        case for case in own_cases(profiled(own_cases(cases), options)) if case.cassette is not None
    ]


def check_case(
    client: Client, case: Case, options: Options, base_url: str, declines: Declines
) -> CaseResult:
    result = CaseResult(
        case=case.id,
        slug=case.slug,
        category=case.category,
        taxonomy=case.taxonomy,
        level=case.level,
        check=CHECK,
        verdict=Verdict.PASS,
        title=case.title,
    )
    expectation = case.expectation(options)
    if isinstance(expectation, str):
        return replace(result, verdict=Verdict.SKIP, reason=expectation)
    assert case.cassette is not None
    ref = case.cassette
    try:
        decoded = decode_cassette(ref.path, ref.interaction, ref.family)
    except CassetteError as error:
        return replace(result, verdict=Verdict.ERROR, reason=str(error))
    body = derived_body(decoded, case.chunks, ref.family)
    if isinstance(body, str):
        return replace(
            result,
            verdict=Verdict.SKIP,
            reason=f"not replayed: {body}; `conformance run` checks this input",
        )
    interaction = decoded.interaction
    parts = urlsplit(interaction.uri)
    call = HttpCall(
        base_url=base_url,
        path=parts.path + (f"?{parts.query}" if parts.query else ""),
        method=interaction.method,
        headers=dict(interaction.request_headers),
        body=interaction.request_body,
        family=decoded.family,
        stream=decoded.streaming,
    )
    expected = expectation.stream if decoded.streaming else expectation.whole
    # What a client may lack as a whole: a family, streamed or not (as `stream` and `whole`).
    family = f"{decoded.family} {'stream' if decoded.streaming else 'whole'}"
    # What a failed result shows: the cassette's chunks and the expected channels.
    detailed = replace(
        result, chunks=[chunk.to_json() for chunk in case.chunks], expected=expected.to_json()
    )
    replayer = vcr.VCR(
        record_mode="none", match_on=("method", "path"), decode_compressed_response=True
    )
    # Any capture format load_cassette reads, with the body a derived case needs.
    replayer.register_persister(_persister(interaction.index, body))
    try:
        with replayer.use_cassette(str(ref.path), allow_playback_repeats=True) as cassette:
            answer = client(call)
            played = cassette.play_count
    except CannotOverwriteExistingCassetteException as error:
        return replace(
            detailed,
            verdict=Verdict.ERROR,
            reason=f"the client asked for what {ref.name} did not record: {_first_line(error)}",
        )
    except NotImplementedError as error:
        # How a client says it does not speak this family, as `unsupported` in the protocol.
        declined = declines.settle(family, Unsupported(str(error)))
        if isinstance(declined, Error):
            return replace(detailed, verdict=Verdict.ERROR, reason=declined.reason)
        return replace(result, verdict=Verdict.SKIP, reason=f"unsupported: {error}")
    except Exception as error:  # the client's failure is a result, not ours
        reason = f"raised {type(error).__name__}: {error}"
        declines.settle(family, Error(reason))
        return replace(detailed, verdict=Verdict.ERROR, reason=reason)
    answered = declines.settle(family, Ok())
    if isinstance(answered, Error):
        return replace(detailed, verdict=Verdict.ERROR, reason=answered.reason)
    if played == 0:
        return replace(
            detailed,
            verdict=Verdict.ERROR,
            reason=f"the client made no HTTP request (it should {call.method} {call.url})",
        )
    actual = _channels(answer)
    if isinstance(actual, str):
        return replace(detailed, verdict=Verdict.ERROR, reason=actual)
    judgement = compare(expected, actual, case.level)
    if judgement.verdict == Verdict.PASS:
        return result
    return replace(detailed, verdict=judgement.verdict, reason=judgement.reason, actual=actual)


def _persister(index: int, body: bytes) -> type[CapturePersister]:
    """CapturePersister, answering interaction `index` with `body`."""

    class Rewritten(CapturePersister):
        @staticmethod
        def load_cassette(cassette_path: str, serializer: Any) -> tuple[list[Any], list[Any]]:
            requests, responses = CapturePersister.load_cassette(cassette_path, serializer)
            response = responses[index]
            response["body"] = {"string": body}
            if "content-length" in response["headers"]:
                response["headers"]["content-length"] = [str(len(body))]
            return requests, responses

    return Rewritten


def _channels(answer: Any) -> dict[str, str] | str:
    """The joined channels of what a client returned, or what is wrong with it."""
    if isinstance(answer, Mapping):
        return check_delta(answer, "the client's answer")
    try:
        deltas = list(answer)
    except TypeError:
        return (
            f"the client returned {type(answer).__name__}; return a list of deltas or one "
            "{'assistant': ..., 'thinking': ...}"
        )
    joined = {name: "" for name in CHANNELS}
    for index, delta in enumerate(deltas):
        checked = check_delta(delta, f"delta {index}")
        if isinstance(checked, str):
            return checked
        for name in CHANNELS:
            joined[name] += checked[name]
    return joined


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
