"""One error tree (docs/errors.md): every exception class of the package derives from
ConformanceError and says the exit status of a command it ends, and the command line exits
with that status."""

from __future__ import annotations

import importlib
import pkgutil
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import conformance
from conformance.errors import ConformanceError, Failure, ImplementationStartError, UsageError
from conformance.session.orchestrator import EXIT_FAILED, EXIT_USAGE
from tests.helpers import ROOT, cli
from tests.tiers import SLOW_TO_IMPORT

#: Every module of the package, found as `pkgutil` walks it.
MODULES = sorted(
    info.name for info in pkgutil.walk_packages(conformance.__path__, prefix="conformance.")
)

#: Exceptions that are signals, not errors: they unwind through code that must let them pass
#: and are caught by the package at a known point, so none may be caught as a user error.
SIGNALS = {
    "conformance.session.orchestrator.Stop": "a KeyboardInterrupt ending a session early (a "
    "signal, the budget) with its own status, 130, 143 or 1: what lets Ctrl-C through must "
    "let it through",
    "conformance.contracts._fuzzing.PropertyFailure": "a counterexample on its way to "
    "Hypothesis, an AssertionError for it to shrink; it becomes a FAIL result",
    "conformance.contracts._fuzzing.Unsupported": "an op the implementation does not answer, "
    "carried out of a Hypothesis test; it becomes a SKIP result",
    "conformance.session.orchestrator.Skipped": "a job that does not apply here (its library "
    "is not installed), raised from its connect; the session lists it as skipped, no error",
    "conformance.tools.matrix_worker.Unavailable": "an adapter whose library a worker process "
    "cannot import, carried to the parent, which skips the job (Skipped)",
}

#: The statuses an error may end a command with (README, "Exit status").
ERROR_STATUSES = {EXIT_FAILED, EXIT_USAGE}


