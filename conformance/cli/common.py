"""What the command modules share: exit codes, common options, progress, connections."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from conformance.engine.coverage import DEFAULT_MIN_JUDGED
from conformance.errors import ConformanceError, UsageError
from conformance.model.c_scan import C_SCAN_STATUS
from conformance.transport.connections import Connection
from conformance.transport.spec import DEFAULT_START_TIMEOUT, check_start_timeout, check_timeout

cases_option = click.option(
    "--cases",
    "case_dirs",
    type=click.Path(exists=True, file_okay=True, path_type=Path),
    multiple=True,
    help="A case file or directory (repeatable). Default: the bundled corpus.",
)

impl_option = click.option(
    "--impl",
    "impl",
    required=True,
    metavar="SPEC",
    help="The implementation: `reference`, `python:module:attr` or `cmd:<command line>`.",
)


def report_dir_option(
    help_text: str = "Where the reports go.", *, default: Path = Path("reports")
) -> Callable[[Any], Any]:
    """Each command has its own default directory under reports/ (reports/run, reports/fuzz,
    reports/replay, reports/matrix), so one command never overwrites another's reports."""
    return click.option(
        "--report-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=default,
        show_default=True,
        help=help_text,
    )


def budget_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """--budget, --min-judged and --allow-unjudged: run-level limits every session command
    takes. The command gets `min_judged`, 0 under --allow-unjudged (its shorthand)."""

    @functools.wraps(function)
    def command(*args: Any, allow_unjudged: bool, min_judged: float, **kwargs: Any) -> Any:
        if math.isnan(min_judged):  # FloatRange lets NaN through: it compares false
            usage_error("--min-judged nan: give a percentage from 0 to 100")
        return function(*args, min_judged=0.0 if allow_unjudged else min_judged, **kwargs)

    command = click.option(
        "--allow-unjudged",
        is_flag=True,
        help="Exit 0 even when an implementation judged nothing (every result SKIP, "
        "for example every request answered `unsupported`): --min-judged 0.",
    )(command)
    command = click.option(
        "--min-judged",
        type=click.FloatRange(0, 100),
        default=DEFAULT_MIN_JUDGED,
        show_default=True,
        metavar="PERCENT",
        help="Fail the run (exit status 1) for an implementation that judged less than this "
        "share of the checks that apply to it: ERROR (such as `unsupported` for some inputs "
        "of an operation it answers), TIMEOUT and not run are unjudged; SKIP (a case that "
        "does not apply, an operation it lacks as a whole) does not count.",
    )(command)
    return click.option(
        "--budget",
        type=float,
        callback=_checked_budget,
        metavar="SECONDS",
        help="Stop after this many seconds in all: what finished is reported, what did not "
        "is reported as not run, and the exit status is 1.",
    )(command)


#: The longest --budget accepted: a week is already no limit, and the alarm that enforces the
#: budget cannot be set much beyond what a platform's time_t holds.
MAX_BUDGET = 7 * 24 * 3600.0


def _checked_budget(
    context: click.Context, parameter: click.Parameter, value: float | None
) -> float | None:
    # Written as `not (0 < value <= MAX)` so that NaN, which compares false, is refused too.
    if value is not None and not (0 < value <= MAX_BUDGET):
        fail(
            UsageError(
                f"--budget {value:g}: give seconds for the whole run, more than 0 and at most "
                f"{MAX_BUDGET:g} (a week)"
            )
        )
    return value


def options_option(help_text: str) -> Callable[[Any], Any]:
    return click.option(
        "--options", "option_sets", multiple=True, metavar="[NAME=]JSON", help=help_text
    )


def timeout_option(default: float = 5.0, why: str = "") -> Callable[[Any], Any]:
    return click.option(
        "--timeout",
        type=float,
        default=default,
        show_default=True,
        callback=_checked_timeout,
        help=f"Seconds an implementation may take per request{why}.",
    )


def timeout_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """--timeout per request and --start-timeout, apart: starting may take far longer."""
    return timeout_option()(_start_timeout_option(function))


_start_timeout_option = click.option(
    "--start-timeout",
    type=float,
    default=DEFAULT_START_TIMEOUT,
    show_default=True,
    callback=lambda context, parameter, value: _checked(check_start_timeout, value),
    help="Seconds an implementation may take to start (a process's answer to hello: "
    "starting its runtime, importing its libraries), apart from --timeout.",
)


def exit_with(command: Callable[[], int]) -> NoReturn:
    """Run a command's session and exit with its status; an error is one line (`fail`)."""
    try:
        status = command()
    except ConformanceError as error:
        fail(error)
    sys.exit(status)


def _checked_timeout(context: click.Context, parameter: click.Parameter, value: float) -> float:
    return _checked(check_timeout, value)


def _checked(check: Callable[[float], float], value: float) -> float:
    try:
        return check(value)
    except ConformanceError as error:
        fail(error)


def format_option(*choices: str) -> Callable[[Any], Any]:
    return click.option(
        "--format",
        "format_",
        type=click.Choice(list(choices)),
        default=choices[0],
        show_default=True,
        help="Output format.",
    )


def fail(error: ConformanceError) -> NoReturn:
    """End the command on `error`: its message as `error: ...` on stderr, and the exit status
    its class gives (`exit_status`, docs/errors.md). Every command's errors end here."""
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_status)


def usage_error(message: str) -> NoReturn:
    """End the command on a usage error the command itself found (exit status 2)."""
    fail(UsageError(message))


@contextmanager
def connected(
    spec: str, *, timeout: float, validate_protocol: bool = False
) -> Iterator[Connection]:
    """A live implementation for a command; a start failure ends the command (exit 2)."""
    from conformance.transport.impls import connect
    from conformance.transport.spec import parse_impl

    try:
        connection = connect(parse_impl(spec), timeout=timeout, validate_protocol=validate_protocol)
    except ConformanceError as error:
        fail(error)
    try:
        yield connection
    finally:
        connection.close()


def progress_line() -> Callable[[str], None] | None:
    """A progress line on a terminal, nothing elsewhere."""
    if not sys.stderr.isatty():
        return None

    def show(text: str) -> None:
        click.echo(f"\r\033[K{text}", err=True, nl=False)

    return show


class RegistryChoice(click.Choice):
    """A choice among names the contract registry gives when the command runs, so that a
    contract registered after import (a plugin's, a test's) is a valid choice too."""

    def __init__(self, names: Callable[[], Sequence[str]]) -> None:
        self._names = names
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        return tuple(self._names())

    @choices.setter
    def choices(self, _value: Sequence[str]) -> None:
        """The registry is the source; click's own assignment is ignored."""


#: What every command says first while the install runs without its C scan.
MISSING_C_SCAN = (
    "note: the C scan of exact grammars is not built (no C compiler at install time); "
    "running on regular expressions, slower on long chunks; see README, Set up and run"
)


def note_missing_c_scan() -> None:
    """One line on stderr when the C scan was not built and nobody turned it off: `pip
    install` shows its build warning only under -v, and the speed shows here."""
    if C_SCAN_STATUS == "missing":
        click.echo(MISSING_C_SCAN, err=True)
