"""`conformance import`: captures from the wild (cassettes of other projects' test suites, HAR
files) scanned, summarised, and the interesting ones proposed as pending cases.

For every file (directories are walked) and every interaction: the provider (from the host),
the wire family and framing, whether the response carries native reasoning and whether its
content carries delimiters, and what the reference normalizer makes of it. Interactions that
are not model calls are listed and skipped; files that are not captures too.

With a pending directory, each interesting interaction (native reasoning or tags) whose
chunks are not in the corpus already (compared by a hash of the chunks) becomes a pending
case: the capture is copied as stored into the cassettes directory beside the corpus, its
provenance (`kind: recorded`, the source path, and where the source lies in a git checkout
of a public repository, the repository, path and commit) added as the cassette's metadata,
and a case marked `pending: true` written for review, as `conformance approve` does.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from conformance.cassettes._decode import decode_interaction, guess_family
from conformance.cassettes._load import Cassette, iter_cassette_files, load_cassette
from conformance.cassettes._model import CassetteError, Interaction
from conformance.corpus.casegen import (
    expectations_for,
    guess_taxonomy,
    new_case_id,
    render_case_file,
)
from conformance.corpus.cases import Case, load_corpus, load_file
from conformance.corpus.check import load_retired
from conformance.model.chunks import Chunk
from conformance.model.grammar import PRESETS

#: Hosts -> provider names (the rest are named by their host).
PROVIDERS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("openai.azure.com", "azure"),
    ("services.ai.azure.com", "azure"),
    ("models.inference.ai.azure.com", "azure"),
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("aiplatform.googleapis.com", "vertex"),
    ("api.deepseek.com", "deepseek"),
    ("openrouter.ai", "openrouter"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral"),
    ("api.cohere.com", "cohere"),
    ("api.cohere.ai", "cohere"),
    ("bedrock-runtime", "bedrock"),
    ("api.x.ai", "xai"),
    ("api.together.xyz", "together"),
    ("api.together.ai", "together"),
    ("huggingface.co", "huggingface"),
    ("api.cerebras.ai", "cerebras"),
    ("api.z.ai", "zai"),
    ("open.bigmodel.cn", "zai"),
    ("api.fireworks.ai", "fireworks"),
    ("dashscope", "dashscope"),
    ("api.moonshot", "moonshot"),
    ("api.perplexity.ai", "perplexity"),
    ("snowflakecomputing.com", "snowflake"),
    ("ollama.com", "ollama"),
    ("localhost:11434", "ollama"),
    ("127.0.0.1:11434", "ollama"),
)
_DELIMITERS = tuple(d for pair in PRESETS["think"] for d in pair)


def provider_of(interaction: Interaction) -> str:
    netloc = urlsplit(interaction.uri).netloc.lower()
    for mark, name in PROVIDERS:
        if mark in netloc:
            return name
    return interaction.host or "unknown"


@dataclass(slots=True)
class Finding:
    """One interaction of a capture, or a file or interaction that was skipped."""

    source: Path
    interaction: int | None = None
    format: str | None = None
    method: str = ""
    uri: str = ""
    provider: str | None = None
    family: str | None = None
    form: str | None = None
    chunks: tuple[Chunk, ...] = ()
    #: Why it was skipped (not a capture, not a model call) or did not decode.
    skipped: str | None = None
    error: str | None = None
    reference: Mapping[str, str] | None = None

    @property
    def native(self) -> bool:
        return any(chunk.reasoning for chunk in self.chunks)

    @property
    def tags(self) -> bool:
        content = "".join(chunk.content or "" for chunk in self.chunks)
        return any(delimiter in content for delimiter in _DELIMITERS)

    @property
    def interesting(self) -> bool:
        return self.error is None and self.skipped is None and (self.native or self.tags)

    @property
    def streaming(self) -> bool:
        return self.form not in (None, "json")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": str(self.source), "interaction": self.interaction}
        if self.format:
            data["format"] = self.format
        if self.uri:
            data["request"] = f"{self.method} {self.uri}"
        if self.skipped:
            data["skipped"] = self.skipped
            return data
        data["provider"] = self.provider
        if self.error:
            data["error"] = self.error
            return data
        data.update(
            family=self.family,
            form=self.form,
            chunks=len(self.chunks),
            native_reasoning=self.native,
            tags_in_content=self.tags,
            reference=dict(self.reference or {}),
        )
        return data


def scan(paths: Iterable[Path]) -> Iterator[Finding]:
    """Findings for every capture under `paths` (files, or directories walked)."""
    for path in paths:
        if path.is_dir():
            for file in iter_cassette_files(path):
                yield from _scan_file(file, walked=True)
        else:
            yield from _scan_file(path, walked=False)


def _scan_file(path: Path, *, walked: bool) -> Iterator[Finding]:
    try:
        cassette = load_cassette(path)
    except CassetteError as error:
        if walked and error.interaction is None:
            yield Finding(path, skipped=f"not a capture ({error.message})")
        else:
            yield Finding(path, error=str(error))
        return
    for interaction in cassette.interactions:
        yield scan_interaction(cassette, interaction)


def scan_interaction(cassette: Cassette, interaction: Interaction) -> Finding:
    finding = Finding(
        cassette.path,
        interaction.index,
        cassette.format,
        interaction.method,
        interaction.uri,
        provider=provider_of(interaction),
    )
    if interaction.method != "POST" or guess_family(interaction) is None:
        finding.skipped = "not a model call"
        return finding
    if not 200 <= interaction.status < 300:
        finding.skipped = f"HTTP {interaction.status} {interaction.reason}: not a model response"
        return finding
    try:
        decoded = decode_interaction(interaction)
    except CassetteError as error:
        finding.error = str(error)
        return finding
    finding.family, finding.form, finding.chunks = decoded.family, decoded.form, decoded.chunks
    expected = expectations_for([chunk.to_json() for chunk in decoded.chunks])
    finding.reference = expected["expected"]
    return finding


def chunks_hash(chunks: Sequence[Chunk]) -> str:
    """What decides whether a capture is in the corpus already: its chunks."""
    canonical = json.dumps([c.to_json() for c in chunks], ensure_ascii=False, sort_keys=True)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -------------------------------------------------------------------------- provenance


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a capture came from: a public repository at a commit, or only a path."""

    source: str
    repository: str | None = None
    commit: str | None = None
    path: str | None = None
    license: str | None = None

    def provenance(self, finding: Finding) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "recorded"}
        if self.repository:
            data["repository"] = self.repository
        if self.commit:
            data["commit"] = self.commit
        data["path"] = self.path or self.source
        if self.license:
            data["license"] = self.license
        data["provider"] = finding.provider
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


