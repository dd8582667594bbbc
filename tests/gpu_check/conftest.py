import pytest


@pytest.fixture
def kernel_cache(tmp_path, monkeypatch):
    """A private compiled-kernel cache, so tests never read a stale one."""
    d = tmp_path / "cache"
    monkeypatch.setenv("GPU_CHECK_CACHE", str(d))
    return d

