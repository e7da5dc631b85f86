"""The one credential scanner and scrubber for cassettes.

`conformance record` scrubs with it before writing and refuses to write what it still
finds; `conformance approve` (and `--accept`) refuse a cassette it finds anything in; and
`conformance check` fails on one. What it looks for:

- credential headers, by name: `Authorization`, `Proxy-Authorization`, `x-api-key`,
  `api-key`, `anthropic-api-key`, `x-goog-api-key`, `x-amz-security-token`, `Cookie`,
  `Set-Cookie` and any name ending in `api-key`, `token`, `secret`, `password`,
  `credential`, `signature`, `cookie` or `authorization`; and the headers that identify an
  account (`OpenAI-Organization`, `OpenAI-Project`, `anthropic-organization-id`, ...);
- credential query parameters (`key=`, `api_key=`, `token=`, `access_token=`, `sig=`,
  `X-Amz-Signature=`, `X-Amz-Credential=`, ...), in the request URI and anywhere in text;
- user information in a URI (`https://user:password@host`);
- JSON fields named like keys or tokens (`api_key`, `apiKey`, `access_token`,
  `client_secret`, `password`, ...) in request and response bodies, SSE `data:` lines and
  NDJSON lines (in request bodies also plain `key` and `token`; a response's `token` is a
  logprobs token, and its `signature` an Anthropic thinking signature, so those are not);
- token shapes anywhere, in header values, URIs, bodies and metadata: `sk-...` (with
  `sk-ant-...` and `sk-proj-...`), `AIza...`, `xai-...`, `gsk_...`, `hf_...`, GitHub
  tokens, AWS access key IDs (`AKIA...`, `ASIA...`) and SigV4 signatures, JWTs, private
  keys, `Bearer` tokens, `Basic` credentials and Cloudflare cookies;
- when recording, the exact key and header values that were sent.

A scrubbed value is replaced by `PLACEHOLDER`, which none of the rules matches, so a
scrubbed cassette scans clean while still showing that a value was there.
"""

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

#: What a scrubbed value becomes. No rule below matches it.
PLACEHOLDER = "[scrubbed]"

#: Header names that carry a credential whatever their value looks like.
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "anthropic-api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "x-auth-token",
        "cookie",
        "set-cookie",
    }
)
#: Header names that identify the account (or the request, to the provider).
ACCOUNT_HEADERS = frozenset(
    {
        "openai-organization",
        "openai-project",
        "x-goog-user-project",
        "anthropic-organization-id",
    }
)
#: Name endings (lowercase, without `-` and `_`) of headers, query parameters and JSON
#: fields that hold a credential.
_SECRET_ENDINGS = (
    "apikey",
    "apitoken",
    "accesskey",
    "accesskeyid",
    "secretkey",
    "privatekey",
    "accesstoken",
    "authtoken",
    "securitytoken",
    "sessiontoken",
    "refreshtoken",
    "idtoken",
    "bearertoken",
    "clientsecret",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
    "authorization",
)
#: Also secret in headers and query parameters (not in response JSON, where `signature` is
#: a thinking block's signature and `token` a logprobs token).
_HEADER_ENDINGS = (*_SECRET_ENDINGS, "token", "signature", "cookie")
_QUERY_NAMES = frozenset({"key", "token", "sig", "signature", "auth", "xamzcredential"})
_REQUEST_FIELD_NAMES = frozenset({"key", "token"})


def _compact(name: str) -> str:
    return re.sub(r"[-_ .]", "", name.lower())


def secret_header(name: str) -> bool:
    """A header whose value is a credential or identifies the account."""
    lower = name.lower()
    if lower.startswith("access-control-"):  # CORS policy (allow-credentials: true), no secret
        return False
    return (
        lower in CREDENTIAL_HEADERS
        or lower in ACCOUNT_HEADERS
        or _compact(name).endswith(_HEADER_ENDINGS)
    )


