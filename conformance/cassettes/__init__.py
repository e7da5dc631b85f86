"""Layer 3 (plug-ins): provider cassettes, recorded HTTP traffic (vcrpy cassettes as any tool
stores them, HAR files) as input to the suite.

- decoding: one decoder per wire family turns a recorded response into chunks
  (`decode_cassette`, `conformance decode`);
- cassette-backed cases: a case's `cassette:` is decoded when the corpus loads
  (`chunks_for_case`, `cassettes_dir_for`);
- recording, importing and approving captures live in `conformance.capture`, replaying
  them to clients in `conformance.replay` (layer 8).

The workflow is in docs/cassettes.md.
"""

from ._decode import (
    chunks_for_case,
    decode_cassette,
    decode_interaction,
    detect_family,
    guess_family,
)
from ._load import (
    CapturePersister,
    Cassette,
    bundled_cassettes_dir,
    cassettes_dir_for,
    iter_cassette_files,
    load_cassette,
    write_cassette,
)
from ._model import FAMILIES, FORMS, CassetteError, Decoded, Interaction

__all__ = [
    "FAMILIES",
    "FORMS",
    "CapturePersister",
    "Cassette",
    "CassetteError",
    "Decoded",
    "Interaction",
    "bundled_cassettes_dir",
    "cassettes_dir_for",
    "chunks_for_case",
    "decode_cassette",
    "decode_interaction",
    "detect_family",
    "guess_family",
    "iter_cassette_files",
    "load_cassette",
    "write_cassette",
]
