"""Where an imported capture came from, and the copy made of it: its credentials removed by
the rules of the one scanner and its provenance added, leaving what was recorded as it was
wherever no credential sits."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.cassettes._scrub import scrub_capture
from conformance.cassettes._secret_rules import secret_header
from conformance.cassettes._yaml import guarded_json, guarded_load, serialize


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


def scrub(text: str) -> tuple[str, list[str]]:
    """A capture's text with its credential, cookie, organization and project headers
    removed, leaving everything else as stored where the scrub can work on lines (block
    YAML); the names removed. Where a header sits otherwise (a flow mapping), or a
    credential sits in a query string or a body, the scan after this finds it and
    `scrub_structure` takes over."""
    if text.lstrip().startswith(("{", "[")):
        return scrub_structure(text)
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
        if colon and not rest.strip() and secret_header(name):
            skipping_indent = indent
            removed.append(name.lower())
            continue
        kept.append(line)
    return "\n".join(kept), sorted(set(removed))


def scrub_structure(text: str) -> tuple[str, list[str]]:
    """A capture scrubbed through its structure (`scrub_capture`: headers, query strings,
    request bodies, in every form) and written again, as JSON if it was JSON."""
    try:
        document, json_form = guarded_json(text), True
    except json.JSONDecodeError:  # YAML, flow style included
        document, json_form = guarded_load(text), False
    before = copy.deepcopy(document)
    removed = scrub_capture(document)
    if document == before:
        return text, removed
    if json_form:
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n", removed
    return serialize(document), removed


def with_provenance(text: str, provenance: Mapping[str, Any]) -> str:
    """A capture's text with `metadata: {provenance: ...}` added, without touching what was
    recorded: appended as text to YAML, inserted before the last `}` of JSON."""
    if text.lstrip().startswith("{"):
        end = text.rstrip().rfind("}")
        addition = json.dumps({"provenance": dict(provenance)}, indent=2, ensure_ascii=False)
        return text[:end].rstrip() + ',\n"metadata": ' + addition + "\n" + text[end:]
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
        return "\n".join(lines[:-2]) + "\n" + block + "...\n"
    return text + block
