"""Every repository path that prose names exists: docs cannot point at a file that moved.

Where: README.md, SPEC.md, ARCHITECTURE.md, docs/**/*.md and tests/README.md (outside fenced
code blocks, which show the reader's own commands and files), the docstrings and comments of
the Python files in conformance/, tests/, benchmarks/, .ci/ and docs/, and the comments of the
top-level configuration (pyproject.toml, mkdocs.yml, .ci/run, action.yml).

What counts as a repository path:

- a path whose first segment is a top-level directory of the repository (`docs/`,
  `conformance/`, `tests/`, `cases/`, `cassettes/`, `benchmarks/`, `examples/`, `.ci/`) or a
  package of conformance/ (`contracts/render.py`, written relative to the package), with
  any `./` or `../` in front;
- any path ending in `.md` (in any directory), and the bare names of Markdown files in
  capitals (`SPEC.md`), of the top-level files (`pyproject.toml`, `action.yml`, ...) and of test
  files (`test_plugin.py`, a file of tests/);
- the module of a `python:` or `python-isolated:` implementation spec, of `python -m`, and any
  dotted name under `conformance` or `tests`: the longest prefix that is a module must exist,
  and the name after it must occur in that module.

A path exists when it does, with the same case, relative to the repository root, to the
directory of the file that names it, or to conformance/. Not checked: paths with a stand-in
in them (`<name>`, `*`, `...`, a one-letter file name such as `x.yaml`), paths that are part of
a URL, and the directories that commands create (OUTPUTS).
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "conformance"

#: The repository's top-level directories.
TOP_DIRS = ("docs", "conformance", "tests", "cases", "cassettes", "benchmarks", "examples", ".ci")
#: The packages of conformance/, which prose names relative to the package
#: (`engine/plans.py`). A package that moves away stays here, so that prose still naming it
#: is caught; a new one is added (test_every_package_is_a_path_root says so).
PACKAGES = (
    "adapters",
    "capture",
    "cassettes",
    "cli",
    "contracts",
    "corpus",
    "engine",
    "fuzz",
    "model",
    "pytest_plugin",
    "reference",
    "replay",
    "schemas",
    "session",
    "site",
    "store",
    "strategies",
    "tools",
    "transport",
)
#: Directories that commands write into, named in prose as places, not repository files
#: (conformance/reports/ is named in full, since `reports/` is the output directory).
OUTPUTS = {
    "reports": "every command's default report directory (README, Set up and run)",
    "cases/pending": "where `conformance approve` and `import --pending` write pending cases",
    "cassettes/captures": "where `conformance approve` copies a capture from elsewhere",
}
TOP_FILES = (
    "pyproject.toml",
    "action.yml",
    "conftest.py",
    "hatch_build.py",
    "tox.ini",
    "mkdocs.yml",
)

_FIRST = "|".join(re.escape(d) for d in sorted({*TOP_DIRS, *PACKAGES}))
#: Path characters, with the stand-ins `<name>`, `*` and `...` allowed in, to be told apart.
_CHARS = r"[\w.<>*/-]"
PATH = re.compile(
    r"(?<![\w./:<>@$~-])"  # not inside a word, a URL, another path or a placeholder
    rf"((?:\.\.?/)*(?:(?:{_FIRST})/{_CHARS}*"
    rf"|[\w.-]+(?:/[\w.-]+)+\.md"
    r"|[A-Z][A-Z_]*\.md|test_\w+\.py|" + "|".join(re.escape(f) for f in TOP_FILES) + r"))"
    r"(?![\w/-])"
)
MODULE = re.compile(
    r"(?:python(?:-isolated)?:|python -m |(?<![\w./:-]))((?:conformance|tests)(?:\.\w+)+)"
)
STAND_IN = re.compile(r"[<>*]|\.\.\.|(?:^|/)\w\.\w+$")


def prose_files() -> list[Path]:
    tops = [ROOT / name for name in ("README.md", "SPEC.md", "ARCHITECTURE.md", "tests/README.md")]
    return [p for p in tops if p.exists()] + sorted((ROOT / "docs").rglob("*.md"))


def python_files() -> list[Path]:
    found = [ROOT / "conftest.py", ROOT / "hatch_build.py"]
    for top in ("conformance", "tests", "benchmarks", ".ci", "docs"):
        found += sorted((ROOT / top).rglob("*.py"))
    return [p for p in found if p.exists() and "node_modules" not in p.parts]


def config_files() -> list[Path]:
    names = ("pyproject.toml", "mkdocs.yml", ".ci/run", "action.yml", "tox.ini")
    return [ROOT / n for n in names if (ROOT / n).exists()]


def markdown_lines(path: Path) -> Iterator[tuple[int, str]]:
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence else marker.group(1)
        elif fence is None:
            yield number, line


_SKIP = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}


def python_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The comments and docstrings of a Python file, line by line, in one pass of the
    tokenizer (parsing every file as well took as long again): a docstring is a statement of
    string literals alone, first in the module or in the body of a `def` or `class`."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    expecting = True  # a docstring may come next
    header = False  # inside a `def` or `class` header, before its colon
    depth = 0
    candidate: list[int] | None = None  # the first and last line of the strings so far
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = token.type
        if kind == tokenize.COMMENT:
            yield token.start[0], token.string
        if kind in _SKIP:
            continue
        if candidate is not None:
            if kind == tokenize.STRING and _plain(token.string):
                candidate[1] = token.end[0]
                continue
            ends = kind in (tokenize.NEWLINE, tokenize.ENDMARKER) or token.string == ";"
            if ends:
                for number in range(candidate[0], candidate[1] + 1):
                    yield number, lines[number - 1]
            candidate = None
            expecting = False
        if kind == tokenize.NEWLINE:
            continue
        if expecting:
            expecting = False
            if kind == tokenize.STRING and _plain(token.string):
                candidate = [token.start[0], token.end[0]]
                continue
        if kind == tokenize.NAME and token.string in ("def", "class") and depth == 0:
            header = True
        elif kind == tokenize.OP:
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
            elif token.string == ":" and header and depth == 0:
                header, expecting = False, True


def _plain(literal: str) -> bool:
    """A str literal whose value is known as it stands (no f-string, no bytes)."""
    prefix = literal[: len(literal) - len(literal.lstrip("rRbBuUfF"))]
    return not set(prefix.lower()) & {"b", "f"}


def comment_lines(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        comment = re.search(r"(?:^|\s)#\s.*", line)
        if comment:
            yield number, comment.group(0)


def named_lines() -> Iterator[tuple[Path, int, str]]:
    for path in prose_files():
        for number, line in markdown_lines(path):
            yield path, number, line
    for path in python_files():
        for number, line in python_lines(path):
            yield path, number, line
    for path in config_files():
        for number, line in comment_lines(path):
            yield path, number, line


def exists_exactly(base: Path, relative: str) -> bool:
    """Whether `relative` exists under `base`, each name with the same case (macOS and
    Windows would otherwise find `<name>.md` for `<NAME>.md`)."""
    here = base
    for part in relative.strip("/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            here = here.parent
            continue
        if not here.is_dir() or part not in os.listdir(here):
            return False
        here = here / part
    return True


def path_exists(path: str, named_in: Path) -> bool:
    bases = [ROOT, named_in.parent, PACKAGE]
    if re.fullmatch(r"test_\w+\.py", path):
        bases.append(ROOT / "tests")
    return any(exists_exactly(base, path) for base in bases)


def is_output(path: str) -> bool:
    bare = re.sub(r"^(?:\.\.?/)+", "", path)
    return any(bare == out or bare.startswith(out + "/") for out in OUTPUTS)


def module_exists(dotted: str) -> bool:
    """The longest prefix of `dotted` that is a module exists, and the next name, if any,
    occurs in it (an attribute, a submodule imported there, or a name it re-exports)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file() and exists_exactly(ROOT, str(candidate.relative_to(ROOT))):
                if end == len(parts):
                    return True
                text = candidate.read_text(encoding="utf-8")
                return re.search(rf"\b{re.escape(parts[end])}\b", text) is not None
    return False


