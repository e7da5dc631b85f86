"""`conformance profiles`: the model-family profiles (SPEC.md 5.9), what each sets and which
engines define it, so that `--options '{"profile": NAME}'` can be chosen without reading
the source."""

from __future__ import annotations

import json

import click

from conformance.model.families import FAMILIES, Family
from conformance.model.options import Options


def _setting(name: str, value: object) -> str:
    return f"{name}={json.dumps(value, ensure_ascii=False)}"


def _row(family: Family) -> tuple[str, str, str, str]:
    differences = Options.from_mapping({"profile": family.name}).differences()
    engines = ", ".join(dict.fromkeys(source.engine for source in family.sources))
    settings = " ".join(_setting(name, value) for name, value in differences.items())
    return family.name, family.summary, settings, engines


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the profiles as JSON.")
def profiles(as_json: bool) -> None:
    """The model-family profiles: `--options '{"profile": NAME}'` stands for their values."""
    if as_json:
        data = [family.to_json() for family in FAMILIES.values()]
        click.echo(json.dumps(data, ensure_ascii=False, indent=1))
        return
    width = max(map(len, FAMILIES))
    # One row per family; its options and engines under it, since the option values alone
    # are wider than a terminal.
    for name, summary, settings, engines in map(_row, FAMILIES.values()):
        indent = " " * (width + 2)
        click.echo(f"{name:<{width}}  {summary}")
        click.echo(f"{indent}options: {settings}\n{indent}engines: {engines}")