# ------------------------------------------------------------------------ pending cases


class ImportProblem(Exception):
    """The pending cases cannot be written; the message says why."""


@dataclass(slots=True)
class Written:
    finding: Finding
    cassette: Path | None = None
    case_file: Path | None = None
    #: Why no case was written (a duplicate of a corpus case, ...).
    reason: str | None = None
    case_id: str | None = None


@dataclass(slots=True)
class _Copies:
    directory: Path
    done: dict[Path, Path] = field(default_factory=dict)


def write_pending(
    findings: Sequence[Finding],
    pending_dir: Path,
    cases_dir: Path | None = None,
    *,
    repository: str | None = None,
    commit: str | None = None,
    license: str | None = None,
    source_root: Path | None = None,
) -> list[Written]:
    """Write a pending case for each interesting finding not already in the corpus."""
    cassettes_dir = _cassettes_beside(pending_dir)
    corpus_dirs = [d for d in (cases_dir, pending_dir) if d is not None and d.is_dir()]
    corpus = load_corpus(corpus_dirs) if corpus_dirs else None
    cases = [c for c in (corpus.cases if corpus else ()) if isinstance(c, Case)]
    known = {chunks_hash(case.chunks): case.id for case in cases}
    used = {case.id for case in (corpus.cases if corpus else ())}
    if cases_dir is not None:
        used |= load_retired(cases_dir)
    slugs = {case.slug for case in (corpus.cases if corpus else ())}
    copies = _Copies(cassettes_dir)
    written: list[Written] = []
    for finding in findings:
        if not finding.interesting:
            continue
        digest = chunks_hash(finding.chunks)
        if digest in known:
            written.append(Written(finding, reason=f"already in the corpus as {known[digest]}"))
            continue
        origin = origin_of(finding.source, repository, commit, source_root)
        origin = Origin(origin.source, origin.repository, origin.commit, origin.path, license)
        copy = _copy(copies, finding, origin)
        case_id = new_case_id(used, first="23456789")
        used.add(case_id)
        name = copy.relative_to(cassettes_dir).as_posix()
        slug = _slug(finding, slugs)
        slugs.add(slug)
        path = _write_case(pending_dir, case_id, slug, name, finding, origin)
        known[digest] = case_id
        written.append(Written(finding, copy, path, case_id=case_id))
    return written


def _cassettes_beside(pending_dir: Path) -> Path:
    pending_dir = pending_dir.resolve()
    for ancestor in (pending_dir, *pending_dir.parents[:2]):
        candidate = ancestor / "cassettes"
        if candidate.is_dir() and not (candidate / "__init__.py").exists():
            return candidate
    raise ImportProblem(
        f"no cassettes/ directory beside {pending_dir} or the two directories above it: the "
        "copied captures go there, where the pending cases find them (create it)"
    )


