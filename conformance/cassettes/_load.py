"""Loading cassettes (any capture format, `_formats`), and finding the cassettes directory a
case file refers to."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ._exchange import FormatProblem, RawExchange
from ._formats import read_capture
from ._model import CassetteError, Interaction
from ._yaml import ShapeProblem


@dataclass(frozen=True, slots=True)
class Cassette:
    path: Path
    interactions: tuple[Interaction, ...]
    #: vcrpy's `metadata:` mapping; the suite keeps `provenance` there.
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: How it was stored (`_formats.FORMATS`): vcrpy-yaml, vcrpy-json, pydantic-ai, har...
    format: str = "vcrpy-yaml"

    def interaction(self, index: int) -> Interaction:
        if not 0 <= index < len(self.interactions):
            raise CassetteError(
                self.path,
                f"has {len(self.interactions)} interaction(s); there is no interaction {index}",
            )
        return self.interactions[index]

    @property
    def provenance(self) -> Mapping[str, Any] | None:
        value = self.metadata.get("provenance")
        return value if isinstance(value, Mapping) else None


def load_cassette(path: Path) -> Cassette:
    """Read a capture, whatever tool stored it (see `_formats`: vcrpy YAML or JSON,
    pydantic-ai's `parsed_body`, Ruby VCR, HAR 1.2; bodies as text, `!!binary` or base64,
    compressed or not). Every problem is a CassetteError naming the file."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise CassetteError(path, "is a directory, not a cassette") from None
    except OSError:
        raise CassetteError(path, "the cassette does not exist") from None
    try:
        capture = read_capture(data)
    except UnicodeDecodeError:
        raise CassetteError(path, "the cassette is not UTF-8 text") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise CassetteError(path, f"malformed YAML{at}: {problem}") from None
    except ShapeProblem as problem:
        at = f" at line {problem.line}" if problem.line else ""
        raise CassetteError(path, f"refused{at}: {problem.message}") from None
    except FormatProblem as problem:
        message = problem.message
        if message == "the file is empty":
            message = "the cassette is empty"
        raise CassetteError(path, message, interaction=problem.interaction) from None
    interactions = tuple(
        _interaction(path, index, exchange) for index, exchange in enumerate(capture.exchanges)
    )
    if not interactions:
        raise CassetteError(path, "the cassette has no interactions")
    return Cassette(path, interactions, capture.metadata, capture.format)


def _interaction(path: Path, index: int, exchange: RawExchange) -> Interaction:
    return Interaction(
        cassette=path,
        index=index,
        method=exchange.method,
        uri=exchange.uri,
        request_headers={k: ", ".join(v) for k, v in exchange.request_headers.items()},
        request_body=exchange.request_body,
        status=exchange.status,
        reason=exchange.reason,
        response_headers={
            k: tuple(v)
            for k, v in exchange.response_headers.items()
            # The body is held decoded: the encodings undone are no longer true of it.
            if not (k == "content-encoding" and exchange.decompressed)
        },
        body=exchange.body,
    )


def iter_cassette_files(directory: Path) -> Iterator[Path]:
    """The files under `directory` that may hold captures (by suffix: .yaml, .yml, .json,
    .har), in a stable order; whether each is one is decided by its content when loaded.
    Hidden directories are skipped. pytest-recording's layout
    (`cassettes/<test module>/<test>.yaml`) is one directory per module."""
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).parts
        if any(part.startswith(".") for part in relative):
            continue
        if path.is_file() and path.suffix.lower() in CAPTURE_SUFFIXES:
            yield path


#: The suffixes `iter_cassette_files` looks at.
CAPTURE_SUFFIXES = (".yaml", ".yml", ".json", ".har")


