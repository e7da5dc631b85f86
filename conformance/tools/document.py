"""The realistic document lives in `conformance.model.document` (the growth check of every run
uses it too); this name is kept for the benchmarks and tools that import it from here."""

from conformance.model.document import BLOCKS, PARAGRAPHS, cut, realistic_document

__all__ = ["BLOCKS", "PARAGRAPHS", "cut", "realistic_document"]
