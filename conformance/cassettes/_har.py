"""HAR 1.2 (browsers' developer tools, mitmproxy, Charles, Fiddler): reading `log.entries[]`,
the body in `response.content.text` (base64 when `encoding: base64`), and writing exchanges
as HAR."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ._exchange import (
    Capture,
    FormatProblem,
    RawExchange,
    base64_body,
    decompress,
    headers_of,
    read_each,
)


def read_har(document: Mapping[str, Any]) -> Capture:
    entries = document["log"]["entries"]
    if not isinstance(entries, list):
        raise FormatProblem("`log.entries` must be a list")
    exchanges = read_each(
        entries,
        _har_exchange,
        "a HAR entry",
        "a `request` (method, url, headers) and a `response` (status, headers, content)",
    )
    metadata = document.get("metadata")
    return Capture("har", exchanges, metadata if isinstance(metadata, Mapping) else {})


def _har_exchange(entry: Mapping[str, Any]) -> RawExchange:
    request, response = entry["request"], entry["response"]
    post = request.get("postData") or {}
    request_body: bytes | None = None
    if isinstance(post, Mapping) and post.get("text") is not None:
        if post.get("encoding") == "base64":
            request_body = base64_body(post["text"], "request")
        else:
            request_body = str(post["text"]).encode("utf-8")
    content = response.get("content") or {}
    text = content.get("text")
    binary = content.get("encoding") == "base64"
    if text is None:
        body = b""
    elif binary:
        body = base64_body(text, "response")
    else:
        body = str(text).encode("utf-8")
    headers = headers_of(response.get("headers"))
    mime = content.get("mimeType")
    if "content-type" not in headers and mime:
        headers["content-type"] = [str(mime)]
    request_headers = headers_of(request.get("headers"))
    mime_type = post.get("mimeType") if isinstance(post, Mapping) else None
    if request_body is not None and "content-type" not in request_headers and mime_type:
        request_headers["content-type"] = [str(mime_type)]
    exchange = RawExchange(
        method=str(request.get("method", "GET")).upper(),
        uri=str(request["url"]),
        request_headers=request_headers,
        request_body=request_body,
        status=int(response["status"]),
        reason=str(response.get("statusText") or ""),
        response_headers=headers,
        body=body,
        stored_as="binary" if binary else "text",
    )
    # HAR bodies are decoded by definition; a tool that kept the encoded bytes is undone.
    decompress(exchange, binary=binary, lenient=True)
    return exchange


def to_har(exchanges: list[RawExchange], creator: str = "reasoning-conformance") -> dict[str, Any]:
    """A HAR 1.2 document of `exchanges` (bodies as text where they are UTF-8, else base64)."""
    entries = []
    for exchange in exchanges:
        request: dict[str, Any] = {
            "method": exchange.method,
            "url": exchange.uri,
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": [
                {"name": n, "value": v} for n, vs in exchange.request_headers.items() for v in vs
            ],
            "queryString": [],
            "headersSize": -1,
            "bodySize": len(exchange.request_body or b""),
        }
        if exchange.request_body is not None:
            mime = (exchange.request_headers.get("content-type") or ["application/json"])[0]
            request["postData"] = {"mimeType": mime, "text": exchange.request_body.decode()}
        content: dict[str, Any] = {
            "size": len(exchange.body),
            "mimeType": (exchange.response_headers.get("content-type") or [""])[0],
        }
        try:
            content["text"] = exchange.body.decode("utf-8")
        except UnicodeDecodeError:
            content["text"] = base64.b64encode(exchange.body).decode("ascii")
            content["encoding"] = "base64"
        entries.append(
            {
                "startedDateTime": "1970-01-01T00:00:00.000Z",
                "time": 0,
                "request": request,
                "response": {
                    "status": exchange.status,
                    "statusText": exchange.reason,
                    "httpVersion": "HTTP/1.1",
                    "cookies": [],
                    "headers": [
                        {"name": n, "value": v}
                        for n, vs in exchange.response_headers.items()
                        if n != "content-encoding"
                        for v in vs
                    ],
                    "content": content,
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": -1,
                },
                "cache": {},
                "timings": {"send": 0, "wait": 0, "receive": 0},
            }
        )
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": creator, "version": "1"},
            "entries": entries,
        }
    }