def _copy(copies: _Copies, finding: Finding, origin: Origin) -> Path:
    source = finding.source.resolve()
    if source in copies.done:
        return copies.done[source]
    directory = copies.directory / (finding.provider or "unknown").replace(".", "-")
    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", finding.source.stem).strip("-") or "capture"
    suffix = finding.source.suffix.lower() or ".yaml"
    target, number = directory / f"{stem}{suffix}", 2
    while target.exists():
        target, number = directory / f"{stem}-{number}{suffix}", number + 1
    shutil.copyfile(finding.source, target)
    removed = scrub(target)
    already = load_cassette(target).provenance
    if not already:
        provenance = origin.provenance(finding)
        if removed:
            provenance["scrubbed"] = f"headers removed: {', '.join(removed)}"
        add_provenance(target, provenance)
    problems = _credential_scan(target.read_text("utf-8"))
    if problems:
        target.unlink()
        raise ImportProblem(
            f"{finding.source}: still looks like it holds a credential after scrubbing "
            f"({problems}); nothing was copied. Scrub it by hand first."
        )
    copies.done[source] = target
    return target


def _credential_scan(text: str) -> str:
    from conformance.cassettes._secrets import scan as scan_credentials

    return "; ".join(f"line {f.line}: {f.what}" for f in scan_credentials(text)[:3])


def _slug(finding: Finding, used: set[str]) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", finding.source.stem.lower()).strip("-")
    base = f"recorded-{finding.provider}-{stem}"[:52].rstrip("-")
    if finding.interaction:
        base = f"{base}-{finding.interaction}"
    slug, number = base, 2
    while slug in used:
        slug, number = f"{base}-{number}", number + 1
    return slug


def _write_case(
    pending_dir: Path, case_id: str, slug: str, name: str, finding: Finding, origin: Origin
) -> Path:
    chunks = [chunk.to_json() for chunk in finding.chunks]
    kind = "stream" if finding.streaming else "non-streaming"
    title = f"Recorded {finding.provider} {finding.family} {kind}: {finding.source.stem}"
    case: dict[str, Any] = {
        "id": case_id,
        "slug": slug,
        "title": title[:90],
        "taxonomy": guess_taxonomy(chunks),
        "level": "must",
        "pending": True,
        "cassette": name,
        **({"interaction": finding.interaction} if finding.interaction else {}),
        **expectations_for(chunks),
        "provenance": [{"kind": "cassette", "ref": f"cassettes/{name}"}],
    }
    where = f"{origin.repository}@{origin.commit} " if origin.repository else ""
    case["note"] = f"Recorded: {where}{origin.path or origin.source}"
    header = "\n".join(
        [
            f"# Pending review: written by `conformance import` from {origin.source}",
            f"# (interaction {finding.interaction}: {finding.provider}, {finding.family}, "
            f"{finding.form}), copied to cassettes/{name}.",
            "# Every run reports it as SKIP (pending review) until accepted. Review it against",
            "# SPEC.md (title, taxonomy entry, level, the reference's expected split), then:",
            f"#   conformance approve cassettes/{name} --accept",
            "# The chunks decoded from the capture:",
            *(f"#   {json.dumps(chunk)}" for chunk in chunks[:200]),
            *(["#   ..."] if len(chunks) > 200 else []),
        ]
    )
    pending_dir.mkdir(parents=True, exist_ok=True)
    path = pending_dir / f"{case_id}-{slug}.yaml"
    description = "Captures imported from the wild, waiting for review (docs/cassettes.md)."
    path.write_text(header + "\n" + render_case_file("cassettes", description, [case]), "utf-8")
    _, errors = load_file(path)
    if errors:  # a bug here, not the user's: never leave a broken file behind
        path.unlink()
        raise ImportProblem("the pending case did not load: " + "; ".join(map(str, errors)))
    return path


def summary_line(finding: Finding) -> str:
    """One line of `conformance import`'s report."""
    where = f"{finding.source}"
    if finding.interaction is not None:
        where += f" #{finding.interaction}"
    if finding.skipped:
        request = f" {finding.method} {finding.uri}" if finding.uri else ""
        return f"{where}: skipped:{request} ({finding.skipped})"
    if finding.error:
        return f"{where}: {finding.provider}: error: {finding.error}"
    carries = [
        name for name, flag in (("native", finding.native), ("tags", finding.tags)) if flag
    ] or ["no reasoning"]
    reference = finding.reference or {}
    return (
        f"{where}: {finding.provider} {finding.family} ({finding.form}), "
        f"{len(finding.chunks)} chunks, {'+'.join(carries)}; reference: "
        f"assistant {_excerpt(reference.get('assistant', ''))}, "
        f"thinking {_excerpt(reference.get('thinking', ''))}"
    )


def _excerpt(text: str, limit: int = 40) -> str:
    shown = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{len(text)} chars {json.dumps(shown, ensure_ascii=False)}"
