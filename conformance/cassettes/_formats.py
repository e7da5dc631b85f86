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
the safe loader only: a capture from elsewhere can never run code.

Everything is turned into one plain form, `RawExchange`, that the rest of the package reads.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # libyaml when available
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

#: What `read_capture` recognises, as named in messages and in `conformance import`.
FORMATS = ("vcrpy-yaml", "vcrpy-json", "pydantic-ai", "ruby-vcr", "har")


class FormatProblem(Exception):
    """The file is not a capture this module reads, or one of its interactions is broken."""

    def __init__(self, message: str, interaction: int | None = None) -> None:
        self.message = message
        self.interaction = interaction
        super().__init__(message)


@dataclass(slots=True)
class RawExchange:
    method: str
    uri: str
    request_headers: dict[str, list[str]]
    request_body: bytes | None
    status: int
    reason: str
    response_headers: dict[str, list[str]]
    body: bytes
    #: How the response body was stored: text, binary (!!binary or base64), or parsed_body.
    stored_as: str = "text"
    #: Content encodings undone while reading (e.g. ["gzip"]).
    decompressed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Capture:
    format: str
    exchanges: list[RawExchange]
    metadata: Mapping[str, Any]


def read_capture(data: bytes) -> Capture:
    """Parse a capture file's bytes. Raises FormatProblem, yaml.YAMLError or
    UnicodeDecodeError (the caller turns them into CassetteError)."""
    text = data.decode("utf-8-sig")
    if not text.strip():
        raise FormatProblem("the file is empty")
    stripped = text.lstrip()
    document: Any
    if stripped.startswith(("{", "[")):
        try:
            document = json.loads(text)
            syntax = "json"
        except json.JSONDecodeError:
            document = yaml.load(text, Loader=_SafeLoader)  # YAML flow style
            syntax = "yaml"
    else:
        document = yaml.load(text, Loader=_SafeLoader)
        syntax = "yaml"
    if not isinstance(document, Mapping):
        raise FormatProblem(_NOT_A_CAPTURE)
    if isinstance(document.get("log"), Mapping) and "entries" in document["log"]:
        return _har(document)
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
    exchanges = []
    parsed = False
    for index, interaction in enumerate(interactions):
        try:
            exchange, used_parsed = _vcr_exchange(interaction)
        except FormatProblem as problem:
            raise FormatProblem(problem.message, index) from None
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise FormatProblem(
                f"not a cassette interaction ({type(error).__name__}: {error}); each has a "
                "`request` (method, uri) and a `response` (status, headers, body)",
                index,
            ) from None
        parsed = parsed or used_parsed
        exchanges.append(exchange)
    metadata = document.get("metadata")
    if parsed and name.startswith("vcrpy"):
        name = "pydantic-ai"
    return Capture(name, exchanges, metadata if isinstance(metadata, Mapping) else {})


def _vcr_exchange(interaction: Mapping[str, Any]) -> tuple[RawExchange, bool]:
    request = interaction["request"]
    response = interaction["response"]
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise TypeError("`request` and `response` must be mappings")
    request_headers = _headers(request.get("headers"))
    response_headers = _headers(response.get("headers"))
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
    _decompress(exchange, binary=stored_as == "binary")
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
            return _base64(body["base64_string"], which), "binary", False
        value = body.get("string")
        if body.get("encoding") == "base64" and isinstance(value, str):
            return _base64(value, which), "binary", False
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


def _base64(value: Any, which: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=False)
    except (binascii.Error, ValueError) as error:
        raise FormatProblem(f"the {which} body is not valid base64: {error}") from None


def _headers(raw: Any) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    if raw is None:
        return headers
    if isinstance(raw, list):  # HAR: [{name, value}, ...]
        for item in raw:
            if isinstance(item, Mapping) and "name" in item:
                headers.setdefault(str(item["name"]).lower(), []).append(
                    _text(item.get("value", ""))
                )
        return headers
    if not isinstance(raw, Mapping):
        raise FormatProblem(f"headers must be a mapping, not {type(raw).__name__}")
    for name, value in raw.items():
        values = value if isinstance(value, list | tuple) else [value]
        headers.setdefault(_text(name).lower(), []).extend(_text(v) for v in values)
    return headers


