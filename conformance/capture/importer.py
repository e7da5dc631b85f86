"""`conformance import`: captures from the wild (cassettes of other projects' test suites, HAR
files) scanned and summarised; `pending` proposes the interesting ones as pending cases.

For every file (directories are walked) and every interaction: the provider (from the host),
the wire family and framing, whether the response carries native reasoning and whether its
content carries delimiters, and what the reference normalizer makes of it. Interactions that
are not model calls are listed and skipped; files that are not captures too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.cassettes._decode import decode_interaction, guess_family
from conformance.cassettes._load import Cassette, iter_cassette_files, load_cassette
from conformance.cassettes._model import CassetteError, Interaction
from conformance.corpus.casegen import (
    expectations_for,
)
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
