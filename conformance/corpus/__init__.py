"""Layer 4 (cases and connections): case files to validated, frozen cases, and what works on
them: the corpus checker, selection, expectation files and locks, profile derivation, case
generation."""
