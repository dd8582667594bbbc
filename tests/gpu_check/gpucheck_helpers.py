"""Helpers shared by the gpu_check tests (imported by name: pytest puts this folder on sys.path)."""
import os
import shutil

import pytest

need_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"),
                               reason="nvcc not installed: the CUDA kernels cannot be compiled here")