def _text(value: Any) -> str:
    if isinstance(value, bytes):  # vcrpy stores some botocore headers as !!binary
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


# -------------------------------------------------------------------------- encodings


def _decompress(exchange: RawExchange, *, binary: bool, lenient: bool = False) -> None:
    """Undo the response's Content-Encoding on a binary body. A text body was stored
    decoded already (text cannot hold compressed bytes), so it is left as it is.
    `lenient` (HAR, whose bodies are decoded by definition): keep a body that does not
    decompress."""
    codings = [
        c.strip().lower()
        for value in exchange.response_headers.get("content-encoding", [])
        for c in value.split(",")
        if c.strip() and c.strip().lower() != "identity"
    ]
    if not codings or not binary:
        return
    body = exchange.body
    done = []
    for coding in reversed(codings):
        try:
            body = _undo(coding, body)
        except _NotEncoded as error:
            if lenient:
                return
            raise FormatProblem(
                f"the response says Content-Encoding {coding}, but its body {error}"
            ) from None
        done.append(coding)
    exchange.body = body
    exchange.decompressed = done


class _NotEncoded(Exception):
    pass


def _undo(coding: str, body: bytes) -> bytes:
    if coding in ("gzip", "x-gzip"):
        try:
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        except zlib.error as error:
            raise _NotEncoded(f"is not gzip data ({error})") from None
    if coding == "deflate":
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):  # zlib-wrapped, then raw deflate
            try:
                return zlib.decompress(body, wbits)
            except zlib.error:
                continue
        raise _NotEncoded("is not deflate data")
    if coding == "br":
        try:
            import brotli
        except ImportError:  # pragma: no cover - brotli is a dependency
            raise _NotEncoded("needs the brotli package to decompress") from None
        try:
            return bytes(brotli.decompress(body))
        except brotli.error as error:
            raise _NotEncoded(f"is not brotli data ({error})") from None
    if coding == "zstd":
        raise _NotEncoded("is zstd, which this suite does not decompress yet")
    raise _NotEncoded(f"uses an encoding this suite does not know ({coding!r})")


# ------------------------------------------------------------------------------- HAR


def _har(document: Mapping[str, Any]) -> Capture:
    entries = document["log"]["entries"]
    if not isinstance(entries, list):
        raise FormatProblem("`log.entries` must be a list")
    exchanges = []
    for index, entry in enumerate(entries):
        try:
            exchanges.append(_har_exchange(entry))
        except FormatProblem as problem:
            raise FormatProblem(problem.message, index) from None
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise FormatProblem(
                f"not a HAR entry ({type(error).__name__}: {error}); each has a `request` "
                "(method, url, headers) and a `response` (status, headers, content)",
                index,
            ) from None
    metadata = document.get("metadata")
    return Capture("har", exchanges, metadata if isinstance(metadata, Mapping) else {})


def _har_exchange(entry: Mapping[str, Any]) -> RawExchange:
    request, response = entry["request"], entry["response"]
    post = request.get("postData") or {}
    request_body: bytes | None = None
    if isinstance(post, Mapping) and post.get("text") is not None:
        if post.get("encoding") == "base64":
            request_body = _base64(post["text"], "request")
        else:
            request_body = str(post["text"]).encode("utf-8")
    content = response.get("content") or {}
    text = content.get("text")
    binary = content.get("encoding") == "base64"
    if text is None:
        body = b""
    elif binary:
        body = _base64(text, "response")
    else:
        body = str(text).encode("utf-8")
    headers = _headers(response.get("headers"))
    mime = content.get("mimeType")
    if "content-type" not in headers and mime:
        headers["content-type"] = [str(mime)]
    request_headers = _headers(request.get("headers"))
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
    _decompress(exchange, binary=binary, lenient=True)
    return exchange


# ------------------------------------------------------------------------ converting


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
