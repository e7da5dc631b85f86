"""Layer 7 (session): the results store, an SQLite file (the standard library's) into which
results documents import idempotently by content hash, so runs from many jobs, machines and
dates merge into one history (`db`: the schema, importing and reading back runs)."""
