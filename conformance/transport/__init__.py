"""Layer 4 (cases and connections): reaching an implementation: the pure protocol codec, the
in-process, subprocess and isolated connections, and the protocol server that serves a
Python normalizer."""