def secret_query_parameter(name: str) -> bool:
    compact = _compact(name)
    return compact in _QUERY_NAMES or compact.endswith(_HEADER_ENDINGS)


def secret_field(name: str, *, request: bool) -> bool:
    """A JSON field whose string value is a credential."""
    compact = _compact(name)
    return compact.endswith(_SECRET_ENDINGS) or (request and compact in _REQUEST_FIELD_NAMES)


def _basic(match: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>`, not the word in a sentence."""
    try:
        decoded = base64.b64decode(match.group(1) + "==", validate=False).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_QUERY_SHAPE = (
    r"(?i)[?&;](?:key|api[_-]?key|apikey|access[_-]?token|token|sig|x-amz-signature|"
    r"x-amz-credential|x-amz-security-token)=(?!\[scrubbed\]|%5Bscrubbed%5D)[^&\s\"'#<>]{6,}"
)
#: Shapes of credentials: (what, pattern, optional check of a match).
SHAPES: tuple[tuple[str, re.Pattern[str], Any], ...] = tuple(
    (what, re.compile(pattern), check)
    for what, pattern, check in (
        ("an Anthropic API key (sk-ant-...)", r"sk-ant-[A-Za-z0-9_-]{16,}", None),
        ("an OpenAI project key (sk-proj-...)", r"sk-proj-[A-Za-z0-9_-]{16,}", None),
        ("an API key (sk-...)", r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}", None),
        ("a Google API key (AIza...)", r"AIza[0-9A-Za-z_-]{30,}", None),
        ("a Groq API key (gsk_...)", r"gsk_[A-Za-z0-9]{20,}", None),
        ("an xAI API key (xai-...)", r"xai-[A-Za-z0-9]{20,}", None),
        ("a Hugging Face token (hf_...)", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}", None),
        ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}", None),
        ("an AWS access key ID", r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])", None),
        ("an AWS SigV4 signature", r"AWS4-HMAC-SHA256\s+Credential=\S+", None),
        ("an AWS SigV4 signature", r"(?i)(?<![a-z])signature=[0-9a-f]{64}", None),
        (
            "a JSON Web Token",
            r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
            None,
        ),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", None),
        ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}", None),
        ("Basic credentials", r"\bBasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])", _basic),
        ("a Cloudflare cookie", r"__cf_bm=[^;\s\"']+|_cfuvid=[^;\s\"']+", None),
        ("a credential query parameter", _QUERY_SHAPE, None),
    )
)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something that looks like a credential: where it sits, what it looks like, and a
    masked excerpt (never the value itself)."""

    where: str
    what: str
    excerpt: str
    #: The line of the cassette file, where known (0: not known).
    line: int = 0

    def __str__(self) -> str:
        at = f" (line {self.line})" if self.line and not self.where.startswith("line ") else ""
        return f"{self.where}: {self.what}: {self.excerpt}{at}"


def mask(value: str) -> str:
    """A value as it may be shown: its first four characters."""
    return repr(value[:4] + "..." if len(value) > 6 else "...")


def shapes(text: str, secrets: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(what, matched text) for every credential shape in `text`, and every one of `secrets`
    (exact values that must not appear) that does; overlapping matches count once."""
    found: list[tuple[str, str]] = []
    taken: list[tuple[int, int]] = []
    for secret in secrets:
        if secret and secret in text:
            found.append(("the key or token that was sent", secret))
            start = text.index(secret)
            taken.append((start, start + len(secret)))
    for what, pattern, check in SHAPES:
        for match in pattern.finditer(text):
            if check is not None and not check(match):
                continue
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            found.append((what, match.group()))
    return found


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential shape (and each of `secrets`) replaced by PLACEHOLDER."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, PLACEHOLDER)
    for _, pattern, check in SHAPES:

        def replace(match: re.Match[str], check: Any = check) -> str:
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
                if isinstance(child, str) and child and secret_field(str(key), request=True)
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


# ----------------------------------------------------------------------------- scanning


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
