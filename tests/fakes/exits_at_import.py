"""A module that calls `sys.exit(0)` as it is imported, as `sys.exit(main())` at module level
does: a `python:` run against it must fail to start, with reports, rather than exit 0.

    conformance run --impl python:tests.fakes.exits_at_import:Normalizer
"""

import sys

from conformance.reference import Normalizer

sys.exit(0)

__all__ = ["Normalizer"]
