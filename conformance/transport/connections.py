"""Connections to implementations: how requests reach a normalizer and replies come back.

Every connection answers a batch of requests with one `Reply` each, in order, and lets each
out as soon as it is in (`answers`), so that what was answered is judged even when the run
stops before the batch ends. Whatever an
implementation does wrong (raises, hangs, crashes, answers garbage) becomes a failed `Reply`
(`Error`, `Unsupported` or `Timeout`, each with its verdict and reason): misbehaviour is
data, never an exception out of the runner.

The requests and replies are plain data (conformance/model/requests.py); the connections
are `InProcessConnection` (inprocess.py) and the subprocess ones (subprocess.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from conformance.model.requests import Reply, Request
from conformance.model.results import ImplementationInfo


class Connection(Protocol):
    """A live implementation."""

    info: ImplementationInfo
    #: The bundled reference in this process: its replies are the reference's own, so
    #: holdback is not measured against the reference again.
    is_reference: bool

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        """Answer each request, in order (a connection may pipeline them)."""
        ...

    def answers(self, requests: Sequence[Request]) -> Iterator[Reply]:
        """The replies of `send`, each as soon as it is in."""
        ...

    def cpu_seconds(self) -> float | None:
        """The CPU seconds the implementation has used so far (the growth check's clock), or
        None where they cannot be read: the request's wall-clock time is used instead."""
        ...

    def close(self) -> None: ...
