"""Compile generated kernels: one .cu translation unit per target, cached on disk by source hash.

nvcc -ptx (front end) then ptxas (assembler): when ptxas rejects an instruction, its error
names a PTX line, which names the `.entry` around it, so the build drops exactly the rejected
kernels, rebuilds the rest, and returns the rejections (kernel -> ptxas message) for the report.
A built cubin is cached under $GPU_CHECK_CACHE (default ~/.cache/gpu_check) as
<sha256(target, source)>.cubin, with the rejections beside it.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from layoutsim import sass as SASS
from layoutsim.files import write_atomic

from .codegen import source_hash
from .codegen.cuda import module_source


class BuildError(RuntimeError):
    pass


def cache_dir():
    from layoutsim.files import make_dir
    d = Path(os.environ.get("GPU_CHECK_CACHE", Path.home() / ".cache" / "gpu_check"))
    make_dir(d, "build cache (GPU_CHECK_CACHE)", parents=True)     # ~/.cache may not exist yet
    return d


def tool(name):
    p = shutil.which(name)
    if p:
        return p
    cand = f"/usr/local/cuda/bin/{name}"
    return cand if os.path.exists(cand) else None


def nvcc_path():
    return tool("nvcc")


def nvcc_version():
    """'13.0.88' from nvcc --version, or None."""
    nvcc = nvcc_path()
    if not nvcc:
        return None
    r = _run([nvcc, "--version"])
    m = re.search(r"release [\d.]+, V([\d.]+)", r.stdout)
    return m.group(1) if m else None


def gencode(target):
    """nvcc -gencode for a target (an arch-specific target needs the -gencode form with nvcc 13.0)."""
    num = target[3:]
    return f"-gencode=arch=compute_{num},code=sm_{num}"


_ERR = re.compile(r"ptxas\s+\S+, line (\d+); error\s*:\s*(.*)")
_ENTRY = re.compile(r"^\.(?:visible\s+)?\.entry\s+(\w+)\(")


def _entries_by_line(ptx):
    """[(first line number, entry name)] of the PTX text."""
    out = []
    for i, line in enumerate(ptx.splitlines(), start=1):
        m = _ENTRY.match(line.strip())
        if m:
            out.append((i, m.group(1)))
    return out


def _owner(entries, line):
    name = None
    for start, n in entries:
        if start <= line:
            name = n
        else:
            break
    return name


def _run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_specs(specs, target, use_cache=True, extra=()):
    """Compile specs into one cubin. Returns (cubin bytes, kept specs, rejected {name: msg}, stats)."""
    specs = list(specs)
    src = module_source(specs)
    key = source_hash(src + " ".join(extra), target)
    cubin_p = cache_dir() / f"{key}.cubin"
    meta_p = cache_dir() / f"{key}.json"
    t0 = time.perf_counter()
    if use_cache and cubin_p.exists() and meta_p.exists():
        rejected = json.loads(meta_p.read_text())["rejected"]
        kept = [s for s in specs if s.name not in rejected]
        return cubin_p.read_bytes(), kept, rejected, {"target": target, "kernels": len(kept),
                                                      "cached": True, "seconds": 0.0}
    nvcc, ptxas = nvcc_path(), tool("ptxas")
    if nvcc is None or ptxas is None:
        raise BuildError("nvcc/ptxas not found on PATH (install the CUDA toolkit)")
    rejected = {}
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        tmp = Path(tmp)
        for _attempt in range(4):
            src = module_source(specs)
            write_atomic(tmp / "k.cu", src, "CUDA source")
            ptx_p = tmp / "k.ptx"
            if ptx_p.exists():
                ptx_p.unlink()
            r = _run([nvcc, "-ptx", f"-arch=compute_{target[3:]}", "-O3", "-std=c++17", "-w", *extra,
                      "-o", str(ptx_p), str(tmp / "k.cu")])
            if r.returncode == 0:
                r = _run([ptxas, f"-arch={target}", "-O3", "-o", str(tmp / "k.cubin"), str(ptx_p)])
                if r.returncode == 0:
                    break
            # nvcc 13 also validates PTX for sm_90 while emitting it; either way the errors name
            # lines of k.ptx
            bad = {}
            if ptx_p.exists():
                entries = _entries_by_line(ptx_p.read_text())
                for line in (r.stderr + r.stdout).splitlines():
                    m = _ERR.search(line)
                    if m:
                        owner = _owner(entries, int(m.group(1)))
                        if owner:
                            bad.setdefault(owner, m.group(2).strip())
            if not bad:
                keep = cache_dir() / f"failed-{key}.cu"
                write_atomic(keep, src, "failed source")
                lines = (r.stderr or r.stdout).strip().splitlines()
                raise BuildError(f"build failed for {target} (source kept at {keep}): " + " | ".join(lines[:6]))
            rejected.update(bad)
            specs = [s for s in specs if s.name not in bad]
        else:
            raise BuildError(f"ptxas kept failing for {target}")
        data = (tmp / "k.cubin").read_bytes()
    write_atomic(cubin_p, data, "cached cubin")
    write_atomic(meta_p, json.dumps({"target": target, "rejected": rejected}), "cache metadata")
    return data, specs, rejected, {"target": target, "kernels": len(specs), "cached": False,
                                   "seconds": round(time.perf_counter() - t0, 2)}


def sass_summary(cubin):
    """{kernel: sorted matrix-related (and TMA) SASS opcodes} when cuobjdump exists, else {} (what
    ptxas emitted)."""
    cu = tool("cuobjdump")
    if cu is None:
        return {}
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        p = Path(tmp) / "k.cubin"
        write_atomic(p, cubin, "cubin")
        r = _run([cu, "-sass", str(p)])
    if r.returncode:
        return {}
    return {k: sorted({op for code in codes for op in SASS.MATRIX_RELATED.findall(code)})
            for k, codes in SASS.cuobjdump_functions(r.stdout).items()}
