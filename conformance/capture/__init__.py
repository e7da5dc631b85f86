"""Layer 8 (applications): bringing captures in: record one real request with secrets
scrubbed, import captures from the wild with their provenance, and approve a capture into a
pending, then a corpus, case. Reading captures is `conformance.cassettes` (layer 3)."""