def imported(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The module, or a skip when it needs an optional library that is not installed."""
    if name == "conformance.__main__":
        pytest.skip("importing it runs the command; it defines nothing")
    # The plain Hypothesis tests connect to the implementation this names when imported.
    monkeypatch.setenv("CONFORMANCE_IMPL", "reference")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is None or error.name.partition(".")[0] == "conformance":
            raise
        pytest.skip(f"needs {error.name}, an optional dependency")
    except ImportError as error:
        if not name.startswith("conformance.adapters."):
            raise
        pytest.skip(f"the adapter's library is not installed: {error}")


def defined_exceptions(module: ModuleType) -> list[type[BaseException]]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
    ]


def qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def docstring(cls: type) -> str:
    """The class's own docstring (not inherited), its lines joined."""
    return " ".join((cls.__dict__.get("__doc__") or "").split())


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if name in SLOW_TO_IMPORT else [])
        for name in MODULES
    ],
)
def test_every_exception_class_is_an_error_of_the_tree(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for cls in defined_exceptions(imported(name, monkeypatch)):
        where = qualified(cls)
        if where in SIGNALS:
            continue
        assert issubclass(cls, ConformanceError), (
            f"{where} derives from {[base.__name__ for base in cls.__mro__[1:]]}: derive it "
            "from ConformanceError's group for its exit status (docs/errors.md), or name it "
            "in SIGNALS with the reason"
        )
        status = cls.exit_status
        assert type(status) is int and status in ERROR_STATUSES, f"{where}: {status!r}"
        assert f"exit status {status}" in docstring(cls).lower(), (
            f"{where}: its docstring must say `exit status {status}`"
        )


def all_exceptions(
    monkeypatch: pytest.MonkeyPatch, leave_out: frozenset[str] = frozenset()
) -> dict[str, type[BaseException]]:
    """Every exception class of the importable modules (but those left out), by name."""
    found = {}
    for name in MODULES:
        if name in leave_out:
            continue
        try:
            module = imported(name, monkeypatch)
        except pytest.skip.Exception:
            continue
        found.update({cls.__qualname__: cls for cls in defined_exceptions(module)})
    return found


def test_the_exemptions_are_signals_outside_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    for where in SIGNALS:
        module, _, name = where.rpartition(".")
        cls = getattr(imported(module, monkeypatch), name)
        assert issubclass(cls, BaseException), where
        assert not issubclass(cls, ConformanceError), f"{where} would be caught as an error"


def test_the_groups_give_the_statuses_of_the_readme() -> None:
    assert ConformanceError.exit_status == UsageError.exit_status == EXIT_USAGE
    assert ImplementationStartError.exit_status == EXIT_USAGE
    assert Failure.exit_status == EXIT_FAILED


#: A row of the tree's table: class, base, exit status.
ROW = re.compile(r"^\| `(\w+)`[^|]*\| `(\w+)`[^|]*\| (\d+) \|", re.MULTILINE)


# The default tier leaves out the adapters slow to import (they define no exception: the slow
# tier's run, with them, would find one that is not documented).
@pytest.mark.parametrize(
    "leave_out", [SLOW_TO_IMPORT, pytest.param(frozenset(), marks=pytest.mark.slow)]
)
def test_the_documentation_lists_the_tree_as_the_code_has_it(
    monkeypatch: pytest.MonkeyPatch, leave_out: frozenset[str]
) -> None:
    text = (ROOT / "docs" / "errors.md").read_text("utf-8")
    tree, signals = text.split("## Signals")
    documented = {name: (base, int(status)) for name, base, status in ROW.findall(tree)}
    found = all_exceptions(monkeypatch, leave_out)
    actual = {
        name: (cls.__bases__[0].__name__, cls.exit_status)
        for name, cls in found.items()
        if issubclass(cls, ConformanceError)
    }
    assert documented == actual
    listed = set(re.findall(r"^\| `(\w+)`", signals, re.MULTILINE))
    assert listed == {where.rpartition(".")[2] for where in SIGNALS}


# --- the command line exits with the error's status ------------------------------------------


def test_the_command_line_exits_with_the_status_the_error_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any status: the command line reads `exit_status`, it does not list classes."""

    class Odd(ConformanceError):
        """exit status 7"""

        exit_status = 7

    def execute(settings: Any, echo: Any, handlers: Any = ()) -> int:
        raise Odd("something odd")

    monkeypatch.setattr("conformance.session.run.execute", execute)
    ran = cli("run")
    assert (ran.returncode, ran.stderr) == (7, "error: something odd\n")


def capture(tmp_path: Path) -> Path:
    copied = tmp_path / "capture.yaml"
    shutil.copyfile(ROOT / "cassettes/fake-provider/ollama-generate-split-tags-stream.yaml", copied)
    return copied


def record_args(out: Path) -> tuple[str | Path, ...]:
    """`record` of a prompt to a port where nothing listens."""
    base = ("record", "--provider", "ollama", "--base-url", "http://127.0.0.1:9")
    return (*base, "--model", "m", "--prompt", "p", "--out", out)


def test_representative_errors_end_commands_with_their_class_status(tmp_path: Path) -> None:
    from conformance.capture.approve import AcceptError, ApproveError
    from conformance.capture.provider_request import RecordError
    from conformance.cassettes import CassetteError
    from conformance.reports import ResultsFileError

    (tmp_path / "cases").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "broken.yaml").write_text("interactions: [\n", "utf-8")
    captured = capture(tmp_path)
    assert cli("approve", captured, "--cases", "cases", cwd=tmp_path).returncode == 0
    expected: list[tuple[type[ConformanceError], tuple[str | Path, ...], str]] = [
        (UsageError, ("run", "--options", "nope"), "--options 'nope' is not JSON"),
        (ImplementationStartError, ("smoke", "--impl", "python:no_such_module:x"), "cannot import"),
        (ResultsFileError, ("diff", "old.json", "new.json"), "old.json: no such file"),
        (CassetteError, ("decode", "broken.yaml"), "broken.yaml: malformed YAML"),
        (ApproveError, ("approve", captured, "--cases", "cases"), "already a pending case"),
        (AcceptError, ("approve", captured, "--cases", "elsewhere", "--accept"), "no pending"),
        (RecordError, record_args(captured), "exists; choose another --out"),
    ]
    for error, args, message in expected:
        ran = cli(*args, cwd=tmp_path)
        assert ran.returncode == error.exit_status, (error.__name__, ran.stderr)
        assert ran.stderr.startswith("error: ") and message in ran.stderr, ran.stderr
    assert {AcceptError.exit_status, RecordError.exit_status} == {EXIT_FAILED}


def test_a_recording_that_does_not_decode_is_a_record_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.capture.provider_request import RecordError

    def record(recording: Any, out: Path, *, force: bool = False) -> Path:
        out.write_text("interactions: [\n", "utf-8")
        return out

    monkeypatch.setattr("conformance.capture.record.record", record)
    ran = cli(*record_args(tmp_path / "new.yaml"), cwd=tmp_path)
    assert ran.returncode == RecordError.exit_status
    assert ran.stderr.startswith("error: the capture does not decode: ")
    assert "(kept for inspection" in ran.stderr
