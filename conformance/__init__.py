"""Conformance suite and fuzzing harness for reasoning-channel normalizers.

The public API, in the order data flows (ARCHITECTURE.md): case files become a `Corpus`,
an implementation is reached with `connect`, `run_implementation` judges it into an
`ImplementationRun` of `CaseResult`s, a `Run` gathers them, and `write_reports` /
`load_results` write and read them. A normalizer is written against the `interface` types.

    import conformance

    corpus = conformance.load_corpus([conformance.bundled_cases_dir()])
    connection = conformance.connect(conformance.parse_impl("python:my_pkg:Normalizer"))
    results = conformance.run_implementation(connection, corpus.cases)

Public modules besides this one (`_PUBLIC_MODULES`): `conformance.interface`,
`conformance.reference`, `conformance.strategies`, `conformance.reports` (and its program
`conformance.reports.annotations`), `conformance.cassettes`, `conformance.contracts`,
`conformance.server`, `conformance.errors` and the pytest plugin. Everything else is internal
and may change between versions.

Names load on first use, so `python -m conformance.server` (a protocol program's start)
stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from conformance._version import PROTOCOL_VERSION, SPEC_VERSION, __version__

#: The public modules besides this package (ARCHITECTURE.md, Public API). Each has `__all__`,
#: and no object is exported by two of them (tests/test_public_api.py).
_PUBLIC_MODULES = (
    "conformance.cassettes",
    "conformance.contracts",
    "conformance.contracts.egress",
    "conformance.contracts.normalizer",
    "conformance.contracts.render",
    "conformance.errors",
    "conformance.interface",
    "conformance.pytest_plugin",
    "conformance.reference",
    "conformance.reports",
    "conformance.reports.annotations",
    "conformance.server",
    "conformance.strategies",
)

#: The package's public names (besides the versions), each with the one module it loads
#: from: the public module that exports it, or, for a name no other public module exports,
#: the module defining it. `__all__`, `__getattr__` and `__dir__` derive from it.
_EXPORTS = {
    "Contract": "conformance.contracts",
    "OpContract": "conformance.contracts",
    "register": "conformance.contracts",
    "Case": "conformance.model.cases",
    "ContractCase": "conformance.model.cases",
    "Corpus": "conformance.model.cases",
    "bundled_cases_dir": "conformance.corpus.cases",
    "load_corpus": "conformance.corpus.cases",
    "run_implementation": "conformance.engine.runner",
    "ConformanceError": "conformance.errors",
    "ImplementationStartError": "conformance.errors",
    "UsageError": "conformance.errors",
    "HttpCall": "conformance.interface",
    "StreamNormalizer": "conformance.interface",
    "from_function": "conformance.interface",
    "from_generator": "conformance.interface",
    "implementation": "conformance.interface",
    "Channels": "conformance.model.chunks",
    "Chunk": "conformance.model.chunks",
    "CaseResult": "conformance.model.results",
    "FuzzResult": "conformance.model.results",
    "ImplementationInfo": "conformance.model.results",
    "ImplementationRun": "conformance.model.results",
    "Run": "conformance.model.results",
    "Verdict": "conformance.model.results",
    "Options": "conformance.reference",
    "load_results": "conformance.reports",
    "write_reports": "conformance.reports",
    "Connection": "conformance.transport.connections",
    "connect": "conformance.transport.impls",
    "ImplementationSpec": "conformance.transport.spec",
    "parse_impl": "conformance.transport.spec",
}

# The same names for type checkers, which cannot follow `__getattr__`: `X as X` marks each
# as re-exported. tests/test_public_api.py checks that this block and `_EXPORTS` agree.
if TYPE_CHECKING:
    from conformance.contracts import Contract as Contract
    from conformance.contracts import OpContract as OpContract
    from conformance.contracts import register as register
    from conformance.corpus.cases import bundled_cases_dir as bundled_cases_dir
    from conformance.corpus.cases import load_corpus as load_corpus
    from conformance.engine.runner import run_implementation as run_implementation
    from conformance.errors import ConformanceError as ConformanceError
    from conformance.errors import ImplementationStartError as ImplementationStartError
    from conformance.errors import UsageError as UsageError
    from conformance.interface import HttpCall as HttpCall
    from conformance.interface import StreamNormalizer as StreamNormalizer
    from conformance.interface import from_function as from_function
    from conformance.interface import from_generator as from_generator
    from conformance.interface import implementation as implementation
    from conformance.model.cases import Case as Case
    from conformance.model.cases import ContractCase as ContractCase
    from conformance.model.cases import Corpus as Corpus
    from conformance.model.chunks import Channels as Channels
    from conformance.model.chunks import Chunk as Chunk
    from conformance.model.results import CaseResult as CaseResult
    from conformance.model.results import FuzzResult as FuzzResult
    from conformance.model.results import ImplementationInfo as ImplementationInfo
    from conformance.model.results import ImplementationRun as ImplementationRun
    from conformance.model.results import Run as Run
    from conformance.model.results import Verdict as Verdict
    from conformance.reference import Options as Options
    from conformance.reports import load_results as load_results
    from conformance.reports import write_reports as write_reports
    from conformance.transport.connections import Connection as Connection
    from conformance.transport.impls import connect as connect
    from conformance.transport.spec import ImplementationSpec as ImplementationSpec
    from conformance.transport.spec import parse_impl as parse_impl


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["PROTOCOL_VERSION", "SPEC_VERSION", "__version__", *_EXPORTS]
