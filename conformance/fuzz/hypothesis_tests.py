"""The fuzz properties as plain Hypothesis tests, for long campaigns under HypoFuzz:

    CONFORMANCE_IMPL="mine=python:my_pkg:Normalizer" \
        hypothesis fuzz -- --pyargs conformance.fuzz.hypothesis_tests

(`pip install 'reasoning-conformance[hypofuzz]'`). pytest runs them too, with Hypothesis'
own settings and database. The smallest failure of each property is written as a case file
into `$CONFORMANCE_FOUND_DIR` (default `reports/fuzz/found`). docs/fuzzing.md.
"""

from __future__ import annotations

from conformance.contracts import fuzz_properties
from conformance.fuzz.campaign import environment_tests

globals().update(environment_tests(list(fuzz_properties())))
