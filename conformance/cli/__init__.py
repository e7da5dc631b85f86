"""Layer 9 (command line): the `conformance` command: parses flags, calls one layer below,
maps errors to exit codes."""
