import pytest
from tool_needs import missing

HAS_TRITON = not missing(["python:triton"])       # Triton itself, not a folder named triton on sys.path
needs_triton = pytest.mark.skipif(not HAS_TRITON, reason='Triton is not installed (pip install "layoutsim[triton]")')
