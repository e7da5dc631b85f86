"""Scrubbing a recording in vcrpy's hooks, and writing only a cassette that scans clean.

The credential and account headers of every provider are removed from the request, `key=`
and similar query parameters from the URL; the values of headers given with `--header`
become `[scrubbed]` unless named with `--keep-header`; credential-named JSON fields and
token shapes in the request body are scrubbed; cookies and account-identifying headers are
removed from the response, and other response headers whose values look like credentials
are scrubbed. The serialized cassette is then scanned, with the one scanner of
`conformance.cassettes._secrets`, before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from vcr.serialize import serialize

from conformance.capture.provider_request import Recording
from conformance.cassettes._scrub import scrub_json_body, scrub_text
from conformance.cassettes._secret_rules import (
    PLACEHOLDER,
    Finding,
    secret_header,
    secret_query_parameter,
)
from conformance.cassettes._secrets import scan_cassette_text

#: Response headers that identify the request: removed (with every header `secret_header`
#: names: cookies, credentials, account identifiers).
REQUEST_ID_HEADERS = ("request-id", "x-request-id", "cf-ray", "x-generation-id")
#: Request headers the recorder sets itself, and protocol headers that never hold a
#: credential: a `--header` of one of these names is kept as given.
PROTOCOL_HEADERS = frozenset(
    {
        "content-type",
        "accept",
        "user-agent",
        "anthropic-version",
        "anthropic-beta",
        "openai-beta",
    }
)
#: Response headers kept as they are (they describe the transfer, not the account).
PLAIN_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "date",
        "server",
        "vary",
        "via",
        "cache-control",
        "alt-svc",
        "strict-transport-security",
        "x-content-type-options",
        "openai-version",
        "openai-processing-ms",
        "anthropic-version",
    }
)
#: A response header value that is one opaque run of 24 or more token characters with
#: letters and digits: a session, a signature or an identifier, never needed to replay.
_OPAQUE = re.compile(r"(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])[A-Za-z0-9._~+/=:-]{24,}")


def secret_values(recording: Recording, headers: Mapping[str, str]) -> list[str]:
    """The exact values that must not reach the cassette: the key, and the value of every
    header that is scrubbed (with the token of `Bearer <token>`)."""
    values = [recording.api_key] if recording.api_key else []
    # A key given in the base URL's query (Azure's `subscription-key=`, `code=`).
    query = parse_qsl(urlsplit(recording.base_url).query, keep_blank_values=True)
    values += [value for name, value in query if secret_query_parameter(name, value)]
    for name, value in headers.items():
        if secret_header(name, value) or _scrubbed_custom(recording, name):
            values.append(value)
            values += value.split()[1:]
    return sorted({value for value in values if len(value) >= 6}, key=len, reverse=True)


def _scrubbed_custom(recording: Recording, name: str) -> bool:
    """A `--header` whose value is recorded as `[scrubbed]`."""
    kept = {header.lower() for header in recording.keep_headers} | PROTOCOL_HEADERS
    given = {header.lower() for header in recording.headers}
    return name.lower() in given and name.lower() not in kept


class RequestScrubber:
    """vcrpy's before_record_request hook: the request as it may be written."""

    def __init__(self, recording: Recording, secrets: Sequence[str]) -> None:
        self.recording = recording
        self.secrets = list(secrets)

    def __call__(self, request: Any) -> Any:
        headers = {}
        for name, value in request.headers.items():
            if secret_header(name, value):  # credential and account headers
                continue
            if _scrubbed_custom(self.recording, name):
                headers[name] = PLACEHOLDER
            else:
                headers[name] = scrub_text(str(value), self.secrets)
        parts = urlsplit(request.uri)
        query = [
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if not secret_query_parameter(name, value)
        ]
        uri = urlunsplit(parts._replace(query=urlencode(query)))
        request.uri = scrub_text(uri, self.secrets)
        body = request.body
        if isinstance(body, bytes):
            text = body.decode("utf-8", errors="replace")
            scrubbed = scrub_json_body(text, self.secrets)
            if scrubbed != text:
                request.body = scrubbed.encode("utf-8")
                if any(name.lower() == "content-length" for name in headers):
                    headers = {
                        name: str(len(request.body)) if name.lower() == "content-length" else v
                        for name, v in headers.items()
                    }
        request.headers = headers
        return request


def scrub_response(response: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """Cookies, account and request identifiers and rate limits removed; credential
    shapes and opaque tokens in other headers scrubbed. The body is kept byte for byte (a
    credential in it makes the recording refuse to write)."""
    headers = response.get("headers") or {}
    kept: dict[str, Any] = {}
    for name, values in headers.items():
        lower = name.lower()
        if (
            lower in REQUEST_ID_HEADERS
            or secret_header(name, _first(values))
            or lower.startswith(("x-ratelimit-", "anthropic-ratelimit-"))
        ):
            continue
        listed = values if isinstance(values, list) else [values]
        kept[name] = [_scrub_response_header(lower, str(value), secrets) for value in listed]
    response["headers"] = kept
    return response


def _first(values: Any) -> Any:
    return values[0] if isinstance(values, list) and values else values


def _scrub_response_header(lower: str, value: str, secrets: Sequence[str]) -> str:
    value = scrub_text(value, secrets)
    if lower in PLAIN_RESPONSE_HEADERS:
        return value
    return _OPAQUE.sub(PLACEHOLDER, value)


class ScanningPersister:
    """vcrpy's filesystem persister, but it writes only a cassette whose text passes the
    credential scan. It never raises from inside vcrpy, so vcrpy always unpatches."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = list(secrets)
        self.findings: list[Finding] = []

    def load_cassette(self, cassette_path: str, serializer: Any) -> Any:
        from vcr.persisters.filesystem import FilesystemPersister

        return FilesystemPersister.load_cassette(cassette_path, serializer)

    def save_cassette(self, cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        text = serialize(cassette_dict, serializer)
        self.findings = scan_cassette_text(text, self.secrets)
        if self.findings:
            return
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
