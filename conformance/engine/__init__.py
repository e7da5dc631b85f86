"""Layer 5 (engine): implementation x case x check -> results: plans the requests of each
check, sends them in pipelined batches, holds `unsupported` to whole operations, judges the
replies, says how much of a run was judged, and times growth."""
