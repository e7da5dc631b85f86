"""Connections to implementations: how requests reach a normalizer and replies come back.

Every connection answers a batch of requests with one `Reply` each, in order. Whatever an
implementation does wrong (raises, hangs, crashes, answers garbage) becomes a failed `Reply`
(`Error`, `Unsupported` or `Timeout`, each with its verdict and reason): misbehaviour is
data, never an exception out of the runner.

The message shapes and replies are defined in `codec`; this module is what the runner sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from conformance.model.results import ImplementationInfo
from conformance.transport.inprocess import InProcessConnection
from conformance.transport.messages import (
    CHANNELS,
    Error,
    Failed,
    Ok,
    OpRequest,
    Reply,
    Request,
    StreamRequest,
    Timeout,
    Unsupported,
    WholeRequest,
    check_delta,
    stream_reply,
    whole_reply,
)

__all__ = [
    "CHANNELS",
    "Connection",
    "Error",
    "Failed",
    "InProcessConnection",
    "Ok",
    "OpRequest",
    "Reply",
    "Request",
    "StreamRequest",
    "Timeout",
    "Unsupported",
    "WholeRequest",
    "check_delta",
    "stream_reply",
    "whole_reply",
]


class Connection(Protocol):
    """A live implementation."""

    info: ImplementationInfo

    def send(self, requests: Sequence[Request]) -> list[Reply]:
        """Answer each request, in order (a connection may pipeline them)."""
        ...

    def close(self) -> None: ...
