"""The one credential scanner for cassettes: every finding of the rules of `_secret_rules`
in a cassette, placed (interaction, header, query parameter, body line, JSON field, line of
the file), and what a corpus check and `conformance approve` make of them."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from ._secret_rules import (
    ACCOUNT_HEADERS,
    PLACEHOLDER,
    Finding,
    mask,
    secret_field,
    secret_header,
    secret_query_parameter,
    shapes,
)
from ._yaml import ShapeProblem, guarded_json, guarded_load


def scan(text: str, secrets: Iterable[str] = ()) -> list[Finding]:
    """Every credential shape in `text`, line by line (for text that is not a cassette)."""
    findings: dict[tuple[int, str], Finding] = {}
    secrets = list(secrets)
    for number, line in enumerate(text.splitlines(), start=1):
        for what, matched in shapes(line, secrets):
            findings.setdefault(
                (number, what), Finding(f"line {number}", what, mask(matched), number)
            )
    return list(findings.values())


def scan_cassette_text(text: str, secrets: Iterable[str] = ()) -> list[Finding]:
    """Every credential in a capture's text, in any form the loader reads (vcrpy YAML or
    JSON, pydantic-ai's `parsed_body`, Ruby VCR, HAR), each with the interaction and the
    place in it (header, query parameter, body line, JSON or form field) and the line of the
    file. Text that is no capture, or that the loader refuses (an alias, deep nesting), is
    scanned line by line, never expanded."""
    secrets = list(secrets)
    try:
        data = _document(text)
        interactions = _interactions(data)
    except (ValueError, yaml.YAMLError, ShapeProblem):
        interactions = None
    if interactions is None:
        return scan(text, secrets)  # not a capture's shape: scan it as text
    lines = text.splitlines()
    findings: list[Finding] = []
    reported: dict[str, list[str]] = {}

    def add(where: str, what: str, value: str) -> None:
        # One finding per value and part (a `key=AIza...` parameter is one credential, not
        # a parameter and a key shape).
        part = re.split(r",| line \d", where)[0]
        values = reported.setdefault(part, [])
        if any(value in other or other in value for other in values):
            return
        values.append(value)
        findings.append(Finding(where, what, mask(value), _line_of(lines, value)))

    for index, (request, response) in enumerate(interactions):
        at = f"interaction {index}"
        for what, value in _uri_findings(request.uri, secrets):
            add(f"{at}: request URI", what, value)
        for name, value in request.query:
            if value and value != PLACEHOLDER and secret_query_parameter(name, value):
                add(f"{at}: request URI", f"the credential query parameter {name!r}", value)
        for where, what, value in _header_findings(request.headers, secrets):
            add(f"{at}: request header {where!r}", what, value)
        for name, value in request.form:
            if value and value != PLACEHOLDER and secret_field(name, value, request=True):
                add(f"{at}: request body, form field {name!r}", "a credential field", value)
        for where, what, value in _body_findings(request.body, secrets, request=True):
            add(f"{at}: request body{where}", what, value)
        for where, what, value in _header_findings(response.headers, secrets):
            add(f"{at}: response header {where!r}", what, value)
        for where, what, value in _body_findings(response.body, secrets, request=False):
            add(f"{at}: response body{where}", what, value)
    # Everything else (metadata, fields of a form this scanner does not place): the shapes,
    # and values named like credentials.
    for path, key, text_value in _named_strings(data, ""):
        if key is not None and secret_field(key, text_value, request=False):
            add(path, "a credential field", text_value)
        for what, matched in shapes(text_value, secrets):
            add(path, what, matched)
    return findings


def scan_cassette_file(path: Path, secrets: Iterable[str] = ()) -> list[Finding]:
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return []  # a missing cassette is reported by whoever loads it
    return scan_cassette_text(text, secrets)


def report(path: Path | str, findings: Iterable[Finding]) -> str:
    """The message for a cassette that holds credentials: one line per finding."""
    listed = "\n".join(f"  {path}: {finding}" for finding in findings)
    return (
        f"{path} holds what looks like a credential:\n{listed}\n"
        "Remove it from the cassette (or record again: `conformance record` scrubs it); "
        "see docs/cassettes.md (scrubbing)."
    )


def _document(text: str) -> Any:
    """The capture's document, read as the loader reads it (with its guards)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return guarded_json(text)
        except json.JSONDecodeError:
            pass
    return guarded_load(text)


