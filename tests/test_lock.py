"""The locked test environment (README, Tests): requirements/test.txt and docs.txt pin, with
hashes, everything pyproject.toml asks for the tests and the docs site, at versions it admits;
the README's set-up and .ci/run install from them; what a report's text depends on is a
dependency of the project, not an accident of what else is installed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCKS = {"test": ROOT / "requirements" / "test.txt", "docs": ROOT / "requirements" / "docs.txt"}

_PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s*\\\n\s+--hash=sha256:[0-9a-f]{64})*)", re.M
)


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]


def _pins(lock: Path) -> dict[str, tuple[str, int]]:
    """Each pinned package of a lock: its version and how many hashes it carries."""
    text = lock.read_text("utf-8")
    pins = {canonicalize_name(m[1]): (m[2], m[3].count("--hash=")) for m in _PIN.finditer(text)}
    requirement_lines = [line for line in text.splitlines() if line and line[0].isalnum()]
    assert len(pins) == len(requirement_lines), "a requirement line the pattern does not read"
    return pins


def _requirements(extra: str) -> list[Requirement]:
    """What an install of `.[extra]` asks for directly: the dependencies and the extra's,
    an extra of this project (`reasoning-conformance[...]`) unfolded."""
    project = _project()
    own = canonicalize_name(project["name"])
    wanted, extras, seen = list(project["dependencies"]), [extra], set()
    while extras:
        name = extras.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in project["optional-dependencies"][name]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == own:
                extras.extend(requirement.extras)
            else:
                wanted.append(text)
    return [Requirement(text) for text in wanted]


@pytest.mark.parametrize("extra", sorted(LOCKS))
def test_the_lock_pins_every_requirement_at_an_admitted_version_with_hashes(extra: str) -> None:
    pins = _pins(LOCKS[extra])
    for requirement in _requirements(extra):
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue  # not for this Python or platform
        name = canonicalize_name(requirement.name)
        assert name in pins, (
            f"{requirement} is not in {LOCKS[extra].name}: run requirements/refresh"
        )
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{LOCKS[extra].name} pins {name}=={version}, outside {requirement}: "
            "run requirements/refresh"
        )
    assert all(hashes for _, hashes in pins.values()), "a pin without hashes"


def test_the_two_locks_pin_what_they_share_alike() -> None:
    test, docs = _pins(LOCKS["test"]), _pins(LOCKS["docs"])
    differ = {name: (test[name][0], docs[name][0]) for name in test.keys() & docs.keys()}
    assert {name: pair for name, pair in differ.items() if pair[0] != pair[1]} == {}


def test_the_locks_name_no_index_and_how_to_refresh_them() -> None:
    for lock in LOCKS.values():
        text = lock.read_text("utf-8")
        assert "#    requirements/refresh\n" in text
        assert not re.search(r"^--(?:extra-)?index-url|^--find-links|^--trusted-host", text, re.M)
    assert (ROOT / "requirements" / "refresh").stat().st_mode & 0o111


def test_the_readme_and_ci_install_the_tests_from_the_lock() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    tests = readme[readme.index("## Tests") :]
    block = re.search(r"```\n(.*?)```", tests, re.S)
    assert block is not None
    commands = block.group(1).splitlines()
    assert commands[:2] == [
        "pip install --require-hashes -r requirements/test.txt",
        "pip install --no-deps --no-build-isolation -e .",
    ]
    run = (ROOT / ".ci" / "run").read_text("utf-8")
    assert (
        "pip install -q --require-hashes -r requirements/test.txt -r requirements/docs.txt" in run
    )
    assert "pip install -q --no-deps --no-build-isolation -e ." in run
    # The unpinned lane comes last and names itself when it fails.
    assert run.index("unpinned lane FAILED") > run.index("tier python -m pytest -n 2 -m slow")


def test_what_the_reports_text_depends_on_is_a_dependency_of_the_project() -> None:
    # tabulate measures the report's marks with wcwidth when it can import it: before, only
    # the test extra had it, so report.md was laid out differently on a machine without it
    # (the pinned report.md failed in a fresh environment).
    base = {
        canonicalize_name(Requirement(text).name): Requirement(text)
        for text in _project()["dependencies"]
    }
    assert "widechars" in base["tabulate"].extras
    assert "wcwidth" in _pins(LOCKS["test"])
