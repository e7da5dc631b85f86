"""Scrubbing: credentials replaced by `PLACEHOLDER` in text and in JSON request bodies, by
the rules of `_secret_rules`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ._secret_rules import PLACEHOLDER, SHAPES, ShapeCheck, secret_field


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