@dataclass(frozen=True, slots=True)
class _Side:
    """One side of an interaction, as stored (nothing decoded but base64)."""

    uri: str = ""
    headers: Mapping[str, Any] | None = None
    #: Query parameters stored apart from the URI (HAR's `queryString`).
    query: tuple[tuple[str, str], ...] = ()
    #: Form fields stored apart from the body (HAR's `postData.params`).
    form: tuple[tuple[str, str], ...] = ()
    body: str | None = None


def _interactions(data: Any) -> list[tuple[_Side, _Side]] | None:
    """Each interaction of a capture in any form the loader reads, or None for a document
    that is no capture."""
    if not isinstance(data, Mapping):
        return None
    log = data.get("log")
    if isinstance(log, Mapping) and isinstance(log.get("entries"), list):
        return [_har_sides(entry) for entry in log["entries"] if isinstance(entry, Mapping)]
    for key in ("interactions", "http_interactions"):
        if isinstance(data.get(key), list):
            return [
                (_vcr_side(item.get("request")), _vcr_side(item.get("response")))
                for item in data[key]
                if isinstance(item, Mapping)
            ]
    return None


def _vcr_side(side: Any) -> _Side:
    if not isinstance(side, Mapping):
        return _Side()
    parsed = side.get("parsed_body")
    headers = side.get("headers")
    return _Side(
        uri=str(side.get("uri") or ""),
        headers=headers if isinstance(headers, Mapping) else None,
        body=_body_text(side.get("body")) if parsed is None else json.dumps(parsed),
    )


