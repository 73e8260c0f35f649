"""Hypothesis profiles: "ci" (bounded, the default) and "fuzz" (many more examples).

Select with ``HYPOTHESIS_PROFILE=fuzz``; test modules import this module before using Hypothesis.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: The "ci" profile's example count: what a test's own count is tuned against, and scaled with
#: the active profile's (``fuzz_strategies.scaled_examples``).
CI_EXAMPLES = 150

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,  # CI is a gate: the same examples every run; `make fuzz` explores
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
