"""The one credential scanner for cassettes: every finding of the rules of `_secret_rules`
in a cassette, placed (interaction, header, query parameter, body line, JSON field, line of
the file), and what a corpus check and `conformance approve` make of them."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
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
    """Every credential in a cassette's YAML text, each with the interaction and the place
    in it (header, query parameter, body line, JSON field) and the line of the file."""
    secrets = list(secrets)
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        data = None
    if not isinstance(data, Mapping) or not isinstance(data.get("interactions"), list):
        return scan(text, secrets)  # not a cassette's shape: scan it as text
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

    for index, interaction in enumerate(data["interactions"]):
        if not isinstance(interaction, Mapping):
            continue
        at = f"interaction {index}"
        request = interaction.get("request")
        response = interaction.get("response")
        if isinstance(request, Mapping):
            uri = str(request.get("uri") or "")
            for what, value in _uri_findings(uri, secrets):
                add(f"{at}: request URI", what, value)
            for where, what, value in _header_findings(request.get("headers"), secrets):
                add(f"{at}: request header {where!r}", what, value)
            for where, what, value in _body_findings(request.get("body"), secrets, request=True):
                add(f"{at}: request body{where}", what, value)
        if isinstance(response, Mapping):
            for where, what, value in _header_findings(response.get("headers"), secrets):
                add(f"{at}: response header {where!r}", what, value)
            body = response.get("body")
            body = body.get("string") if isinstance(body, Mapping) else body
            for where, what, value in _body_findings(body, secrets, request=False):
                add(f"{at}: response body{where}", what, value)
    for key, value in data.items():
        if key != "interactions":
            for path, text_value in _strings(value, str(key)):
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


def _uri_findings(uri: str, secrets: list[str]) -> Iterator[tuple[str, str]]:
    parts = urlsplit(uri)
    if parts.password or (parts.username and "@" in parts.netloc):
        yield "user information in the URI", parts.netloc.rsplit("@", 1)[0]
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and value != PLACEHOLDER and secret_query_parameter(name):
            yield f"the credential query parameter {name!r}", value
    yield from shapes(uri, secrets)


def _header_findings(headers: Any, secrets: list[str]) -> Iterator[tuple[str, str, str]]:
    if not isinstance(headers, Mapping):
        return
    for name, values in headers.items():
        for value in values if isinstance(values, list) else [values]:
            text = "" if value is None else str(value)
            if text.strip() and text != PLACEHOLDER and secret_header(str(name)):
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
    body: Any, secrets: list[str], *, request: bool
) -> Iterator[tuple[str, str, str]]:
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if not isinstance(body, str) or not body:
        return
    documents: list[tuple[str, Any]] = []
    try:
        documents.append(("", json.loads(body)))
    except ValueError:
        for number, line in enumerate(body.splitlines(), start=1):
            data = line[5:] if line.startswith("data:") else line
            if data.strip()[:1] in ("{", "["):
                with contextlib.suppress(ValueError):
                    documents.append((f" line {number}", json.loads(data)))
    for where, document in documents:
        for path, value in _fields(document):
            name = path.rsplit(".", 1)[-1]
            if value and value != PLACEHOLDER and secret_field(name, request=request):
                yield f"{where}, JSON field {path!r}", "a credential field", value
    for number, line in enumerate(body.splitlines() or [body], start=1):
        for what, matched in shapes(line, secrets):
            yield f" line {number}", what, matched


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


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, child in value.items():
            yield from _strings(child, f"{path}.{key}")
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _strings(child, f"{path}[{index}]")


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
    from ._load import cassettes_dir_for

    paths = {path.resolve() for path in referenced}
    directories = {cassettes_dir_for(file).resolve() for file in case_files}
    for directory in directories:
        if directory.is_dir():
            paths.update(path.resolve() for path in directory.rglob("*.yaml"))
    here = Path.cwd().resolve()
    # Shown as the user would name them: relative to the working directory when under it.
    return sorted(path.relative_to(here) if path.is_relative_to(here) else path for path in paths)
