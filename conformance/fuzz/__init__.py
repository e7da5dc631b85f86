"""Layer 6 (fuzzing and reports): property-based fuzzing of an implementation: checks,
properties, found case files and campaigns (workers, HypoFuzz, Atheris, shared databases)."""