def dead_references() -> list[str]:
    dead = []
    for path, number, line in named_lines():
        where = f"{path.relative_to(ROOT)}:{number}"
        for match in PATH.finditer(line):
            name = match.group(1).rstrip(".")
            if STAND_IN.search(name) or is_output(name):
                continue
            if not path_exists(name, path):
                dead.append(f"{where}: {name}")
        for match in MODULE.finditer(line):
            name = match.group(1).rstrip(".")
            if not module_exists(name):
                dead.append(f"{where}: {name} (a module)")
    return dead


@pytest.mark.slow
def test_every_path_named_in_prose_exists() -> None:
    dead = dead_references()
    assert not dead, (
        f"{len(dead)} reference(s) to paths that do not exist (rules: {Path(__file__).name}):\n"
        + "\n".join(dead)
    )


def test_every_package_is_a_path_root() -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    missing = sorted(packages - set(PACKAGES) - set(OUTPUTS))
    assert not missing, f"add {missing} to PACKAGES in {Path(__file__).name}"


def test_the_map_of_the_tests_names_every_test_file() -> None:
    """tests/README.md's table of test files by area lists each one, so the map stays whole."""
    mapped = (ROOT / "tests" / "README.md").read_text("utf-8")
    unlisted = sorted(
        path.name for path in (ROOT / "tests").glob("test_*.py") if f"`{path.name}`" not in mapped
    )
    assert not unlisted, f"add {unlisted} to the table of test files in tests/README.md"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("see docs/protocol.md for it", ["docs/protocol.md"]),
        ("(`conformance/_grammar.py`)", ["conformance/_grammar.py"]),
        ("see test_no_such_area.py.", ["test_no_such_area.py"]),
        ("the engine (engine/no_such.py)", ["engine/no_such.py"]),
        ("notes in research/peer-policies.md.", ["research/peer-policies.md"]),
        ("`python:tests.no_such_module:Fake`", ["tests.no_such_module (a module)"]),
        ("`conformance.engine.no_such_name`", ["conformance.engine.no_such_name (a module)"]),
        ("docs/PROTOCOL.md, SPEC.md section 3, `cli/__init__.py`", []),
        ("`cassettes/<provider>/<name>.yaml`, `cases/x.yaml`, cases/*.yaml", []),
        ("https://github.com/o/r/blob/main/docs/x.md and reports/run/report.md", []),
        ("`python:my_package.normalizer:make` and vllm/entrypoints/serving.py", []),
    ],
)
def test_the_pattern_finds_paths_and_only_paths(
    line: str, expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "tests.test_docs_paths.named_lines", lambda: iter([(ROOT / "README.md", 1, line)])
    )
    assert [d.split(": ", 1)[1] for d in dead_references()] == expected
