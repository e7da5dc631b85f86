"""Where an imported capture came from, and the copy made of it: its credential headers
removed and its provenance added, leaving what was recorded as it was."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a capture came from: a public repository at a commit, or only a path."""

    source: str
    repository: str | None = None
    commit: str | None = None
    path: str | None = None
    license: str | None = None

    def provenance(self, provider: str | None) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "recorded"}
        if self.repository:
            data["repository"] = self.repository
        if self.commit:
            data["commit"] = self.commit
        data["path"] = self.path or self.source
        if self.license:
            data["license"] = self.license
        data["provider"] = provider
        data["note"] = "kept as recorded; imported with `conformance import`"
        return data


_GITHUB = re.compile(r"github\.com[:/]+([^/]+/[^/]+?)(?:\.git)?/?$")


def origin_of(
    path: Path,
    repository: str | None = None,
    commit: str | None = None,
    source_root: Path | None = None,
) -> Origin:
    """The capture's repository, commit and path in it, from the git checkout it lies in
    (overridden by `repository` and `commit` when given; with `source_root`, the path is
    relative to it, for captures copied out of a checkout)."""
    found_repo = found_commit = relative = None
    top = _git(path.parent, "rev-parse", "--show-toplevel")
    if source_root is not None:
        relative = path.resolve().relative_to(source_root.resolve()).as_posix()
    elif top:
        relative = path.resolve().relative_to(Path(top).resolve()).as_posix()
        found_commit = _git(path.parent, "rev-parse", "HEAD")
        remote = _git(path.parent, "remote", "get-url", "origin") or ""
        match = _GITHUB.search(remote)
        found_repo = match.group(1) if match else (remote or None)
    return Origin(
        source=str(path),
        repository=repository or found_repo,
        commit=commit or found_commit,
        path=relative,
    )


def _git(where: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


#: Headers removed from copied captures, as `conformance record` removes them.
SCRUBBED_HEADERS = frozenset(
    (
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "x-goog-user-project",
        "anthropic-organization-id",
    )
)


def scrub(path: Path) -> list[str]:
    """Remove credential, cookie, organization and project headers from a copied capture,
    leaving everything else as stored; the names removed."""
    text = path.read_text("utf-8")
    if text.lstrip().startswith("{"):
        return _scrub_json(path, text)
    removed: list[str] = []
    kept: list[str] = []
    skipping_indent: int | None = None
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        if skipping_indent is not None:
            if line.strip() and (
                indent > skipping_indent
                or (indent == skipping_indent and line.lstrip().startswith("- "))
            ):
                continue
            skipping_indent = None
        name, colon, rest = line.strip().partition(":")
        if colon and not rest.strip() and name.lower() in SCRUBBED_HEADERS:
            skipping_indent = indent
            removed.append(name.lower())
            continue
        kept.append(line)
    if removed:
        path.write_text("\n".join(kept), "utf-8")
    return sorted(set(removed))


def _scrub_json(path: Path, text: str) -> list[str]:
    document = json.loads(text)
    removed: set[str] = set()

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            if isinstance(value.get("headers"), dict):
                for name in list(value["headers"]):
                    if name.lower() in SCRUBBED_HEADERS:
                        removed.add(name.lower())
                        del value["headers"][name]
            if isinstance(value.get("headers"), list):  # HAR
                before = value["headers"]
                value["headers"] = [
                    h
                    for h in before
                    if not (
                        isinstance(h, dict) and str(h.get("name", "")).lower() in SCRUBBED_HEADERS
                    )
                ]
                removed.update(
                    str(h.get("name")).lower() for h in before if h not in value["headers"]
                )
            for item in value.values():
                clean(item)
        elif isinstance(value, list):
            for item in value:
                clean(item)
        return value

    clean(document)
    if removed:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return sorted(removed)


def add_provenance(path: Path, provenance: Mapping[str, Any]) -> None:
    """Add `metadata: {provenance: ...}` to a copied capture without touching what was
    recorded: appended as text to YAML, inserted before the last `}` of JSON."""
    text = path.read_text("utf-8")
    if text.lstrip().startswith("{"):
        end = text.rstrip().rfind("}")
        addition = json.dumps({"provenance": dict(provenance)}, indent=2, ensure_ascii=False)
        text = text[:end].rstrip() + ',\n"metadata": ' + addition + "\n" + text[end:]
    else:
        block = yaml.safe_dump(
            {"metadata": {"provenance": dict(provenance)}},
            sort_keys=False,
            allow_unicode=True,
            width=100,
        )
        if not text.endswith("\n"):
            text += "\n"
        # Before a document end marker (`...`), which PyYAML writes after some block scalars;
        # never strip trailing newlines: a keep-chomped (`|+`) body owns them.
        lines = text.split("\n")
        if lines[-2:] == ["...", ""]:
            text = "\n".join(lines[:-2]) + "\n" + block + "...\n"
        else:
            text += block
    path.write_text(text, "utf-8")
