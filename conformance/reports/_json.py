"""results.json: the run as data, the input of `conformance diff` and of any later report."""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from conformance.model.results import Run

from ..errors import UsageError
from ._visible import one_line

FILENAME = "results.json"
SCHEMA = "results.schema.json"


class ResultsFileError(UsageError):
    """A file that cannot be read as a results document; the message names file and problem
    (exit status 2)."""


@functools.cache
def schema() -> dict[str, Any]:
    return json.loads(resources.files("conformance.schemas").joinpath(SCHEMA).read_text("utf-8"))


#: The lists of an implementation's entry laid out one item per line.
_LISTED = ("results", "fuzz")


def render(run: Run) -> str:
    """The run, one line per top-level field, per field of each implementation and per result:
    as readable and as diffable as an indented document, and written by the json module's C
    encoder (indenting runs its pure-Python one: four times slower on a matrix's 250 MB)."""
    data = run.to_json()
    try:
        text = _layout(data, ensure_ascii=False)
        text.encode("utf-8")
    except UnicodeEncodeError:
        # An implementation answered with a lone surrogate: only \\u escapes can carry it.
        text = _layout(data, ensure_ascii=True)
    return text + "\n"


def _layout(data: dict[str, Any], *, ensure_ascii: bool) -> str:
    # Pieces joined once at the end: the document can be hundreds of megabytes, and each
    # concatenation of its parts would copy them again.
    encode = json.JSONEncoder(ensure_ascii=ensure_ascii).encode
    out = ["{\n"]
    for n, (key, item) in enumerate(data.items()):
        out += [",\n" if n else "", f" {encode(key)}: "]
        if key != "implementations":
            out.append(encode(item))
            continue
        out.append("[\n" if item else "[]")
        for m, entry in enumerate(item):
            out.append(",\n  {\n" if m else "  {\n")
            for k, (field, value) in enumerate(entry.items()):
                out += [",\n" if k else "", f"   {encode(field)}: "]
                if field in _LISTED and value:
                    out += ["[\n    ", ",\n    ".join(map(encode, value)), "\n   ]"]
                else:
                    out.append(encode(value))
            out.append("\n  }")
        if item:
            out.append("\n ]")
    out.append("\n}")
    return "".join(out)


def load_results(path: Path) -> Run:
    """Read a results document back; ResultsFileError says what is wrong with it."""
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ResultsFileError(f"{path}: is a directory, not a results file") from None
    except UnicodeDecodeError as error:
        raise ResultsFileError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    except OSError as error:
        raise ResultsFileError(f"{path}: cannot be read ({error.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"{path}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    problem = _problem(data, text)
    if problem:
        raise ResultsFileError(f"{path}: not a conformance results document: {problem}")
    return Run.from_json(data)


def _problem(data: Any, text: str) -> str | None:
    # Only for reading results back (writing them does not validate), and remembered per
    # content as case files are: validating a run of the whole corpus takes a second.
    from conformance.corpus.validation import schema_errors

    errors = schema_errors(schema(), data, text)
    if not errors:
        return None
    from jsonschema.exceptions import best_match

    # In document order, which keeps the order of the errors at one place (best_match's ties).
    error = best_match(errors)
    assert error is not None
    where = "/".join(str(p) for p in error.absolute_path) or "the top level"
    # The message may quote the whole offending value: a line is enough to find it.
    return f"at {where}: {one_line(error.message, 200)} (see conformance/schemas/{SCHEMA})"
