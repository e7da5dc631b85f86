"""Layer 1 (model): plain data and pure functions on it: delimiters and their scan, policy
options, chunks and channels, verdicts and results, judging two channels, the realistic
document."""
