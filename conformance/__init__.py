"""Conformance suite and fuzzing harness for reasoning-channel normalizers.

The public API, in the order data flows (ARCHITECTURE.md): case files become a `Corpus`,
an implementation is reached with `connect`, `run_implementation` judges it into an
`ImplementationRun` of `CaseResult`s, a `Run` gathers them, and `write_reports` /
`load_results` write and read them. A normalizer is written against the `interface` types.

    import conformance

    corpus = conformance.load_corpus([conformance.bundled_cases_dir()])
    connection = conformance.connect(conformance.parse_impl("python:my_pkg:Normalizer"))
    results = conformance.run_implementation(connection, corpus.cases)

Public modules besides this one: `conformance.interface`, `conformance.reference`,
`conformance.strategies`, `conformance.reports`, `conformance.cassettes`,
`conformance.contracts`, `conformance.server`, `conformance.errors` and the pytest plugin.
Everything else is internal and may change between versions.

Names load on first use, so `import conformance.reference` (a protocol program's start)
stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from conformance._version import PROTOCOL_VERSION, SPEC_VERSION, __version__

if TYPE_CHECKING:
    from conformance.contracts import Contract, OpContract, register
    from conformance.corpus.cases import bundled_cases_dir, load_corpus
    from conformance.engine.runner import run_implementation
    from conformance.errors import ConformanceError, ImplementationStartError, UsageError
    from conformance.interface import (
        HttpCall,
        StreamNormalizer,
        from_function,
        from_generator,
        implementation,
    )
    from conformance.model.cases import Case, ContractCase, Corpus
    from conformance.model.chunks import Channels, Chunk
    from conformance.model.options import Options
    from conformance.model.results import (
        CaseResult,
        FuzzResult,
        ImplementationInfo,
        ImplementationRun,
        Run,
        Verdict,
    )
    from conformance.reports import load_results, write_reports
    from conformance.transport.connections import Connection
    from conformance.transport.impls import connect
    from conformance.transport.spec import ImplementationSpec, parse_impl

#: Where each public name lives.
_EXPORTS = {
    "Contract": "conformance.contracts",
    "OpContract": "conformance.contracts",
    "register": "conformance.contracts",
    "Case": "conformance.corpus.cases",
    "ContractCase": "conformance.corpus.cases",
    "Corpus": "conformance.corpus.cases",
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
    "Options": "conformance.model.options",
    "CaseResult": "conformance.model.results",
    "FuzzResult": "conformance.model.results",
    "ImplementationInfo": "conformance.model.results",
    "ImplementationRun": "conformance.model.results",
    "Run": "conformance.model.results",
    "Verdict": "conformance.model.results",
    "load_results": "conformance.reports",
    "write_reports": "conformance.reports",
    "Connection": "conformance.transport.connections",
    "connect": "conformance.transport.impls",
    "ImplementationSpec": "conformance.transport.spec",
    "parse_impl": "conformance.transport.spec",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'conformance' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "PROTOCOL_VERSION",
    "SPEC_VERSION",
    "Case",
    "CaseResult",
    "Channels",
    "Chunk",
    "ConformanceError",
    "Connection",
    "Contract",
    "ContractCase",
    "Corpus",
    "FuzzResult",
    "HttpCall",
    "ImplementationInfo",
    "ImplementationRun",
    "ImplementationSpec",
    "ImplementationStartError",
    "OpContract",
    "Options",
    "Run",
    "StreamNormalizer",
    "UsageError",
    "Verdict",
    "__version__",
    "bundled_cases_dir",
    "connect",
    "from_function",
    "from_generator",
    "implementation",
    "load_corpus",
    "load_results",
    "parse_impl",
    "register",
    "run_implementation",
    "write_reports",
]
