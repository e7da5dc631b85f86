"""Provider cassettes: recorded HTTP traffic (vcrpy cassettes as any tool stores them, HAR
files) as input to the suite.

- decoding: one decoder per wire family turns a recorded response into chunks
  (`decode_cassette`, `conformance decode`);
- cassette-backed cases: a case's `cassette:` is decoded when the corpus loads
  (`chunks_for_case`, `cassettes_dir_for`);
- replay: `conformance serve` answers HTTP requests from cassettes, and `conformance replay`
  checks Python clients that make their own requests (`HttpCall`), with vcrpy replaying;
- capture: `conformance record` and `conformance approve`.

The workflow is in docs/cassettes.md.
"""

from ._decode import (
    chunks_for_case,
    decode_cassette,
    decode_interaction,
    detect_family,
    guess_family,
)
from ._http import HttpCall
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
    "HttpCall",
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
