import os

# Hypothesis: deterministic, modest example counts so the suite stays quick on 2 cores.
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
