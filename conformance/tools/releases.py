"""A package's releases, oldest first, as its registry's own client lists them: `pip index
versions NAME` for Python packages (final releases, in the index pip is set up to use) and
`npm view NAME versions --json` for npm packages (pre-releases left out)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable

from conformance.errors import UsageError
from conformance.tools.envs import Package

_AVAILABLE = re.compile(r"^Available versions:\s*(.+)$", re.MULTILINE)
#: A final release (PEP 440 and semver alike), perhaps a post-release: `1.77.2.post1`, `6.0.10`.
#: Pre-releases, dev releases and local versions do not match.
_FINAL = re.compile(r"^v?(\d+(?:\.\d+)*)(?:[.-]?post(\d+))?$")


def releases(pkg: Package) -> list[str]:
    """`pkg`'s final releases, oldest first; UsageError when the registry knows none."""
    if pkg.ecosystem == "npm":
        command = ["npm", "view", pkg.name, "versions", "--json"]
    else:
        command = [sys.executable, "-m", "pip", "index", "versions", pkg.name]
        command.append("--disable-pip-version-check")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    found = parse_npm(done.stdout) if pkg.ecosystem == "npm" else parse_pip(done.stdout)
    if done.returncode != 0 or not found:
        problem = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UsageError(f"cannot list the releases of {pkg.name}: {problem[0]}")
    return found


def parse_pip(text: str) -> list[str]:
    """The releases in `pip index versions` output, oldest first."""
    match = _AVAILABLE.search(text)
    if match is None:
        return []
    return ordered(v.strip() for v in match.group(1).split(","))


def parse_npm(text: str) -> list[str]:
    """The final releases in `npm view NAME versions --json` output, oldest first."""
    try:
        listed = json.loads(text or "[]")
    except ValueError:
        return []
    if isinstance(listed, str):  # a package with one release
        listed = [listed]
    return ordered(v for v in listed if isinstance(v, str) and "-" not in v)


def ordered(versions: Iterable[str]) -> list[str]:
    """The final releases among `versions`, oldest first (by their numbers, not as text)."""
    keyed = []
    for text in versions:
        match = _FINAL.match(text.strip())
        if match is not None:
            numbers = tuple(int(part) for part in match.group(1).split("."))
            # 1.0 and 1.0.0 are one release: trailing zeros do not order.
            while len(numbers) > 1 and numbers[-1] == 0:
                numbers = numbers[:-1]
            keyed.append(((numbers, int(match.group(2) or -1)), text.strip()))
    return [text for _, text in sorted(keyed)]
