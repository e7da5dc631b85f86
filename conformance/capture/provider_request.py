"""The one request `conformance record` sends: per provider, its URL, headers and JSON body."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance.errors import Failure

#: Where the request goes, per provider, from the base URL (as each provider's SDK has it).
PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama", "ollama-generate")
_DEFAULT_KEY_ENV = {
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


class RecordError(Failure):
    """The recording failed or was refused, or what was recorded does not decode; the
    message says why and what to do (exit status 1)."""


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
