"""Where the llama.cpp adapters' program lives and which sources it was built from.

The program (conformance/adapters/llamacpp/) is built by `python -m
conformance.adapters.llamacpp_build` into a cache outside the checkout, keyed by the
llama-cpp-python release whose vendored llama.cpp it links:
`<cache>/llamacpp/<version>/bin/conformance_llamacpp`, with that llama.cpp's chat templates in
`<cache>/llamacpp/<version>/templates/`. Next to the program, a stamp holds the digest of the
sources it was built from, so a build after the sources changed (or from another checkout)
rebuilds it and a build with the same sources does nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from conformance._cache import home

#: The llama-cpp-python release whose vendored llama.cpp is built.
VERSION = "0.3.36"
#: The program's sources, in this package.
SOURCE_DIR = Path(__file__).parent / "llamacpp"
PROGRAM = "conformance_llamacpp"


def cache_root() -> Path:
    # An installed program rather than a cache entry: CONFORMANCE_CACHE_DIR (which tests and
    # users point elsewhere, or turn off) does not move it.
    return home() / "llamacpp"


def version_dir(version: str = VERSION) -> Path:
    return cache_root() / version


def binary_path(version: str = VERSION) -> Path:
    return version_dir(version) / "bin" / PROGRAM


def templates_dir(version: str = VERSION) -> Path:
    return version_dir(version) / "templates"


def stamp_path(version: str = VERSION) -> Path:
    return binary_path(version).with_suffix(".sources")


def build_command() -> str:
    return "python -m conformance.adapters.llamacpp_build"


def sources_digest(source_dir: Path = SOURCE_DIR) -> str:
    """sha256 over the program's source files, by name and content (not by path, so two
    checkouts of the same sources share one build)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in source_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(source_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def is_current(version: str = VERSION, source_dir: Path = SOURCE_DIR) -> bool:
    """The program is built, from these sources."""
    stamp = stamp_path(version)
    return (
        binary_path(version).is_file()
        and stamp.is_file()
        and stamp.read_text(encoding="utf-8").strip() == sources_digest(source_dir)
    )
