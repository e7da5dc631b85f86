"""`conformance record`: one real request to a provider, recorded with vcrpy, secrets scrubbed.

Scrubbing happens in vcrpy's record hooks: the credential headers of every provider
(`Authorization`, `x-api-key`, `x-goog-api-key`, `api-key`), cookies, organization and
project headers are removed from the request, `key=` and similar query parameters from the
URL, and cookies and account-identifying headers from the response. Then, before anything is
written, the serialized cassette is scanned for whatever still looks like a credential (the
key that was sent, known key shapes, bearer tokens); if anything is found the cassette is not
written at all.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import vcr
from vcr.serialize import serialize

from conformance._version import __version__
from conformance.cassettes import _yaml

#: Request headers that carry credentials or identify the account.
SECRET_REQUEST_HEADERS = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "x-goog-user-project",
    "anthropic-organization-id",
)
#: Query parameters that carry credentials.
SECRET_QUERY_PARAMETERS = ("key", "api_key", "api-key", "apikey", "access_token", "token")
#: Response headers that set cookies or identify the account or the request.
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

#: Shapes of credentials, for the scan before writing.
CREDENTIAL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern))
    for what, pattern in (
        ("an API key (sk-...)", r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}"),
        ("a Google API key (AIza...)", r"AIza[0-9A-Za-z_-]{30,}"),
        ("a Groq API key (gsk_...)", r"gsk_[A-Za-z0-9]{20,}"),
        ("an xAI API key (xai-...)", r"xai-[A-Za-z0-9]{20,}"),
        ("a Hugging Face token (hf_...)", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
        ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
        ("an AWS access key", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
        ("a bearer token", r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"),
        ("a Cloudflare cookie", r"__cf_bm=|_cfuvid="),
    )
)

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
class Finding:
    line: int
    what: str
    excerpt: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}: {self.excerpt}"


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

    @staticmethod
    def key_from_env(provider: str, variable: str | None = None) -> str | None:
        name = variable or _DEFAULT_KEY_ENV.get(provider)
        return os.environ.get(name) if name else None


def build_request(recording: Recording) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL, headers and JSON body of the one request."""
    base = recording.base_url.rstrip("/")
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
    return url, headers, body


def record(recording: Recording, out: Path, *, force: bool = False) -> Path:
    """Send the request and write the cassette to `out`; RecordError if that fails or the
    cassette would hold a credential (then nothing is written)."""
    if out.exists() and not force:
        raise RecordError(f"{out} exists; choose another --out, or pass --force to replace it")
    url, headers, body = build_request(recording)
    secrets = _secret_values(recording, headers)
    persister = _ScanningPersister(secrets)
    recorder = vcr.VCR(
        filter_headers=SECRET_REQUEST_HEADERS,
        filter_query_parameters=SECRET_QUERY_PARAMETERS,
        before_record_response=_scrub_response,
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
    values = [recording.api_key] if recording.api_key else []
    for name, value in headers.items():
        if name in SECRET_REQUEST_HEADERS:
            values.append(value)
            values += value.split()[1:]  # the token of "Bearer <token>"
    return [value for value in values if len(value) >= 6]


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers") or {}
    response["headers"] = {
        name: value
        for name, value in headers.items()
        if name.lower() not in SECRET_RESPONSE_HEADERS
        and not name.lower().startswith(("x-ratelimit-", "anthropic-ratelimit-"))
    }
    return response


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


def scan(text: str, secrets: Iterable[str] = ()) -> list[Finding]:
    """Everything in `text` that looks like a credential, with its line."""
    findings: dict[tuple[int, str], Finding] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for secret in secrets:
            if secret and secret in line:
                what = "the key or token that was sent"
                findings.setdefault((number, what), Finding(number, what, _mask(secret)))
        for what, pattern in CREDENTIAL_PATTERNS:
            for match in pattern.finditer(line):
                findings.setdefault((number, what), Finding(number, what, _mask(match.group())))
    return list(findings.values())


def scan_headers(cassette_dict: Mapping[str, Any]) -> list[Finding]:
    """Secret headers that survived scrubbing (the scan cannot see header names)."""
    findings = []
    for request in cassette_dict.get("requests", ()):
        for name in request.headers:
            if name.lower() in SECRET_REQUEST_HEADERS:
                findings.append(Finding(0, f"request header {name!r}", "(not scrubbed)"))
    for response in cassette_dict.get("responses", ()):
        for name in response.get("headers") or {}:
            if name.lower() in SECRET_RESPONSE_HEADERS:
                findings.append(Finding(0, f"response header {name!r}", "(not scrubbed)"))
    return findings


def _mask(value: str) -> str:
    return repr(value[:4] + "..." if len(value) > 6 else "...")


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
        self.findings = scan_headers(cassette_dict) + scan(text, self.secrets)
        if self.findings:
            return
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
