"""`conformance record`: one real request to a provider, recorded with vcrpy, secrets scrubbed.

The request is built in `provider_request`; scrubbing happens in vcrpy's record hooks
(`scrubbing`), and before anything is written the serialized cassette is scanned for
whatever still looks like a credential (the key and the header values that were sent, known
key shapes, bearer tokens, credential fields); if anything is found the cassette is not
written at all.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import vcr

from conformance._version import __version__
from conformance.capture.provider_request import RecordError, Recording, build_request
from conformance.capture.scrubbing import (
    RequestScrubber,
    ScanningPersister,
    scrub_response,
    secret_values,
)
from conformance.cassettes import _yaml


def record(recording: Recording, out: Path, *, force: bool = False) -> Path:
    """Send the request and write the cassette to `out`; RecordError if that fails or the
    cassette would hold a credential (then nothing is written)."""
    if out.exists() and not force:
        raise RecordError(f"{out} exists; choose another --out, or pass --force to replace it")
    url, headers, body = build_request(recording)
    secrets = secret_values(recording, headers)
    persister = ScanningPersister(secrets)
    recorder = vcr.VCR(
        before_record_request=RequestScrubber(recording, secrets),
        before_record_response=lambda response: scrub_response(response, secrets),
        decode_compressed_response=True,
        record_on_exception=False,
    )
    recorder.register_serializer(_yaml.NAME, _yaml)
    recorder.register_persister(persister)
    if out.exists():
        out.unlink()
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    status = None
    with recorder.use_cassette(str(out), serializer=_yaml.NAME, record_mode="once") as cassette:
        cassette.get_metadata("provenance", _provenance(recording))
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            error.read()
            status = error.code
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise RecordError(f"cannot reach {_public(url)}: {reason}") from None
    if persister.findings:
        listed = "\n".join(f"  {finding}" for finding in persister.findings)
        raise RecordError(
            f"refusing to write {out}: after scrubbing it still holds what looks like a "
            f"credential:\n{listed}\nNothing was written. See docs/cassettes.md (scrubbing)."
        )
    if status is not None and not 200 <= status < 300:
        out.unlink(missing_ok=True)
        raise RecordError(
            f"{_public(url)} answered HTTP {status}; nothing was written (check the key, the "
            "model name and the base URL)"
        )
    return out


def _provenance(recording: Recording) -> dict[str, Any]:
    return {
        "kind": "recorded",
        "server": _public(recording.base_url),
        "provider": recording.provider,
        "model": recording.model,
        "prompt": recording.prompt,
        "stream": recording.stream,
        "recorded": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool": f"conformance record {__version__}",
        **({"note": recording.note} if recording.note else {}),
    }


def _public(url: str) -> str:
    """A URL without user information and query: what may be shown and stored."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
