"""`conformance record`: one real request to a provider, recorded with vcrpy, secrets scrubbed.

Scrubbing happens in vcrpy's record hooks, with the one scanner of `_secrets`: the
credential and account headers of every provider are removed from the request, `key=` and
similar query parameters from the URL; the values of headers given with `--header` become
`[scrubbed]` unless named with `--keep-header`; credential-named JSON fields and token
shapes in the request body (the prompt, `--extra`) are scrubbed; cookies and
account-identifying headers are removed from the response, and other response headers
whose values look like credentials are scrubbed. Then, before anything is written, the
serialized cassette is scanned for whatever still looks like a credential (the key and the
header values that were sent, known key shapes, bearer tokens, credential fields); if
anything is found the cassette is not written at all.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import vcr
from vcr.serialize import serialize

from conformance._version import __version__
from conformance.cassettes import _yaml
from conformance.cassettes._secrets import (
    PLACEHOLDER,
    SHAPES,
    Finding,
    scan,
    scan_cassette_text,
    scrub_json_body,
    scrub_text,
    secret_header,
    secret_query_parameter,
)

__all__ = ["Finding", "RecordError", "Recording", "build_request", "record", "scan"]

#: Request headers that carry credentials or identify the account: removed.
SECRET_REQUEST_HEADERS = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "anthropic-api-key",
    "x-goog-api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "x-goog-user-project",
    "anthropic-organization-id",
)
#: Query parameters that carry credentials: removed (as any whose name says it is one).
SECRET_QUERY_PARAMETERS = ("key", "api_key", "api-key", "apikey", "access_token", "token")
#: Response headers that set cookies or identify the account or the request: removed.
SECRET_RESPONSE_HEADERS = (
    "set-cookie",
    "cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "request-id",
    "x-request-id",
    "cf-ray",
    "x-generation-id",
)
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

#: The shapes of credentials, as (what, pattern), for callers of the old name.
CREDENTIAL_PATTERNS = tuple((what, pattern) for what, pattern, _ in SHAPES)

#: Where the request goes, per provider, from the base URL (as each provider's SDK has it).
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama", "ollama-generate")
_DEFAULT_KEY_ENV = {
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


class RecordError(Exception):
    """The recording failed or was refused; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Recording:
    provider: str
    base_url: str
    model: str
    prompt: str
    stream: bool = False
    api_key: str | None = None
    #: Extra request headers (`Name: value`), e.g. an organization header.
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Extra fields merged into the request body (e.g. a thinking switch).
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Gemini: send the key as `?key=` instead of the `x-goog-api-key` header.
    key_in_query: bool = False
    #: Said about the server in the provenance (its version, flags...).
    note: str | None = None
    #: Names of `headers` recorded with their values (the others are `[scrubbed]`).
    keep_headers: Collection[str] = ()

    @staticmethod
    def key_from_env(provider: str, variable: str | None = None) -> str | None:
        name = variable or _DEFAULT_KEY_ENV.get(provider)
        return os.environ.get(name) if name else None


def build_request(recording: Recording) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL, headers and JSON body of the one request."""
    # A query in the base URL (Azure's `?api-version=`) stays the query: the route goes
    # after the base URL's path, not after its query.
    base_parts = urlsplit(recording.base_url)
    base = urlunsplit(base_parts._replace(query="", fragment="")).rstrip("/")
    key = recording.api_key
    headers = {"content-type": "application/json", "accept": "application/json"}
    message = [{"role": "user", "content": recording.prompt}]
    provider = recording.provider
    body: dict[str, Any]
    if provider == "openai-chat":
        url = f"{base}/chat/completions"
        body = {"model": recording.model, "messages": message, "stream": recording.stream}
        if recording.stream:
            body["stream_options"] = {"include_usage": True}
        if key:
            headers["authorization"] = f"Bearer {key}"
    elif provider == "openai-responses":
        url = f"{base}/responses"
        body = {"model": recording.model, "input": recording.prompt, "stream": recording.stream}
        if key:
            headers["authorization"] = f"Bearer {key}"
    elif provider == "anthropic":
        url = f"{base}/v1/messages"
        body = {
            "model": recording.model,
            "max_tokens": 1024,
            "messages": message,
            "stream": recording.stream,
        }
        headers["anthropic-version"] = "2023-06-01"
        if key:
            headers["x-api-key"] = key
    elif provider == "gemini":
        method = "streamGenerateContent?alt=sse" if recording.stream else "generateContent"
        url = f"{base}/v1beta/models/{recording.model}:{method}"
        body = {"contents": [{"role": "user", "parts": [{"text": recording.prompt}]}]}
        if key and recording.key_in_query:
            url += ("&" if "?" in url else "?") + f"key={key}"
        elif key:
            headers["x-goog-api-key"] = key
    elif provider in ("ollama", "ollama-generate"):
        body = {"model": recording.model, "stream": recording.stream}
        if provider == "ollama":
            url = f"{base}/api/chat"
            body["messages"] = message
        else:
            url = f"{base}/api/generate"
            body["prompt"] = recording.prompt
        if key:
            headers["authorization"] = f"Bearer {key}"
    else:
        raise RecordError(
            f"unknown provider {provider!r}; the providers are {', '.join(PROVIDERS)}"
        )
    body.update(recording.extra)
    headers.update({name.lower(): value for name, value in recording.headers.items()})
    return _with_query(url, base_parts.query), headers, body


def _with_query(url: str, query: str) -> str:
    """`url` with the base URL's query parameters before its own."""
    if not query:
        return url
    parts = urlsplit(url)
    joined = f"{query}&{parts.query}" if parts.query else query
    return urlunsplit(parts._replace(query=joined))


