"""Layer 8 (applications): the commands about implementations rather than the corpus:
bench, fingerprint, matrix and its ecosystem page, smoke."""
