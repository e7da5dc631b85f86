"""Layer 7 (session): the one orchestrator (orchestrator.py), its events and standard handlers,
and the configurations of it that the commands use (`run`, `fuzz`; `matrix` and `replay` build
theirs from the same parts)."""
