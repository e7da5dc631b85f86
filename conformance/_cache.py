"""Where the package keeps what it can make again: validated case files, the matrix's results,
libraries' environments of other releases, llama.cpp's build.

`$CONFORMANCE_CACHE_DIR`, else `$XDG_CACHE_HOME/reasoning-conformance`, else
`~/.cache/reasoning-conformance`; `CONFORMANCE_CACHE_DIR=off` turns caching off (`cache_dir()`
is then None, and what must live somewhere, `home()`, stays in the default place).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = "reasoning-conformance"


def home() -> Path:
    """The default cache directory, whatever `CONFORMANCE_CACHE_DIR` says."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / PROJECT


def cache_dir() -> Path | None:
    """The cache directory, or None when `CONFORMANCE_CACHE_DIR=off`."""
    setting = os.environ.get("CONFORMANCE_CACHE_DIR")
    if setting == "off":
        return None
    return Path(setting) if setting else home()
