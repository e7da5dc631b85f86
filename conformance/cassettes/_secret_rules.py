"""What looks like a credential: the rules of the one scanner and scrubber for cassettes.

`conformance record` and `conformance import --pending` scrub with them before writing and
refuse to write what they still find; `conformance approve` (and `--accept`) refuse a
cassette they find anything in; and `conformance check` fails on one. What they look for:

- credential headers, by name: `Authorization`, `Proxy-Authorization`, `x-api-key`,
  `api-key`, `anthropic-api-key`, `x-goog-api-key`, `x-amz-security-token`, `x-auth-token`,
  `Ocp-Apim-Subscription-Key`, `x-functions-key`, `x-subscription-key`, `x-openai-key`,
  `Cookie`, `Set-Cookie` and any name ending in `api-key`, `token`, `secret`, `password`,
  `credential`, `signature`, `cookie` or `authorization`; and the headers that identify an
  account (`OpenAI-Organization`, `OpenAI-Project`, `anthropic-organization-id`, ...);
- the generic rule: any name with the word `key`, `secret` or `token` whose value looks
  like a credential (`credential_name`, `credential_value`);
- credential query parameters (`code=`, `subscription-key=`, `key=`, `api_key=`, `token=`,
  `access_token=`, `sig=`,
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
scrubbed cassette scans clean while still showing that a value was there. Scanning a
cassette with these rules is `_secrets`; scrubbing text with them, `_scrub`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
        "ocp-apim-subscription-key",
        "x-functions-key",
        "x-subscription-key",
        "x-openai-key",
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
    "subscriptionkey",
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
#: `code`: Azure Functions' key; `subscription-key`: Azure API Management's.
_QUERY_NAMES = frozenset(
    {"key", "token", "sig", "signature", "auth", "xamzcredential", "code", "subscriptionkey"}
)
_REQUEST_FIELD_NAMES = frozenset({"key", "token"})

#: The generic rule: a name with one of these words (split at `-`, `_`, `.`, blanks and
#: lower-to-upper case changes: `x-functions-key`, `subscriptionKey`, `X-Auth-Token`) holds
#: a credential when its value looks like one (`credential_value`). `max_tokens`,
#: `prompt_tokens` and `tokenizer` have no such word; `token_count` has, and its value is a
#: number.
_CREDENTIAL_WORDS = frozenset({"key", "secret", "token"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: A value the generic rule takes for a credential: one run of 12 or more characters
#: without blanks, with a letter and a digit (generated keys have both; words such as
#: `<|endoftext|>` and identifiers such as `reasoning_content` do not).
_CREDENTIAL_VALUE = re.compile(r"(?=[^\s]*[0-9])(?=[^\s]*[A-Za-z])[^\s]{12,}")


def _compact(name: str) -> str:
    return re.sub(r"[-_ .]", "", name.lower())


def credential_name(name: str) -> bool:
    """Whether a name has one of the generic rule's words (`key`, `secret`, `token`)."""
    return any(word.lower() in _CREDENTIAL_WORDS for word in _WORD.findall(name))


def credential_value(value: object) -> bool:
    """Whether a value looks like a credential: a string (never a number, however written)
    of 12 or more characters without blanks, with letters and digits."""
    if not isinstance(value, str) or value == PLACEHOLDER:
        return False
    try:
        float(value)
    except ValueError:
        return _CREDENTIAL_VALUE.fullmatch(value.strip()) is not None
    return False


def secret_header(name: str, value: object = None) -> bool:
    """A header whose value is a credential or identifies the account: named so whatever
    its value, or named like one (the generic rule) with a `value` that looks like one."""
    lower = name.lower()
    if lower.startswith("access-control-"):  # CORS policy (allow-credentials: true), no secret
        return False
    return (
        lower in CREDENTIAL_HEADERS
        or lower in ACCOUNT_HEADERS
        or _compact(name).endswith(_HEADER_ENDINGS)
        or (credential_name(name) and credential_value(value))
    )


def secret_query_parameter(name: str, value: object = None) -> bool:
    compact = _compact(name)
    return (
        compact in _QUERY_NAMES
        or compact.endswith(_HEADER_ENDINGS)
        or (credential_name(name) and credential_value(value))
    )


def secret_field(name: str, value: object = None, *, request: bool) -> bool:
    """A JSON or form field whose string value is a credential. In a response, `token` is a
    logprobs token and `signature` a thinking block's signature: not credentials."""
    compact = _compact(name)
    if compact.endswith(_SECRET_ENDINGS) or (request and compact in _REQUEST_FIELD_NAMES):
        return True
    if not request and compact in _REQUEST_FIELD_NAMES:
        return False
    return credential_name(name) and credential_value(value)


def _basic(match: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>`, not the word in a sentence."""
    try:
        decoded = base64.b64decode(match.group(1) + "==", validate=False).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_QUERY_SHAPE = (
    r"(?i)[?&;](?:key|api[_-]?key|apikey|access[_-]?token|token|sig|x-amz-signature|"
    r"x-amz-credential|x-amz-security-token|code|subscription[_-]?key)="
    r"(?!\[scrubbed\]|%5Bscrubbed%5D)[^&\s\"'#<>]{6,}"
)
#: Checks a match of a shape before it counts (None: every match counts).
ShapeCheck = Callable[[re.Match[str]], bool] | None
#: Shapes of credentials: (what, pattern, optional check of a match).
SHAPES: tuple[tuple[str, re.Pattern[str], ShapeCheck], ...] = tuple(
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
