"""The pytest fixture `triton_model`: `pytest -p layoutsim.triton.pytest_plugin` (or
`pytest_plugins = ["layoutsim.triton.pytest_plugin"]` in a conftest.py). A test that takes it runs
its `kernel[grid](...)` calls on the model (layoutsim.triton.patch)."""
import pytest


@pytest.fixture
def triton_model():
    from .patch import patch
    with patch() as p:
        yield p
