"""The GPU measurements the tests replay (tests/data/): where they are, and the rule that a
missing one fails the test (it is part of the repository), never skips it."""
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"


def measured(relpath, cited_by):
    """Path of tests/data/`relpath`; fails the test when it is missing."""
    path = DATA / relpath
    if not path.exists():
        pytest.fail(f"{path} is missing: it is the H200 measurement {cited_by} cites")
    return path


def check_environment(env):
    """A corpus recorded on the H200, with what it ran under."""
    assert env["gpu"] == "NVIDIA H200" and env["compute_capability"] == "9.0"
    for key in ("driver", "cuda_driver_api", "nvcc", "date"):
        assert env.get(key), f"environment lacks {key}"