def _har_sides(entry: Mapping[str, Any]) -> tuple[_Side, _Side]:
    request = _mapping(entry.get("request"))
    response = _mapping(entry.get("response"))
    post = _mapping(request.get("postData"))
    content = _mapping(response.get("content"))
    return (
        _Side(
            uri=str(request.get("url") or ""),
            headers=_har_headers(request),
            query=_pairs(request.get("queryString")),
            form=_pairs(post.get("params")),
            body=_body_text(post),
        ),
        _Side(headers=_har_headers(response), body=_body_text(content)),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _har_headers(side: Mapping[str, Any]) -> dict[str, list[str]]:
    """HAR's header list, and its cookies as the `Cookie` header they were sent in."""
    headers: dict[str, list[str]] = {}
    for name, value in _pairs(side.get("headers")):
        headers.setdefault(name, []).append(value)
    for name, value in _pairs(side.get("cookies")):
        headers.setdefault("cookie", []).append(f"{name}={value}")
    return headers


def _pairs(items: Any) -> tuple[tuple[str, str], ...]:
    """HAR's `[{name, value}, ...]` lists."""
    if not isinstance(items, list):
        return ()
    return tuple(
        (str(item.get("name", "")), "" if item.get("value") is None else str(item["value"]))
        for item in items
        if isinstance(item, Mapping)
    )


def _body_text(body: Any) -> str | None:
    """A stored body as text: a string, `!!binary`, `{string}`, `{base64_string}`, HAR's
    `{text, encoding}`, or pydantic-ai's parsed JSON."""
    if isinstance(body, Mapping):
        if "base64_string" in body:
            return _base64_text(body["base64_string"])
        if "string" not in body and "text" not in body:  # a request body stored as JSON
            return json.dumps(body)
        value = body.get("string", body.get("text"))
        if isinstance(value, str) and body.get("encoding") == "base64":
            return _base64_text(value)
        return _body_text(value)
    if isinstance(body, list):  # a request body stored as JSON
        return json.dumps(body)
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return body if isinstance(body, str) else None


def _base64_text(value: Any) -> str | None:
    try:
        return base64.b64decode(str(value), validate=False).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return None


def _uri_findings(uri: str, secrets: list[str]) -> Iterator[tuple[str, str]]:
    parts = urlsplit(uri)
    if parts.password or (parts.username and "@" in parts.netloc):
        yield "user information in the URI", parts.netloc.rsplit("@", 1)[0]
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and value != PLACEHOLDER and secret_query_parameter(name, value):
            yield f"the credential query parameter {name!r}", value
    yield from shapes(uri, secrets)


def _header_findings(headers: Any, secrets: list[str]) -> Iterator[tuple[str, str, str]]:
    if not isinstance(headers, Mapping):
        return
    for name, values in headers.items():
        for value in values if isinstance(values, list) else [values]:
            text = "" if value is None else str(value)
            if text.strip() and text != PLACEHOLDER and secret_header(str(name), text):
                what = (
                    "an account identifier"
                    if str(name).lower() in ACCOUNT_HEADERS
                    else "a credential header"
                )
                yield str(name), what, text
            else:
                for what, matched in shapes(text, secrets):
                    yield str(name), what, matched


def _body_findings(
    body: str | None, secrets: list[str], *, request: bool
) -> Iterator[tuple[str, str, str]]:
    if not body:
        return
    documents: list[tuple[str, Any]] = []
    try:
        documents.append(("", guarded_json(body)))
    except (ValueError, ShapeProblem):
        for number, line in enumerate(body.splitlines(), start=1):
            data = line[5:] if line.startswith("data:") else line
            if data.strip()[:1] in ("{", "["):
                with contextlib.suppress(ValueError, ShapeProblem):
                    documents.append((f" line {number}", guarded_json(data)))
        if not documents and _FORM.fullmatch(body.strip()):
            for name, value in parse_qsl(body.strip(), keep_blank_values=True):
                if value and value != PLACEHOLDER and secret_field(name, value, request=request):
                    yield f", form field {name!r}", "a credential field", value
    for where, document in documents:
        for path, value in _fields(document):
            name = path.rsplit(".", 1)[-1]
            if value and value != PLACEHOLDER and secret_field(name, value, request=request):
                yield f"{where}, JSON field {path!r}", "a credential field", value
    for number, line in enumerate(body.splitlines() or [body], start=1):
        for what, matched in shapes(line, secrets):
            yield f" line {number}", what, matched


#: A form-encoded body (`a=1&b=2`): what `parse_qsl` reads as fields.
_FORM = re.compile(r"[^\s=&]+=[^\s&]*(?:&[^\s=&]+=[^\s&]*)*")


def _fields(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted path, string value) of every string under a mapping key."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else str(key)
            if isinstance(child, str):
                yield child_path, child
            else:
                yield from _fields(child, child_path)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _fields(child, f"{path}[{index}]")


def _named_strings(value: Any, path: str) -> Iterator[tuple[str, str | None, str]]:
    """(path, key, string) of every string outside the interactions, the key it is under
    (None in a list)."""
    if isinstance(value, Mapping):
        for key, child in value.items():
            if not path and key in ("interactions", "http_interactions", "log"):
                continue
            child_path = f"{path}.{key}" if path else str(key)
            if isinstance(child, str):
                yield child_path, str(key), child
            else:
                yield from _named_strings(child, child_path)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            if isinstance(child, str):
                yield f"{path}[{index}]", None, child
            else:
                yield from _named_strings(child, f"{path}[{index}]")


def _line_of(lines: list[str], value: str) -> int:
    """The first line of the file holding `value` (or, for a long one, its start)."""
    for needle in (value, value[:24]):
        if needle:
            for number, line in enumerate(lines, start=1):
                if needle in line:
                    return number
    return 0


# ----------------------------------------------------------------------------- the corpus

#: What every finding in a cassette is told to do.
REMEDY = "a credential must not be in a cassette: remove it (docs/cassettes.md, scrubbing)"


def problems(path: Path) -> list[tuple[int, str]]:
    """(line, message) for every credential in the cassette at `path`, as `conformance
    check` reports them and `conformance approve` refuses them."""
    return sorted(
        (finding.line, f"{finding.where}: {finding.what} {finding.excerpt}: {REMEDY}")
        for finding in scan_cassette_file(path)
    )


def refusal(path: Path) -> str | None:
    """The message refusing the cassette at `path`, or None when it scans clean."""
    found = problems(path)
    if not found:
        return None
    listed = "\n".join(f"  {path}:{line}: {message}" for line, message in found)
    return f"{path} holds what looks like a credential:\n{listed}"


def corpus_cassettes(case_files: Iterable[Path], referenced: Iterable[Path]) -> list[Path]:
    """The cassettes a corpus answers for: those its cases use, and every cassette in the
    `cassettes/` directory its case files refer to (a capture is checked before a case uses
    it, and after the case is gone)."""
    from ._load import cassettes_dir_for, iter_cassette_files

    paths = {path.resolve() for path in referenced}
    directories = {cassettes_dir_for(file).resolve() for file in case_files}
    for directory in directories:
        if directory.is_dir():
            # Every file the loader reads captures from, whatever its extension.
            paths.update(path.resolve() for path in iter_cassette_files(directory))
    here = Path.cwd().resolve()
    # Shown as the user would name them: relative to the working directory when under it.
    return sorted(path.relative_to(here) if path.is_relative_to(here) else path for path in paths)
