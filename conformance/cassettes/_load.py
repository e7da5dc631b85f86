"""Loading cassettes with vcrpy, and finding the cassettes directory a case file refers to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from vcr.persisters.filesystem import (
    CassetteDecodeError,
    CassetteNotFoundError,
    FilesystemPersister,
)
from vcr.request import Request

from . import _yaml
from ._model import CassetteError, Interaction


@dataclass(frozen=True, slots=True)
class Cassette:
    path: Path
    interactions: tuple[Interaction, ...]
    #: vcrpy's `metadata:` mapping; the suite keeps `provenance` there.
    metadata: Mapping[str, Any] = field(default_factory=dict)

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
    """Read a vcrpy cassette. Every problem is a CassetteError naming the file."""
    try:
        loaded = FilesystemPersister.load_cassette(path, serializer=_yaml)
    except CassetteNotFoundError:
        reason = "is empty" if path.is_file() else "does not exist"
        raise CassetteError(path, f"the cassette {reason}") from None
    except CassetteDecodeError:
        raise CassetteError(path, "the cassette is not UTF-8 text") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise CassetteError(path, f"malformed YAML{at}: {problem}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CassetteError(
            path,
            f"not a vcrpy cassette ({type(error).__name__}: {error}); a cassette is a mapping "
            "with `interactions:`, each with a `request` and a `response`",
        ) from None
    requests, responses, *rest = loaded
    metadata = rest[0] if rest and isinstance(rest[0], Mapping) else {}
    interactions = tuple(
        _interaction(path, index, request, response)
        for index, (request, response) in enumerate(zip(requests, responses, strict=True))
    )
    if not interactions:
        raise CassetteError(path, "the cassette has no interactions")
    return Cassette(path, interactions, metadata)


def _interaction(path: Path, index: int, request: Any, response: Any) -> Interaction:
    try:
        status = response["status"]
        body = response["body"]["string"]
        headers = response.get("headers") or {}
        code, reason = int(status["code"]), str(status.get("message", ""))
    except (KeyError, TypeError, ValueError) as error:
        raise CassetteError(
            path,
            f"the response has no {error} (vcrpy stores `status: {{code, message}}`, "
            "`headers` and `body: {string}`)",
            interaction=index,
        ) from None
    if body is None:
        body = b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    request_body = request.body
    if isinstance(request_body, str):
        request_body = request_body.encode("utf-8")
    return Interaction(
        cassette=path,
        index=index,
        method=str(request.method).upper(),
        uri=str(request.uri),
        request_headers={str(k).lower(): str(v) for k, v in request.headers.items()},
        request_body=request_body if isinstance(request_body, bytes) else None,
        status=code,
        reason=reason,
        response_headers={
            str(name).lower(): tuple(
                str(v) for v in (value if isinstance(value, list) else [value])
            )
            for name, value in headers.items()
        },
        body=body,
    )


def write_cassette(
    path: Path,
    exchanges: Sequence[Mapping[str, Any]],
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Write a cassette in vcrpy's format with vcrpy's persister (and the readable layout),
    for cassettes written from a documented format rather than recorded. Each exchange has
    `uri`, `body` (the response body) and optionally `method` (POST), `request_body`,
    `request_headers`, `status` (200), `reason` ("OK"), `content_type` and `headers`."""
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
