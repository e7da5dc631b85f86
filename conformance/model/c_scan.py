"""Which scan of exact grammars runs: the C scan (`_scan.c`), built at install time when a C
compiler is present, or the regular expressions of `grammar.py` standing in for it. Loaded
once, on import; `C_SCAN_STATUS` says which and why."""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

#: Why the C scan is or is not used: `built` (it is), `off` (CONFORMANCE_PURE_PYTHON asked
#: for the regular expressions), `missing` (not built: no C compiler at install time),
#: `stale` (an in-place build older than its source, in a checkout).
ScanStatus = Literal["built", "off", "missing", "stale"]
#: The scan's source: in a checkout (editable install) only, wheels carry no C.
SOURCE = Path(__file__).with_name("_scan.c")


def load_c_scan() -> tuple[ModuleType | None, ScanStatus]:
    """The C scan of exact grammars (`_scan.c`): built at install time when a C compiler is
    present, and used unless CONFORMANCE_PURE_PYTHON is set (to a non-empty value)."""
    if os.environ.get("CONFORMANCE_PURE_PYTHON"):
        return None, "off"
    try:
        # Through sys.modules, not the package's attribute: a test can block the import.
        module = importlib.import_module("conformance.model._scan")
    except ImportError:
        return None, "missing"
    built = Path(module.__file__ or "")
    # An editable install builds next to the source and never again by itself: after an
    # edit of `_scan.c` the old build would answer for the new source.
    if SOURCE.exists() and built.exists() and built.stat().st_mtime < SOURCE.stat().st_mtime:
        warnings.warn(
            f"the C scan {built.name} is older than {SOURCE}: scanning with regular "
            "expressions; run `pip install -e .` again to rebuild it",
            RuntimeWarning,
            stacklevel=2,
        )
        return None, "stale"
    return module, "built"


C_SCAN, C_SCAN_STATUS = load_c_scan()


def c_scan_of(
    pairs: tuple[tuple[str, str], ...], markers: tuple[str, ...], anchor: str
) -> Callable[[str], Any] | None:
    """`Grammar.scan` of an exact grammar in C, when the module is built and the grammar is
    within its bounds."""
    if C_SCAN is None:
        return None
    # Longest first, the first of equals first: the order of `delimiter`'s alternatives.
    ordered = [open_ for open_, _ in pairs] + [close for _, close in pairs] + list(markers)
    needles = tuple(sorted(ordered, key=len, reverse=True))
    if len(needles) > C_SCAN.MAX_NEEDLES or sum(map(len, needles)) > C_SCAN.MAX_CHARS:
        return None
    closing = {close for _, close in pairs} | set(markers)
    return partial(C_SCAN.scan, needles, tuple(d in closing for d in needles), anchor)
