"""What many test files share: the bundled corpus loaded once per process, and the
`conformance` command, in this process (fast) or as a real process.

Run the command in this process (`cli`) unless the process itself is under test: its exit
status through the interpreter, its standard streams as a pipe, signals, a server that has to
outlive the call. `cli` goes through click's CliRunner, which is what the console script
calls, so options, output and exit statuses are the same; an exception that escapes the
command is raised in the test, never mistaken for exit status 1.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conformance._cache import cache_dir
from conformance.cli.main import main
from conformance.corpus.cases import bundled_cases_dir, load_corpus
from conformance.model.cases import Corpus
from conformance.model.results import Run
from conformance.reports import write_reports

ROOT = Path(__file__).resolve().parent.parent

#: How the browser tests start Debian's Chromium: headless, without the network it would
#: reach for updates and sync, as root in CI.
HEADLESS_CHROMIUM = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def chromium_path() -> str:
    """The installed Chromium; a skip without one, a failure in CI, where it must run."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    message = "chromium is not installed (apt-get install -y chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so the browser test must run")
    pytest.skip(message)


#: How the tests start the command as a real process: this interpreter, this checkout.
COMMAND = (sys.executable, "-m", "conformance")
#: The console script `pip install` wrote next to this interpreter; unlike `python -m`, it
#: does not put the current directory on sys.path.
SCRIPT = str(Path(sys.executable).parent / "conformance")


@functools.cache
def bundled_corpus() -> Corpus:
    """The bundled corpus, loaded once per test process (cases are frozen)."""
    return load_corpus([bundled_cases_dir()])


@dataclass(frozen=True)
class Ran:
    """What a `conformance` command did, named as `subprocess.CompletedProcess` names it."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def cli(*args: str | Path, cwd: Path = ROOT, env: Mapping[str, str] | None = None) -> Ran:
    """`conformance ARGS` run in this process, in `cwd`, with `env` added to the environment."""
    argv = tuple(map(str, args))
    with contextlib.chdir(cwd), _environment(env):
        result = CliRunner().invoke(main, argv, prog_name="conformance", catch_exceptions=False)
    return Ran(argv, result.exit_code, result.stdout, result.stderr)


def examples(default: int, full: int) -> Any:
    """Parametrize a property test's `max_examples` (the test sets it on the Hypothesis test it
    runs): `default` examples in the default tier, the `full` count in the slow tier."""
    return pytest.mark.parametrize(
        "max_examples",
        [default, pytest.param(full, marks=pytest.mark.slow)],
        ids=lambda count: f"{count}-examples",
    )


def process_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a real `conformance` process: this checkout first on the path, so
    the process imports the package and `tests.*` implementations under test from any `cwd`."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **(env or {})}


def conformance_process(
    *args: str | Path,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    script: bool = False,
) -> Ran:
    """`conformance ARGS` as a real process, the way a user or a CI job runs it: `python -m
    conformance`, or with `script` the installed console script."""
    argv = tuple(map(str, args))
    done = subprocess.run(
        [*((SCRIPT,) if script else COMMAND), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=process_environment(env),
        timeout=timeout,
        check=False,
    )
    return Ran(argv, done.returncode, done.stdout, done.stderr)


def conformance_popen(*args: str | Path, **popen: Any) -> subprocess.Popen[str]:
    """`conformance ARGS` started as a real process that outlives the call (a server)."""
    env = process_environment(popen.pop("env", None))
    return subprocess.Popen([*COMMAND, *map(str, args)], text=True, env=env, **popen)


def write_results(run: Run, directory: Path) -> Path:
    """Write the run's reports into `directory`; the path of its results.json."""
    write_reports(run, directory)
    return directory / "results.json"


#: What the pytest plugin gathers over a session in its module (the results, the failures
#: shown, the summary), as a process holds one session.
PLUGIN_SESSION_STATE = ("_collected", "_problems", "_summary", "_shown", "_worker")


#: The cache of loaded case files (conformance/corpus/filecache.py) as this test process finds
#: it, before pytester moves HOME, where the cache is by default, to a fresh directory per
#: session: each pytest session of the plugin would parse and validate the corpus anew.
CORPUS_CACHE = cache_dir()


def share_the_corpus_cache(monkeypatch: Any) -> None:
    """A pytester session, in this process or another, uses this process's case file cache."""
    monkeypatch.setenv("CONFORMANCE_CACHE_DIR", str(CORPUS_CACHE) if CORPUS_CACHE else "off")


def plugin_session(pytester: Any, monkeypatch: Any, *args: str) -> Any:
    """A pytest session of the plugin in this process (pytester's in-process run, its output
    apart from this session's), starting without what an earlier session gathered."""
    import conformance.pytest_plugin as plugin

    share_the_corpus_cache(monkeypatch)
    for name in PLUGIN_SESSION_STATE:
        monkeypatch.setattr(plugin, name, type(getattr(plugin, name))())
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


class NotATerminal:
    """A stream that is not a terminal (a CI log), keeping what is written to it."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
