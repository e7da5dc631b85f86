"""Captures as other tools store them, read by their content, not by their file name.

- vcrpy cassettes, YAML (its default) or JSON (its `json` serializer): `interactions:`, each a
  `request` (`method`, `uri`, `body`, `headers`) and a `response` (`status`, `headers`,
  `body: {string: ...}`);
- the same with pydantic-ai's convention: a JSON body kept as `parsed_body` (a mapping), in
  the request and in the response, instead of `body`;
- Ruby VCR's `http_interactions:` (bodies as `{encoding, string}` or `{base64_string}`);
- HAR 1.2 (browsers' developer tools, mitmproxy, Charles, Fiddler): `log.entries[]`, the body
  in `response.content.text`, base64 when `encoding: base64`.

Bodies may be text, `!!binary`, or base64 (`base64_string`, `encoding: base64`); a binary
body is decompressed as its `Content-Encoding` says (gzip, deflate, br). YAML is read with
the safe loader only: a capture from elsewhere can never run code; and as case files are,
refusing aliases and nesting deeper than `_yaml.MAX_DEPTH` levels, so that a few lines
cannot expand to billions of nodes.

Everything is turned into one plain form, `RawExchange` (`_exchange`), that the rest of the
package reads; HAR is read in `_har`.
"""

from __future__ import annotations

import json
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
from ._har import read_har
from ._yaml import guarded_json, guarded_load

#: What `read_capture` recognises, as named in messages and in `conformance import`.
FORMATS = ("vcrpy-yaml", "vcrpy-json", "pydantic-ai", "ruby-vcr", "har")


def read_capture(data: bytes) -> Capture:
    """Parse a capture file's bytes. Raises FormatProblem, ShapeProblem (an alias or deep
    nesting: refused before anything expands it), yaml.YAMLError or UnicodeDecodeError (the
    caller turns them into CassetteError)."""
    text = data.decode("utf-8-sig")
    if not text.strip():
        raise FormatProblem("the file is empty")
    stripped = text.lstrip()
    document: Any
    if stripped.startswith(("{", "[")):
        try:
            document = guarded_json(text)
            syntax = "json"
        except json.JSONDecodeError:
            document = guarded_load(text)  # YAML flow style
            syntax = "yaml"
    else:
        document = guarded_load(text)
        syntax = "yaml"
    if not isinstance(document, Mapping):
        raise FormatProblem(_NOT_A_CAPTURE)
    if isinstance(document.get("log"), Mapping) and "entries" in document["log"]:
        return read_har(document)
    if "http_interactions" in document:
        return _vcr_like(document, "http_interactions", "ruby-vcr")
    if "interactions" in document:
        return _vcr_like(document, "interactions", f"vcrpy-{syntax}")
    raise FormatProblem(_NOT_A_CAPTURE)


_NOT_A_CAPTURE = (
    "not a cassette this suite reads: a vcrpy cassette (YAML or JSON) is a mapping with "
    "`interactions:`, each with a `request` and a `response`; Ruby VCR has "
    "`http_interactions:`; a HAR file has `log: {entries: [...]}`"
)


# ----------------------------------------------------------------------------- vcrpy


def _vcr_like(document: Mapping[str, Any], key: str, name: str) -> Capture:
    interactions = document[key]
    if not isinstance(interactions, list):
        raise FormatProblem(f"`{key}` must be a list of interactions")
    first = interactions[0] if interactions else None
    if isinstance(first, Mapping) and "request" not in first and "response" not in first:
        # e.g. pydantic-ai's gRPC recordings (`request_stream`, `response_stream`)
        raise FormatProblem(
            "its interactions have no `request` and `response` "
            f"(keys: {', '.join(map(str, first))})"
        )
    read = read_each(
        interactions,
        _vcr_exchange,
        "a cassette interaction",
        "a `request` (method, uri) and a `response` (status, headers, body)",
    )
    exchanges = [exchange for exchange, _ in read]
    parsed = any(used_parsed for _, used_parsed in read)
    metadata = document.get("metadata")
    if parsed and name.startswith("vcrpy"):
        name = "pydantic-ai"
    return Capture(name, exchanges, metadata if isinstance(metadata, Mapping) else {})


def _vcr_exchange(interaction: Mapping[str, Any]) -> tuple[RawExchange, bool]:
    request = interaction["request"]
    response = interaction["response"]
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise TypeError("`request` and `response` must be mappings")
    request_headers = headers_of(request.get("headers"))
    response_headers = headers_of(response.get("headers"))
    request_body, _, request_parsed = _vcr_body(request, "request")
    body, stored_as, response_parsed = _vcr_body(response, "response")
    status = response["status"]
    if isinstance(status, Mapping):
        code, reason = int(status["code"]), str(status.get("message") or "")
    else:
        code, reason = int(status), ""
    exchange = RawExchange(
        method=str(request.get("method", "GET")).upper(),
        uri=str(request["uri"]),
        request_headers=request_headers,
        request_body=request_body,
        status=code,
        reason=reason,
        response_headers=response_headers,
        body=body or b"",
        stored_as=stored_as,
    )
    decompress(exchange, binary=stored_as == "binary")
    return exchange, request_parsed or response_parsed


def _vcr_body(side: Mapping[str, Any], which: str) -> tuple[bytes | None, str, bool]:
    """The body of a request or response, how it was stored, and whether as parsed_body."""
    if "parsed_body" in side and side["parsed_body"] is not None:
        # pydantic-ai's serializer: the JSON body as a mapping; its loader writes it back
        # with json.dumps, as this does.
        return json.dumps(side["parsed_body"]).encode("utf-8"), "parsed_body", True
    body = side.get("body")
    if isinstance(body, Mapping):
        if "base64_string" in body:
            return base64_body(body["base64_string"], which), "binary", False
        value = body.get("string")
        if body.get("encoding") == "base64" and isinstance(value, str):
            return base64_body(value, which), "binary", False
        body = value
    if body is None:
        return (None if which == "request" else b""), "text", False
    if isinstance(body, bytes):
        return body, "binary", False
    if isinstance(body, str):
        return body.encode("utf-8"), "text", False
    if which == "request" and isinstance(body, Mapping | list):
        return json.dumps(body).encode("utf-8"), "parsed_body", True
    raise FormatProblem(f"the {which} body is {type(body).__name__}, not text or binary")
