"""What a test or a documented block needs that a bare machine lacks (clang, nvcc, ...).

The README's test command must pass on a machine with nothing but Python: a test that needs a
program skips there, naming the program. Where every tool is required (CI sets
gpu_check.backends.hip.REQUIRE_ENV, .ci/run, after installing them) a missing program fails the
test instead, so CI cannot pass with a check left unrun. Imported by name (as h200_data).
"""
import importlib.util
import shutil

import pytest

from gpu_check.backends.hip import REQUIRE_ENV, required


def missing(tools):
    """The programs of `tools` that are not on PATH, in order; `python:MODULE` names a Python
    module of an optional extra (python:triton) that must be importable."""
    return [t for t in tools if (not _importable(t[7:]) if t.startswith("python:") else shutil.which(t) is None)]


def _importable(module):
    """A module that imports as itself: not a folder of that name on sys.path, which Python would
    take for a namespace package (spec without an origin)."""
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.origin is not None


def reason(gone):
    """The one line a skip (or failure) gives: 'needs clang-19 (not installed)'."""
    return f"needs {', '.join(gone)} (not installed)"


def need(*tools):
    """Return when every program is on PATH; else skip the calling test with the reason, or fail
    it where REQUIRE_ENV is set."""
    if not tools:
        pytest.fail("need() names no program: say what the test needs")
    gone = missing(tools)
    if not gone:
        return
    if required():
        pytest.fail(f"{reason(gone)} and {REQUIRE_ENV} is set: every tool must be installed here")
    pytest.skip(reason(gone))
