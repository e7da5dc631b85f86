"""Scrubbing: credentials replaced by `PLACEHOLDER` in text and in JSON request bodies, and
removed from a whole capture's document, by the rules of `_secret_rules`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ._secret_rules import (
    PLACEHOLDER,
    SHAPES,
    ShapeCheck,
    secret_field,
    secret_header,
    secret_query_parameter,
)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential shape (and each of `secrets`) replaced by PLACEHOLDER."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, PLACEHOLDER)
    for _, pattern, check in SHAPES:

        def replace(match: re.Match[str], check: ShapeCheck = check) -> str:
            if check is not None and not check(match):
                return match.group()
            # Keep a query parameter's name, and the scheme word of an Authorization value.
            value = match.group()
            if "=" in value and value[0] in "?&;":
                return value.split("=", 1)[0] + "=" + PLACEHOLDER
            head = value.split(None, 1)[0] if value[:1].isalpha() and " " in value else ""
            if head.lower() in ("bearer", "basic"):
                return f"{head} {PLACEHOLDER}"
            return PLACEHOLDER

        text = pattern.sub(replace, text)
    return text


def scrub_json_body(text: str, secrets: Iterable[str] = ()) -> str:
    """A JSON request body with secret-named fields and credential shapes scrubbed; a body
    that is not JSON gets the text scrub."""
    try:
        value = json.loads(text)
    except ValueError:
        return scrub_text(text, secrets)
    secrets = list(secrets)

    def walk(item: Any) -> Any:
        if isinstance(item, dict):
            return {
                key: PLACEHOLDER
                if isinstance(child, str) and child and secret_field(str(key), child, request=True)
                else walk(child)
                for key, child in item.items()
            }
        if isinstance(item, list):
            return [walk(child) for child in item]
        if isinstance(item, str):
            return scrub_text(item, secrets)
        return item

    scrubbed = walk(value)
    return text if scrubbed == value else json.dumps(scrubbed, ensure_ascii=False)


def scrub_capture(data: Any) -> list[str]:
    """Scrub a capture's document in place, in any form the loader reads (vcrpy, Ruby VCR,
    HAR): remove the credential and account headers (and HAR's cookies) of requests and
    responses and the credential query parameters of request URIs, and scrub request bodies
    (JSON fields, form fields, credential shapes). Response bodies are left as recorded (a
    credential there is refused by the scan). The names of what was removed."""
    removed: set[str] = set()
    if not isinstance(data, dict):
        return []
    log = data.get("log")
    if isinstance(log, dict) and isinstance(log.get("entries"), list):
        for entry in log["entries"]:
            if isinstance(entry, dict):
                _scrub_har_entry(entry, removed)
    for key in ("interactions", "http_interactions"):
        for item in data.get(key) or ():
            if not isinstance(item, dict):
                continue
            for side in (item.get("request"), item.get("response")):
                if isinstance(side, dict) and isinstance(side.get("headers"), dict):
                    headers = side["headers"]
                    for name in [n for n, v in headers.items() if secret_header(str(n), _one(v))]:
                        removed.add(str(name).lower())
                        del headers[name]
            request = item.get("request")
            if isinstance(request, dict):
                if isinstance(request.get("uri"), str):
                    request["uri"] = _scrub_uri(request["uri"], removed)
                for name in ("body", "parsed_body"):
                    if name in request:
                        request[name] = _scrub_body(request[name])
    return sorted(removed)


def _one(values: Any) -> Any:
    return values[0] if isinstance(values, list) and values else values


def _scrub_har_entry(entry: dict[str, Any], removed: set[str]) -> None:
    for side in (entry.get("request"), entry.get("response")):
        if not isinstance(side, dict):
            continue
        if isinstance(side.get("headers"), list):
            kept = [
                h
                for h in side["headers"]
                if not (isinstance(h, dict) and secret_header(str(h.get("name")), h.get("value")))
            ]
            removed.update(str(h.get("name")).lower() for h in side["headers"] if h not in kept)
            side["headers"] = kept
        if side.get("cookies"):
            removed.add("cookies")
            side["cookies"] = []
    request = entry.get("request")
    if not isinstance(request, dict):
        return
    if isinstance(request.get("url"), str):
        request["url"] = _scrub_uri(request["url"], removed)
    if isinstance(request.get("queryString"), list):
        request["queryString"] = [
            p
            for p in request["queryString"]
            if not (
                isinstance(p, dict) and secret_query_parameter(str(p.get("name")), p.get("value"))
            )
        ]
    post = request.get("postData")
    if isinstance(post, dict):
        if isinstance(post.get("text"), str) and post.get("encoding") != "base64":
            post["text"] = _scrub_body(post["text"])
        if isinstance(post.get("params"), list):
            post["params"] = [
                p
                for p in post["params"]
                if not (
                    isinstance(p, dict)
                    and secret_field(str(p.get("name")), p.get("value"), request=True)
                )
            ]


def _scrub_uri(uri: str, removed: set[str]) -> str:
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(name, value) for name, value in query if not secret_query_parameter(name, value)]
    if len(kept) == len(query):
        return scrub_text(uri)
    removed.update(f"query {name}" for name, value in query if (name, value) not in kept)
    return scrub_text(urlunsplit(parts._replace(query=urlencode(kept))))


def _scrub_body(body: Any) -> Any:
    """A request body as stored, scrubbed: text (JSON, form or other), `{string: ...}`, or
    parsed JSON."""
    if isinstance(body, str):
        form = parse_qsl(body.strip(), keep_blank_values=True)
        if form and "=" in body and not body.lstrip().startswith(("{", "[")):
            return urlencode(
                [
                    (name, PLACEHOLDER if secret_field(name, value, request=True) else value)
                    for name, value in form
                ]
            )
        return scrub_json_body(body)
    if isinstance(body, dict) and isinstance(body.get("string"), str):
        return {**body, "string": _scrub_body(body["string"])}
    if isinstance(body, dict | list):
        return json.loads(scrub_json_body(json.dumps(body)))
    return body
