"""AMD backend: HIP kernels for every gfx11/gfx12 WMMA/SWMMAC entry, built with clang, checked by
disassembly, and run with hip-python when an AMD GPU exists (none has been used here).

Build: one translation unit per (offload arch, wave size), each generation's entries for its
offload arch (`layoutsim.archs.OFFLOAD_ARCH`), compiled with
    clang-19 -x hip --offload-arch=ARCH [-mwavefrontsize64] -nogpulib -nogpuinc
             --cuda-device-only --no-gpu-bundle-output -O2 -c
and disassembled with llvm-objdump-19 (--mattr=+wavefrontsize64 for wave64, or the register
ranges print at wave32 widths). The check: each kernel holds exactly one v_wmma_*/v_swmmac_*
of the entry's mnemonic, with the catalog's register count for every operand (D, A, B, and C or
the sparsity index), and op_sel:[0,0,1] exactly where the catalog says OPSEL[2] = 1.
"""
import concurrent.futures as cf
import datetime
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from layoutsim.files import write_atomic

from .. import families
from ..codegen import hip as hipgen
from ..checks.common import Mismatch, Result
from . import Unavailable

CLANG_CANDIDATES = ("clang-19", "clang-20", "clang-18", "clang")
OBJDUMP_CANDIDATES = ("llvm-objdump-19", "llvm-objdump-20", "llvm-objdump-18", "llvm-objdump")


def find_tool(cands, env):
    if os.environ.get(env):
        return os.environ[env]
    for c in cands:
        p = shutil.which(c)
        if p:
            return p
    return None


def clang_path():
    return find_tool(CLANG_CANDIDATES, "GPU_CHECK_CLANG")


def objdump_path():
    return find_tool(OBJDUMP_CANDIDATES, "GPU_CHECK_OBJDUMP")


def groups(specs):
    g = {}
    for s in specs:
        g.setdefault((s.offload_arch, s.wave), []).append(s)
    return g


def compile_group(specs, arch, wave, outdir, clang=None):
    """Compile one translation unit; returns the object path (raises RuntimeError with clang's message)."""
    clang = clang or clang_path()
    src = hipgen.module_source(specs)
    base = Path(outdir) / f"wmma_{arch}_w{wave}"
    write_atomic(base.with_suffix(".hip"), src, "HIP source")
    cmd = [clang, "-x", "hip", f"--offload-arch={arch}", "-nogpulib", "-nogpuinc", "--cuda-device-only",
           "--no-gpu-bundle-output", "-O2", "-c", str(base.with_suffix(".hip")), "-o", str(base.with_suffix(".o"))]
    if wave == 64:
        cmd.insert(4, "-mwavefrontsize64")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"clang failed for {arch} wave{wave}: " + " | ".join(r.stderr.strip().splitlines()[:6]))
    return base.with_suffix(".o")


def disassemble(obj, arch, wave, objdump=None):
    objdump = objdump or objdump_path()
    cmd = [objdump, "-d", f"--mcpu={arch}", str(obj)]
    if wave == 64:
        cmd.insert(2, "--mattr=+wavefrontsize64")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"llvm-objdump failed: {r.stderr.strip()[:200]}")
    return r.stdout


_FUNC = re.compile(r"^[0-9a-f]+ <(\w+)>:")
_REG = re.compile(r"v\[(\d+):(\d+)\]|\bv(\d+)\b")


def matrix_instructions(disasm):
    """{kernel: [(mnemonic, [register counts], modifiers text)]} of every v_wmma/v_swmmac."""
    out, cur = {}, None
    for line in disasm.splitlines():
        m = _FUNC.match(line.strip())
        if m:
            cur = m.group(1)
            out.setdefault(cur, [])
            continue
        text = line.split("//")[0].strip()
        if cur and (text.startswith("v_wmma") or text.startswith("v_swmmac")):
            mnem, _, rest = text.partition(" ")
            counts = []
            for r in _REG.finditer(rest):
                counts.append(int(r.group(2)) - int(r.group(1)) + 1 if r.group(1) else 1)
            mods = " ".join(re.findall(r"\b([a-z_]+:\S+|clamp)", rest))
            out[cur].append((mnem, counts, mods))
    return out


def expected_operands(spec):
    """Register counts in disassembly order: D, A, B, then C (WMMA) or the index (SWMMAC)."""
    ops = spec.instr.operands
    regs = [ops["D"].fragment.regs, ops["A"].fragment.regs, ops["B"].fragment.regs]
    regs.append(ops["IDX"].fragment.regs if "IDX" in ops else ops["C"].fragment.regs)
    return regs


