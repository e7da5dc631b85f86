"""Commands over a library's releases and the matrix's findings: `conformance env`,
`conformance versions`, `conformance bisect` and `conformance findings` (docs/versions.md)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from conformance.cli.common import exit_with, fail, usage_error
from conformance.contracts import all_checks
from conformance.errors import ConformanceError, UsageError

if TYPE_CHECKING:
    from conformance.adapters.adapter import Adapter
    from conformance.tools.bisect import Probe


def _adapter(label: str) -> Adapter:
    from conformance.adapters import adapter

    try:
        return adapter(label)
    except KeyError as error:
        usage_error(str(error.args[0]))


@click.command("env")
@click.argument("label")
@click.argument("version")
@click.option("--rebuild", is_flag=True, help="Build the environment again, even if cached.")
def env(label: str, version: str, rebuild: bool) -> None:
    """Build (or reuse) the environment of adapter LABEL's library at VERSION and print the
    `--impl` value that runs the adapter in it, e.g.

        conformance run --impl "$(conformance env litellm-ollama 1.80.0)"
    """
    from conformance.tools.envs import (
        EnvBuildError,
        ensure_env,
        package_of,
        versioned_label,
        versioned_spec,
    )

    chosen = _adapter(label)
    try:
        built = ensure_env(package_of(chosen), version, echo=_err, rebuild=rebuild)
    except EnvBuildError as error:
        fail(UsageError(f"cannot build the environment of {label} at {version}: {error}"))
    except ConformanceError as error:
        fail(error)
    click.echo(f"{versioned_label(chosen, version)}={versioned_spec(chosen, built)}")


@click.command("versions")
@click.option("--adapter", "label", required=True, help="The adapter (its label).")
@click.option(
    "--version",
    "versions",
    multiple=True,
    required=True,
    help="A release of the adapter's library (repeatable), each judged in its environment.",
)
def versions(label: str, versions: tuple[str, ...]) -> None:
    """The whole corpus on an adapter at several releases of its library, each in its own
    cached environment, counted against the adapter's lock (expectations/LABEL.yaml): PASS,
    XFAIL (the known divergences), FAIL (new ones), XPASS (fixed ones)."""
    from conformance.tools.versions import judge_corpus

    chosen = _adapter(label)
    rows = []
    for version in versions:
        row = judge_corpus(chosen, version, echo=_err)
        rows.append(row)
        if row.skipped:
            click.echo(f"{label} {version}: skipped: {row.skipped}")
            continue
        counts = ", ".join(f"{n} {v}" for v, n in sorted(row.counts.items()))
        click.echo(f"{label} {version}: {counts} ({row.seconds:.0f} s)")
    if all(row.skipped for row in rows):
        fail(UsageError(f"no release of {label}'s library could be judged"))


@click.command("bisect")
@click.option("--impl", "label", required=True, help="The adapter (its label).")
@click.option("--package", "package_name", help="The library's package (default: the adapter's).")
@click.option("--case", "case", required=True, help="The case ID.")
@click.option("--check", type=click.Choice(all_checks()), help="Only this check.")
@click.option("--good", help="One release bounding the search (default: the oldest).")
@click.option("--bad", help="The other bound (default: the newest release).")
def bisect(
    label: str,
    package_name: str | None,
    case: str,
    check: str | None,
    good: str | None,
    bad: str | None,
) -> None:
    """Find the first release of a library where a case's verdict on an adapter changed.

    The releases are listed by the registry's own client (pip, npm); the case is judged at
    the two bounds, then the search halves the releases between them, building each probed
    release's environment once (cached). A release whose environment does not build is
    skipped. Exit status: 0 a change found, 2 none (or a usage error)."""
    exit_with(lambda: _bisect(label, package_name, case, check, good, bad))


def _bisect(
    label: str,
    package_name: str | None,
    case: str,
    check: str | None,
    good: str | None,
    bad: str | None,
) -> int:
    from conformance.tools.bisect import BoundSkipped, bisect_releases
    from conformance.tools.envs import package, package_of
    from conformance.tools.releases import releases
    from conformance.tools.versions import judge_case, reproduce

    chosen = _adapter(label)
    pkg = package_of(chosen)
    if package_name is not None and package(package_name) != pkg:
        raise UsageError(f"--package {package_name}: {label} drives {pkg.name}")
    listed = releases(pkg)
    bounds = [v for v in (good, bad) if v is not None]
    for bound in bounds:
        if bound not in listed:
            raise UsageError(f"{bound} is not a release of {pkg.name}")
    low = min((listed.index(b) for b in bounds if b == good), default=0)
    high = max((listed.index(b) for b in bounds if b == bad), default=len(listed) - 1)
    low, high = min(low, high), max(low, high)
    span = listed[low : high + 1]
    checks = [check] if check else None
    what = f"case {case}" + (f", check {check}" if check else "")
    click.echo(
        f"{label}: {what}, over {len(span)} releases of {pkg.name} ({span[0]} .. {span[-1]})"
    )
    started = time.monotonic()

    def judge(version: str) -> Probe:
        probe = judge_case(chosen, version, case, checks, echo=_err)
        shown = probe.summary() if probe.verdicts else f"skipped: {probe.skipped}"
        click.echo(f"  {version:<12} {shown}")
        return probe

    try:
        found = bisect_releases(span, judge)
    except BoundSkipped as error:
        raise UsageError(
            f"the bound {error.probe.version} cannot be judged: {error.probe.skipped}"
        ) from None
    seconds = time.monotonic() - started
    click.echo(f"{len(found.probes)} releases judged in {seconds:.0f} s")
    if not found.changed:
        verdict = found.probes[0].summary()
        click.echo(f"no change found: {what} is {verdict} at {span[0]} and at {span[-1]}")
        return 2
    before, after = found.probe(found.last_before or ""), found.probe(found.first_after or "")
    changed = found.changed_checks()
    click.echo(
        f"first change: {found.first_after} ({found.last_before}: {before.summary()} -> "
        f"{found.first_after}: {after.summary()}; checks {', '.join(changed)})"
    )
    if found.untested:
        click.echo(
            f"  somewhere in {found.untested[0]} .. {found.first_after}: the releases "
            "between could not be judged"
        )
    for version in (found.last_before, found.first_after):
        assert version is not None
        command = reproduce(chosen, version, case, check or changed[0])
        click.echo(f"reproduce ({version}): {command}")
    return 0


@click.command("findings")
@click.option(
    "--report-dir",
    "report_dirs",
    multiple=True,
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A matrix report directory holding results.json (repeatable; a label judged in "
    "several counts from the last). Default: reports/matrix.",
)
@click.option(
    "--docs",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the page here (default: print it).",
)
def findings(report_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Each library's bugs by class, smallest failing input first, with the version, a
    command that reproduces it and the upstream issue (or a report ready to file)."""
    from conformance.reports._json import load_results
    from conformance.tools.findings import collect_findings, render_findings
    from conformance.tools.matrix import load_divergences

    dirs = report_dirs or (Path("reports") / "matrix",)
    runs = []
    for directory in dirs:
        path = directory / "results.json"
        if not path.exists():
            usage_error(f"{path} does not exist: run `conformance matrix` into {directory}")
        runs.append(load_results(path))
    try:
        page = render_findings(
            collect_findings(runs, load_divergences()), "conformance findings --docs FILE"
        )
    except ConformanceError as error:
        fail(error)
    if out is None:
        click.echo(page, nl=False)
    else:
        out.write_text(page, "utf-8")
        click.echo(f"wrote {out}", err=True)


def _err(text: str) -> None:
    click.echo(text, err=True)
