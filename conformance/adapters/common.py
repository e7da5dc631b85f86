"""What every adapter needs: the installed version of the library it drives, and deltas."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any

from ..interface import Delta


def installed_version(*distributions: str) -> str:
    """The version of the first of `distributions` that is installed (a library may be
    published under several names, e.g. pydantic-ai and pydantic-ai-slim)."""
    for distribution in distributions:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "not installed"


def delta(assistant: str | None = "", thinking: str | None = "") -> Delta:
    """A delta from the pieces a library returned; None (nothing for that channel) is ""."""
    return {"assistant": assistant or "", "thinking": thinking or ""}


def native(chunk: Mapping[str, Any]) -> str:
    """The chunk's native reasoning text, "" when it has none."""
    return chunk.get("reasoning") or ""
