"""Layer 0 (foundations): the JSON Schemas of case files, protocol messages, results and
expectation files, as data read with importlib.resources; no code."""
