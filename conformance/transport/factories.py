"""`module:attr` -> a factory of normalizers, checked against the interface before any run.

Shared by `python:` (in this process) and `python-isolated:` (in the child process), so both
find the same modules and refuse the same mistakes with the same words.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from conformance.contracts import op_contracts

FACTORY_HINT = (
    "a factory takes no arguments and returns a fresh normalizer with feed(chunk) and "
    "finish() (docs/implementations.md)"
)


def import_factory(target: str) -> Any:
    """The object `package.module:attr` names; ValueError says why there is none."""
    module_name, _, attr = target.partition(":")
    module = _import(module_name)
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ValueError(f"{module_name!r} has no attribute {attr!r}")
    return factory


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        top = module_name.partition(".")[0]
        here = os.getcwd()
        if error.name != top or here in sys.path or "" in sys.path:
            raise ValueError(_cannot_import(module_name, error)) from None
    except BaseException as error:  # `sys.exit()` at import too: the module's failure
        raise ValueError(_cannot_import(module_name, error)) from None
    # As pytest's rootdir insertion does: a module in the current directory is found even
    # when the console script's own directory heads sys.path.
    sys.path.insert(0, here)
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module_name)
    except BaseException as error:
        raise ValueError(_cannot_import(module_name, error)) from None


def _cannot_import(module_name: str, error: BaseException) -> str:
    text = f"cannot import {module_name!r}: {type(error).__name__}: {error}"
    if isinstance(error, ModuleNotFoundError) and error.name == module_name.partition(".")[0]:
        text += (
            f". It is looked for on sys.path and in the current directory ({os.getcwd()}); "
            "run from the directory that holds it, `pip install -e` its project, or add its "
            "directory to PYTHONPATH"
        )
    return text


def check_factory(factory: Any, target: str) -> None:
    """Refuse what is not a factory of normalizers (ValueError), before any request.

    The commonest mistake is naming a plain `split(content) -> (answer, thinking)` function:
    accepted, every check would be a TypeError ERROR; it gets a hint to `from_function`."""
    if not callable(factory):
        raise ValueError(f"{target!r} is not callable: {FACTORY_HINT}")
    required = _required_parameters(factory)
    if required:
        raise ValueError(
            f"{target!r} takes ({', '.join(required)}), so it is not a factory: {FACTORY_HINT}. "
            "For a function over the whole message, name "
            "`conformance.interface.from_function(your_function)` instead"
        )
    try:
        sample = factory()
    except BaseException as error:  # `SystemExit` too: the factory's failure, not ours
        raise ValueError(
            f"calling {target!r} raised {type(error).__name__}: {error}; {FACTORY_HINT}"
        ) from None
    if _is_normalizer(sample):
        return
    raise ValueError(
        f"{target!r} returned {type(sample).__name__!r}, which has no feed() and finish(); "
        f"{FACTORY_HINT}"
    )


def _required_parameters(factory: Any) -> list[str]:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [
        name
        for name, parameter in signature.parameters.items()
        if parameter.kind in positional and parameter.default is inspect.Parameter.empty
    ]


def _is_normalizer(sample: Any) -> bool:
    if callable(getattr(sample, "feed", None)) and callable(getattr(sample, "finish", None)):
        return True
    # An implementation of another contract only (docs/contracts.md).
    return any(callable(getattr(sample, entry.METHOD, None)) for entry in op_contracts())
