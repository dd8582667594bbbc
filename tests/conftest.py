import os
from pathlib import Path

# Hypothesis: deterministic, modest example counts so the suite stays quick on 2 cores.
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The measurements the tests replay are this checkout's tests/data, wherever a test runs from and
# however layoutsim is installed (CI installs it into a virtual environment, where the package
# cannot find the source tree; layoutsim.files.measured_data reads this first).
os.environ.setdefault("LAYOUTSIM_DATA", str(Path(__file__).resolve().parent / "data"))
