"""Helpers shared by the gpu_check tests (imported by name: pytest puts this folder on sys.path)."""
import os
import shutil

import pytest

from gpu_check.backends import hip as _hip

need_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists("/usr/local/cuda/bin/nvcc"),
                               reason="nvcc not installed: the CUDA kernels cannot be compiled here")

# HIP compile checks: skipped without clang / llvm-objdump, except where every AMD target is
# required (CI sets gpu_check.backends.hip.REQUIRE_ENV): there a missing toolchain fails them.
need_clang = pytest.mark.skipif(not _hip.toolchains() and not _hip.required(),
                                reason=f"no clang / llvm-objdump ({_hip.INSTALL_HINT})")
