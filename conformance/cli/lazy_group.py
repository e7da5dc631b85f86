"""A click group whose subcommands can live in modules imported only when they are used, so
that `conformance run` does not pay for importing the capture tools (click's documented
pattern for lazily loaded subcommands)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

__all__ = ["LazyGroup"]


class LazyGroup(click.Group):
    """`lazy_subcommands` maps a command name to "module:attribute" of its click command."""

    def __init__(self, *args: Any, lazy_subcommands: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_subcommands])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy_subcommands:
            return super().get_command(ctx, cmd_name)
        module, attribute = self.lazy_subcommands[cmd_name].split(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy_subcommands[cmd_name]} is not a click command")
        return command
