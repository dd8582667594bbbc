import importlib.util

import pytest

HAS_TRITON = importlib.util.find_spec("triton") is not None
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason='Triton is not installed (pip install "layoutsim[triton]")')
