"""Layer 5 (engine): implementation x case x check -> results: plans the requests of each
check, sends them in pipelined batches, judges the replies, and times growth."""
