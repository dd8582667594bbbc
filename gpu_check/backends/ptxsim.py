"""A GPU-free device: the generated CUDA, compiled by nvcc to PTX, executed by layoutsim.ptx.

Same interface as the cuda backend (`load`, `launch`, `environment`, `arch`, `target`), so every
check group that launches the catalog kernels runs on it unchanged. What it proves is limited
and different from a GPU run: the executor moves registers through the same catalog the host
packs with, so a wrong catalog map is invisible here (only a GPU, or fakegpu's independent
ldmatrix reading, shows one). What it does see is the kernel TEXT: a kernel that reads or writes
the wrong words, permutes lanes or computes something else mismatches, where fakegpu, which
emulates each kernel's intended semantics, cannot. Its results are the model checking itself,
never a GPU measurement: `environment()` says so and the CLI refuses to record them.

PTX is cached on disk per (source, target, nvcc) hash, because nvcc costs more than most launches.
"""
import datetime
import os
import platform
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from layoutsim.archs import target_of_device

from . import Unavailable

LABEL = "ptxsim (layoutsim.ptx executing nvcc's PTX: the model checking itself, not a GPU measurement)"
NVCC_FLAGS = ("-O3", "-std=c++17", "-w")


class PtxModule:
    """PTX text of one compiled translation unit (its kernels are named as the specs are)."""

    def __init__(self, ptx):
        self.ptx = ptx


class PerSpec:
    """What `load` gives for a cubin (Session.build compiles one for the GPU): ptxas's SASS cannot
    be executed here, so each launched spec's own kernel text is compiled to PTX instead -- the
    same text the cubin was built from."""


class PtxsimBackend:
    vendor = "nvidia"
    simulated = True

    def __init__(self, arch="sm_90", cache=None):
        from .. import build as B
        self.arch = arch
        self.target = target_of_device(arch)     # the arch-specific target where it exists (wgmma)
        self.nvcc = B.nvcc_path()
        if self.nvcc is None:
            raise Unavailable("the ptxsim backend compiles the kernels with nvcc, which is not installed")
        self.nvcc_version = B.nvcc_version()
        self.cache = Path(cache) if cache else B.cache_dir() / "ptx"
        self._ptx = {}                           # source hash -> PTX text (this process)

    def release(self):
        """Nothing to give up: no GPU is held."""

    def environment(self):
        return {"backend": LABEL, "gpu": f"none (layoutsim.ptx model of {self.arch})", "simulated": True,
                "arch": self.arch, "compute_capability": None, "driver": None, "pycuda": None,
                "nvcc": self.nvcc_version, "python": platform.python_version(), "host": platform.node(),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    # ---- modules -----------------------------------------------------------------------
    def compile(self, source):
        """PTX of one CUDA translation unit, compiled for this backend's target (cached)."""
        from ..build import BuildError
        from ..codegen import source_hash
        key = source_hash(f"{self.nvcc_version} {' '.join(NVCC_FLAGS)}\n{source}", self.target)
        if key in self._ptx:
            return self._ptx[key]
        path = self.cache / f"{key}.ptx"
        if path.exists():
            text = path.read_text()
        else:
            with tempfile.TemporaryDirectory(prefix="gpu_check_ptxsim_") as tmp:
                cu, out = Path(tmp) / "k.cu", Path(tmp) / "k.ptx"
                cu.write_text(source)
                r = subprocess.run([self.nvcc, "-ptx", f"-arch=compute_{self.target[3:]}", *NVCC_FLAGS,
                                    "-o", str(out), str(cu)], capture_output=True, text=True)
                if r.returncode:
                    lines = (r.stderr or r.stdout).strip().splitlines()
                    raise BuildError(f"nvcc -ptx for {self.target} failed: " + " | ".join(lines[:4]))
                text = out.read_text()
            self.cache.mkdir(parents=True, exist_ok=True)
            tmp_path = path.with_suffix(f".{os.getpid()}.tmp")    # atomic: other processes share the cache
            tmp_path.write_text(text)
            os.replace(tmp_path, path)
        self._ptx[key] = text
        return text

    def load(self, image):
        """A module: from CUDA source text (str) compiled to PTX, or, for the cubin Session.build
        hands every backend, one that compiles each launched spec's own source (PerSpec)."""
        if isinstance(image, str):
            return PtxModule(self.compile(image))
        return PerSpec()

    def _ptx_of(self, module, spec):
        if isinstance(module, PtxModule):
            return module.ptx
        from ..codegen.cuda import module_source
        return self.compile(module_source([spec]))

    # ---- launches ----------------------------------------------------------------------
    def launch(self, module, spec, inp, ncases):
        """Run spec's kernel over ncases cases: inp is (ncases, in_words) uint32; returns out."""
        import layoutsim.ptx as ptx
        inp = np.ascontiguousarray(inp, dtype=np.uint32).reshape(-1)
        if inp.size != ncases * spec.in_words:
            raise ValueError(f"{spec.name}: {inp.size} input words for {ncases} cases of {spec.in_words}")
        out = np.zeros(max(1, ncases * spec.out_words), np.uint32)
        aux = np.ascontiguousarray(spec.aux, dtype=np.uint32)
        args = [inp if inp.size else np.zeros(1, np.uint32), aux, out, np.int32(ncases)]
        run = ptx.run(self._ptx_of(module, spec), spec.name, grid=spec.grid(ncases), block=spec.threads,
                      args=args, arch=self.arch, shared_bytes=spec.smem_bytes)
        return np.asarray(run.buffers[2], np.uint32).reshape(-1)
