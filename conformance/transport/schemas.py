"""The JSON Schemas of protocol 1 (conformance/schemas/protocol/), for `--validate-protocol`."""

from __future__ import annotations

import functools
import itertools
import json
from importlib import resources
from typing import Any

import jsonschema


@functools.cache
def protocol_schema(name: str) -> dict[str, Any]:
    """A schema of conformance/schemas/protocol/, e.g. `stream-response`."""
    path = resources.files("conformance.schemas").joinpath("protocol").joinpath(f"{name}.json")
    return json.loads(path.read_text("utf-8"))


def schema_names() -> list[str]:
    """Every schema's name, e.g. `stream-response`."""
    folder = resources.files("conformance.schemas").joinpath("protocol")
    return sorted(
        p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")
    )


@functools.cache
def protocol_validator(name: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(protocol_schema(name))


def protocol_violation(message: Any, schema: str) -> str | None:
    """`<json path>: <message>` for the first violation of a schema, or None."""
    errors = protocol_validator(schema).iter_errors(message)
    # best_match of the first error alone: it descends into a oneOf to the branch that
    # nearly matched, which says more than "is not valid under any of the given schemas".
    error = jsonschema.exceptions.best_match(itertools.islice(errors, 1))
    return None if error is None else f"{error.json_path}: {error.message}"
