"""The project's own pytest configuration.

- Hypothesis profiles: `ci` (deterministic, bounded: what `.ci/run` uses), `dev` (the default
  here), `nightly` (long); choose with HYPOTHESIS_PROFILE.
- The conformance plugin is active when the suite runs from a checkout, installed or not.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("nightly", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

pytest_plugins = ["pytester"]
if not entry_points(group="pytest11", name="conformance"):
    pytest_plugins.append("conformance.pytest_plugin")
