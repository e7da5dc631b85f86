"""The figures of `conformance bench`: what to measure, and what one implementation measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.model.results import ImplementationInfo

IN_PROCESS = "in process"
THROUGH_PROTOCOL = "cmd: (protocol + implementation)"
#: A growth ratio above this many times the size ratio is flagged as superlinear. Linear work
#: gives about the size ratio, somewhat more once the larger document no longer fits in the
#: CPU caches; work that grows with the stream so far (re-scanning a buffer) gives its square.
SUPERLINEAR_FACTOR = 3.0


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """What to measure. The defaults take tens of seconds per `cmd:` implementation."""

    #: Characters of the realistic document for throughput and holdback.
    document_size: int = 1_000_000
    chunk_sizes: tuple[int, ...] = (1, 4, 4096)
    #: Token-sized chunks: how streaming APIs deliver text.
    holdback_chunk_size: int = 4
    #: The two document sizes whose times give the growth ratio.
    growth_sizes: tuple[int, int] = (1_000_000, 10_000_000)
    growth_chunk_size: int = 4096
    #: Runs per figure; the fastest counts (the others met more interference).
    repeats: int = 3
    #: Seconds one throughput figure (and the holdback run) may take, or None for no limit.
    #: An implementation that would not get through the document `repeats` times within it
    #: is measured on the longest start of the document that fits, at the time per chunk of
    #: a first run on `PROBE_CHUNKS` chunks; its figures say how much they cover. Time per
    #: chunk is what throughput measures, and the growth check (measured in full) is what
    #: finds a cost that grows with the stream.
    budget: float | None = None


#: Chunks of the first, timing run of a figure with a budget.
PROBE_CHUNKS = 1000


@dataclass(frozen=True, slots=True)
class Throughput:
    """One document in chunks of one size."""

    chunk_size: int
    chunks: int
    characters: int
    #: UTF-8 bytes of the document.
    size_bytes: int
    seconds: float

    @property
    def megabytes_per_second(self) -> float:
        return self.size_bytes / 1e6 / self.seconds

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds

    @property
    def microseconds_per_chunk(self) -> float:
        return self.seconds / self.chunks * 1e6

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "chunks": self.chunks,
            "characters": self.characters,
            "bytes": self.size_bytes,
            "seconds": self.seconds,
            "megabytes_per_second": round(self.megabytes_per_second, 3),
            "chunks_per_second": round(self.chunks_per_second, 1),
            "microseconds_per_chunk": round(self.microseconds_per_chunk, 4),
        }


@dataclass(frozen=True, slots=True)
class Holdback:
    """Characters held back beyond the reference, after each chunk (flush excluded)."""

    chunk_size: int
    max: int
    mean: float
    #: Whether the final channel texts equal the reference's under the same options.
    agrees: bool
    #: Characters of the document it covers (its start, under a budget).
    characters: int

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "characters": self.characters,
            "max": self.max,
            "mean": round(self.mean, 4),
            "agrees": self.agrees,
        }


@dataclass(frozen=True, slots=True)
class Growth:
    chunk_size: int
    small_size: int
    large_size: int
    small_seconds: float
    large_seconds: float

    @property
    def ratio(self) -> float:
        return self.large_seconds / self.small_seconds

    @property
    def superlinear(self) -> bool:
        return self.ratio > SUPERLINEAR_FACTOR * self.large_size / self.small_size

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_size": self.chunk_size,
            "small_size": self.small_size,
            "large_size": self.large_size,
            "small_seconds": self.small_seconds,
            "large_seconds": self.large_seconds,
            "ratio": round(self.ratio, 2),
            "superlinear": self.superlinear,
        }


@dataclass(frozen=True, slots=True)
class BenchResult:
    """The figures of one implementation. A figure is missing when its run failed."""

    info: ImplementationInfo
    #: What was timed: IN_PROCESS or THROUGH_PROTOCOL.
    measured: str
    throughput: tuple[Throughput, ...] = ()
    holdback: Holdback | None = None
    growth: Growth | None = None
    #: Why figures are missing: the first failed run's error.
    problems: tuple[str, ...] = field(default_factory=tuple)

    def throughput_at(self, chunk_size: int) -> Throughput | None:
        return next((t for t in self.throughput if t.chunk_size == chunk_size), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "implementation": self.info.to_json(),
            "measured": self.measured,
            "throughput": [t.to_json() for t in self.throughput],
            "holdback": self.holdback.to_json() if self.holdback else None,
            "growth": self.growth.to_json() if self.growth else None,
            "problems": list(self.problems),
        }