def check_spec(spec, found):
    """Result for one kernel from its disassembled matrix instructions."""
    want_m = spec.mnemonic
    want_regs = expected_operands(spec)
    want_opsel = bool(spec.instr.options.get("opsel"))
    details = []
    if len(found) != 1:
        details.append(Mismatch(0, "v_wmma/v_swmmac instructions in the kernel", "s32", 1, len(found)))
    for mnem, counts, mods in found[:1]:
        if mnem != want_m:
            details.append(Mismatch(0, f"mnemonic {mnem}", "s32", 0, 1, note=f"expected {want_m}"))
        for name, w, g in zip(("D", "A", "B", "IDX" if "IDX" in spec.instr.operands else "C"), want_regs, counts):
            if w != g:
                details.append(Mismatch(0, f"{name} register count", "s32", w, g))
        if len(counts) < len(want_regs):
            details.append(Mismatch(0, "register operands", "s32", len(want_regs), len(counts)))
        has_opsel = "op_sel:[0,0,1]" in mods
        if has_opsel != want_opsel:
            details.append(Mismatch(0, "op_sel:[0,0,1]", "s32", int(want_opsel), int(has_opsel)))
    r = Result("amd-compile", spec.entry, f"{spec.offload_arch} disasm", cases=1, compared=1 + len(want_regs),
               mismatches=len(details), details=details,
               note=" ".join(f"{m} {c} {x}".strip() for m, c, x in found[:1]))
    return r.finish()


def compile_and_check(specs=None, outdir=None, log=None):
    """Build every AMD kernel for its generation's offload arch and check the disassembly;
    returns ([Result], info)."""
    clang, objdump = clang_path(), objdump_path()
    if not clang or not objdump:
        raise Unavailable("clang-19 / llvm-objdump-19 not found (apt-get install -y clang-19 lld-19 llvm-19)")
    specs = families.amd_specs() if specs is None else specs
    tmp = None
    if outdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="gpu_check_hip_")
        outdir = tmp.name
    results, info = [], {"clang": clang, "objdump": objdump, "objects": {}}
    try:
        g = groups(specs)
        with cf.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as ex:
            futs = {ex.submit(compile_group, ss, arch, wave, outdir, clang): (arch, wave) for (arch, wave), ss in g.items()}
            objs = {}
            for f in cf.as_completed(futs):
                key = futs[f]
                try:
                    objs[key] = f.result()
                except RuntimeError as e:
                    for s in g[key]:
                        results.append(Result("amd-compile", s.entry, f"{key[0]} clang", status="error", note=str(e)))
        for (arch, wave), obj in sorted(objs.items()):
            found = matrix_instructions(disassemble(obj, arch, wave, objdump))
            info["objects"][f"{arch}_w{wave}"] = obj.stat().st_size
            for s in g[(arch, wave)]:
                results.append(check_spec(s, found.get(s.name, [])))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return results, info


# ---- runtime: hip-python (no AMD GPU has been used; written to the hip-python API) -------------
class HipBackend:
    vendor = "amd"

    def __init__(self, device=0):
        try:
            from hip import hip
        except ImportError as e:
            raise Unavailable(f"hip-python is not installed ({e}); pip install hip-python") from None
        self.hip = hip
        n = self._check(hip.hipGetDeviceCount())
        if not n:
            raise Unavailable("no AMD GPU found (hipGetDeviceCount() = 0)")
        self._check(hip.hipSetDevice(device))
        props = hip.hipDeviceProp_t()
        self._check(hip.hipGetDeviceProperties(props, device))
        self.props = props
        self.device = device

    def _check(self, result):
        err = result[0] if isinstance(result, tuple) else result
        rest = result[1:] if isinstance(result, tuple) else ()
        if isinstance(err, self.hip.hipError_t) and err != self.hip.hipError_t.hipSuccess:
            raise RuntimeError(f"HIP error {err}")
        return rest[0] if len(rest) == 1 else (rest or None)

    @property
    def arch(self):
        name = self.props.gcnArchName
        name = name.decode() if isinstance(name, bytes) else str(name)
        return name.split(":")[0]

    @property
    def target(self):
        return self.arch

    def environment(self):
        hip = self.hip
        name = self.props.name
        return {"backend": "hip (hip-python)", "gpu": name.decode() if isinstance(name, bytes) else str(name),
                "arch": self.arch, "hip_runtime": str(self._check(hip.hipRuntimeGetVersion())),
                "driver": str(self._check(hip.hipDriverGetVersion())),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    def load(self, code_object):
        return self._check(self.hip.hipModuleLoadData(code_object))

    def launch(self, module, spec, inp, ncases):
        hip = self.hip
        inp = np.ascontiguousarray(inp, np.uint32).reshape(-1)
        aux = np.ascontiguousarray(spec.aux, np.uint32)
        out = np.zeros(ncases * spec.out_words, np.uint32)
        bufs = []
        try:
            for host in (inp, aux, out):
                d = self._check(hip.hipMalloc(max(4, host.nbytes)))
                bufs.append(d)
            self._check(hip.hipMemcpy(bufs[0], inp, inp.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
            self._check(hip.hipMemcpy(bufs[1], aux, aux.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
            fn = self._check(hip.hipModuleGetFunction(module, spec.name.encode()))
            import ctypes
            self._check(hip.hipModuleLaunchKernel(fn, spec.grid(ncases), 1, 1, spec.threads, 1, 1, 0, None, None,
                                                  (bufs[0], bufs[1], bufs[2], ctypes.c_int(ncases))))
            self._check(hip.hipDeviceSynchronize())
            self._check(hip.hipMemcpy(out, bufs[2], out.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
        finally:
            for d in bufs:
                hip.hipFree(d)
        return out


def build_code_object(specs, arch, wave, outdir):
    """A loadable code object (hipModuleLoadData) for one arch and wave size: the -c output linked."""
    obj = compile_group(specs, arch, wave, outdir)
    return obj.read_bytes()