def record(recording: Recording, out: Path, *, force: bool = False) -> Path:
    """Send the request and write the cassette to `out`; RecordError if that fails or the
    cassette would hold a credential (then nothing is written)."""
    if out.exists() and not force:
        raise RecordError(f"{out} exists; choose another --out, or pass --force to replace it")
    url, headers, body = build_request(recording)
    secrets = _secret_values(recording, headers)
    persister = _ScanningPersister(secrets)
    recorder = vcr.VCR(
        before_record_request=_RequestScrubber(recording, secrets),
        before_record_response=lambda response: _scrub_response(response, secrets),
        decode_compressed_response=True,
        record_on_exception=False,
    )
    recorder.register_serializer(_yaml.NAME, _yaml)
    recorder.register_persister(persister)
    if out.exists():
        out.unlink()
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    status = None
    with recorder.use_cassette(str(out), serializer=_yaml.NAME, record_mode="once") as cassette:
        cassette.get_metadata("provenance", _provenance(recording))
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            error.read()
            status = error.code
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise RecordError(f"cannot reach {_public(url)}: {reason}") from None
    if persister.findings:
        listed = "\n".join(f"  {finding}" for finding in persister.findings)
        raise RecordError(
            f"refusing to write {out}: after scrubbing it still holds what looks like a "
            f"credential:\n{listed}\nNothing was written. See docs/cassettes.md (scrubbing)."
        )
    if status is not None and not 200 <= status < 300:
        out.unlink(missing_ok=True)
        raise RecordError(
            f"{_public(url)} answered HTTP {status}; nothing was written (check the key, the "
            "model name and the base URL)"
        )
    return out


def _secret_values(recording: Recording, headers: Mapping[str, str]) -> list[str]:
    """The exact values that must not reach the cassette: the key, and the value of every
    header that is scrubbed (with the token of `Bearer <token>`)."""
    values = [recording.api_key] if recording.api_key else []
    for name, value in headers.items():
        if secret_header(name) or _scrubbed_custom(recording, name):
            values.append(value)
            values += value.split()[1:]
    return sorted({value for value in values if len(value) >= 6}, key=len, reverse=True)


def _scrubbed_custom(recording: Recording, name: str) -> bool:
    """A `--header` whose value is recorded as `[scrubbed]`."""
    kept = {header.lower() for header in recording.keep_headers} | PROTOCOL_HEADERS
    given = {header.lower() for header in recording.headers}
    return name.lower() in given and name.lower() not in kept


class _RequestScrubber:
    """vcrpy's before_record_request hook: the request as it may be written."""

    def __init__(self, recording: Recording, secrets: Sequence[str]) -> None:
        self.recording = recording
        self.secrets = list(secrets)

    def __call__(self, request: Any) -> Any:
        headers = {}
        for name, value in request.headers.items():
            lower = name.lower()
            if lower in SECRET_REQUEST_HEADERS or secret_header(name):
                continue
            if _scrubbed_custom(self.recording, name):
                headers[name] = PLACEHOLDER
            else:
                headers[name] = scrub_text(str(value), self.secrets)
        parts = urlsplit(request.uri)
        query = [
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if name.lower() not in SECRET_QUERY_PARAMETERS and not secret_query_parameter(name)
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


def _scrub_response(response: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """Cookies, account and request identifiers and rate limits removed; credential
    shapes and opaque tokens in other headers scrubbed. The body is kept byte for byte (a
    credential in it makes the recording refuse to write)."""
    headers = response.get("headers") or {}
    kept: dict[str, Any] = {}
    for name, values in headers.items():
        lower = name.lower()
        if (
            lower in SECRET_RESPONSE_HEADERS
            or secret_header(name)
            or lower.startswith(("x-ratelimit-", "anthropic-ratelimit-"))
        ):
            continue
        listed = values if isinstance(values, list) else [values]
        kept[name] = [_scrub_response_header(lower, str(value), secrets) for value in listed]
    response["headers"] = kept
    return response


def _scrub_response_header(lower: str, value: str, secrets: Sequence[str]) -> str:
    value = scrub_text(value, secrets)
    if lower in PLAIN_RESPONSE_HEADERS:
        return value
    return _OPAQUE.sub(PLACEHOLDER, value)


def _provenance(recording: Recording) -> dict[str, Any]:
    return {
        "kind": "recorded",
        "server": _public(recording.base_url),
        "provider": recording.provider,
        "model": recording.model,
        "prompt": recording.prompt,
        "stream": recording.stream,
        "recorded": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool": f"conformance record {__version__}",
        **({"note": recording.note} if recording.note else {}),
    }


def _public(url: str) -> str:
    """A URL without user information and query: what may be shown and stored."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class _ScanningPersister:
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