class CapturePersister:
    """A vcrpy persister that loads any capture `load_cassette` reads, so that vcrpy
    replays pydantic-ai cassettes, HAR files and compressed bodies as it does its own
    (`vcr.VCR().register_persister(CapturePersister)`). It never writes."""

    @staticmethod
    def load_cassette(cassette_path: str, serializer: Any) -> tuple[list[Any], list[Any]]:
        del serializer  # the format is read from the content
        # vcrpy is imported only here and when writing: importing it imports every HTTP
        # client it patches, a large part of a run's startup otherwise.
        from vcr.persisters.filesystem import CassetteDecodeError, CassetteNotFoundError
        from vcr.request import Request

        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            cassette = load_cassette(path)
        except CassetteError as error:
            raise CassetteDecodeError(str(error)) from None
        requests, responses = [], []
        for interaction in cassette.interactions:
            requests.append(
                Request(
                    interaction.method,
                    interaction.uri,
                    interaction.request_body,
                    {k: [v] for k, v in interaction.request_headers.items()},
                )
            )
            headers = {k: list(v) for k, v in interaction.response_headers.items()}
            if "content-length" in headers:
                headers["content-length"] = [str(len(interaction.body))]
            responses.append(
                {
                    "status": {"code": interaction.status, "message": interaction.reason},
                    "headers": headers,
                    "body": {"string": interaction.body},
                }
            )
        return requests, responses

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: Any, serializer: Any) -> None:
        raise CassetteError(Path(cassette_path), "replaying never writes a cassette")


def write_cassette(
    path: Path,
    exchanges: Sequence[Mapping[str, Any]],
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Write a cassette in vcrpy's format with vcrpy's persister (and the readable layout),
    for cassettes written from a documented format rather than recorded. Each exchange has
    `uri`, `body` (the response body) and optionally `method` (POST), `request_body`,
    `request_headers`, `status` (200), `reason` ("OK"), `content_type` and `headers`."""
    from vcr.persisters.filesystem import FilesystemPersister
    from vcr.request import Request

    from . import _yaml

    requests, responses = [], []
    for exchange in exchanges:
        request_headers = {k: [v] for k, v in (exchange.get("request_headers") or {}).items()}
        requests.append(
            Request(
                exchange.get("method", "POST"),
                exchange["uri"],
                exchange.get("request_body"),
                request_headers,
            )
        )
        headers: dict[str, list[str]] = {}
        if "content_type" in exchange:
            headers["content-type"] = [exchange["content_type"]]
        for name, value in (exchange.get("headers") or {}).items():
            headers[name] = list(value) if isinstance(value, list | tuple) else [value]
        responses.append(
            {
                "status": {
                    "code": exchange.get("status", 200),
                    "message": exchange.get("reason", "OK"),
                },
                "headers": headers,
                "body": {"string": exchange["body"]},
            }
        )
    cassette: dict[str, Any] = {"requests": requests, "responses": responses}
    if provenance:
        cassette["metadata"] = {"provenance": dict(provenance)}
    FilesystemPersister.save_cassette(path, cassette, serializer=_yaml)
    return path


def bundled_cassettes_dir() -> Path:
    """The cassettes shipped with the package, or the checkout's `cassettes/`."""
    packaged = Path(str(resources.files("conformance"))) / "_cassettes"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "cassettes"


def cassettes_dir_for(case_file: Path) -> Path:
    """Where a case file's `cassette:` paths are relative to: the nearest `cassettes/`
    directory in the case file's directory or the two above it (`cases/x.yaml` and
    `cases/pending/x.yaml` -> `cassettes/`); for the packaged corpus, the packaged
    cassettes; otherwise the bundled ones."""
    case_file = case_file.resolve()
    packaged_cases = Path(str(resources.files("conformance"))) / "_corpus"
    if case_file.is_relative_to(packaged_cases.resolve()):
        return bundled_cassettes_dir()
    for ancestor in case_file.parents[:3]:
        candidate = ancestor / "cassettes"
        # The package's own `conformance/cassettes/` holds code, not cassettes.
        if candidate.is_dir() and not (candidate / "__init__.py").exists():
            return candidate
    return bundled_cassettes_dir()
