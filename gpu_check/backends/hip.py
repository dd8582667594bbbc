"""AMD backend: HIP kernels for every AMD entry (gfx11/gfx12 WMMA/SWMMAC, CDNA MFMA), built with
clang, checked by disassembly, and run with hip-python when an AMD GPU exists (none has been used
here).

Build: one translation unit per (compile target, wave size): WMMA for its generation's offload
arch, MFMA for `layoutsim.archs.check_target` of its archs, compiled with
    clang-19 -x hip --offload-arch=ARCH [-mwavefrontsize64] -nogpulib -nogpuinc
             --cuda-device-only --no-gpu-bundle-output -O2 -c
(clang-19 where it has the target; gfx950 needs clang 20 or newer, so the first newer LLVM
installed builds it, see LLVM_VERSIONS; clang links the device code with ld.lld of its own
version, so clang-22 needs lld-22) and disassembled with the llvm-objdump of the same
version (--mattr=+wavefrontsize64 for wave64, or the register ranges print at wave32 widths).
The check: each kernel holds exactly one matrix instruction (v_wmma_* / v_swmmac_* / v_mfma_*)
of the entry's mnemonic, with the register count the family expects for every operand
(`spec.expected_counts()`: D, A, B, and C or the sparsity index), and op_sel:[0,0,1] exactly
where the catalog says OPSEL[2] = 1.
"""
import concurrent.futures as cf
import datetime
import functools
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

# LLVM versions tried, in order: 19 first (the one CI installs and the RDNA checks were written
# against), then newer ones for the targets 19 lacks (gfx950 needs clang 20 or newer; Debian
# bookworm-security has clang-22), then an unversioned install. clang and llvm-objdump of the
# same version go together.
LLVM_VERSIONS = ("19", "20", "21", "22", "18", "")
CLANG_CANDIDATES = tuple(f"clang-{v}" if v else "clang" for v in LLVM_VERSIONS)
OBJDUMP_CANDIDATES = tuple(f"llvm-objdump-{v}" if v else "llvm-objdump" for v in LLVM_VERSIONS)
INSTALL_HINT = "apt-get install -y clang-19 lld-19 llvm-19 (gfx950: clang-22 lld-22 llvm-22)"
# clang's words for an offload arch it does not have (clang-19 on gfx950: "invalid target ID
# 'gfx950'"); any other failure of a clang that has the target is a broken install (clang-22
# without ld.lld-22: "posix_spawn failed" running amdgcn-link), reported as an error.
UNKNOWN_TARGET = "invalid target ID"
# Set (CI sets it, .ci/run): a target no installed clang builds is an error, not a skip, so a
# run cannot pass with a target unchecked.
REQUIRE_ENV = "GPU_CHECK_REQUIRE_ALL_TARGETS"


def required():
    """Whether every AMD compile target must be built (REQUIRE_ENV set, as in CI)."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


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


def toolchains():
    """[(clang, llvm-objdump)] installed, in LLVM_VERSIONS order (GPU_CHECK_CLANG /
    GPU_CHECK_OBJDUMP, when set, are the only pair)."""
    if os.environ.get("GPU_CHECK_CLANG") or os.environ.get("GPU_CHECK_OBJDUMP"):
        pair = (clang_path(), objdump_path())
        return [pair] if all(pair) else []
    out = []
    for clang, objdump in zip(CLANG_CANDIDATES, OBJDUMP_CANDIDATES):
        pair = (shutil.which(clang), shutil.which(objdump))
        if all(pair):
            out.append(pair)
    return out


@functools.lru_cache(maxsize=None)
def probe(clang, arch):
    """None when this clang builds for the offload arch (it compiles and links an empty HIP file
    for it, as the real build does), else the first line of its error."""
    with tempfile.TemporaryDirectory(prefix="gpu_check_probe_") as tmp:
        try:
            r = subprocess.run([clang, "-x", "hip", f"--offload-arch={arch}", "-nogpulib", "-nogpuinc",
                                "--cuda-device-only", "-c", "-o", os.path.join(tmp, "x.o"), "-"],
                               input="", capture_output=True, text=True)
        except OSError as e:
            return f"{clang}: {e}"
    if r.returncode == 0:
        return None
    return (r.stderr.strip().splitlines() or [f"{clang} exited with {r.returncode}"])[0]


def accepts(clang, arch):
    """Whether this clang builds for the offload arch."""
    return probe(clang, arch) is None


def toolchain_for(arch):
    """(clang, llvm-objdump) of the first installed LLVM that builds for `arch`, or None."""
    return next(((c, o) for c, o in toolchains() if accepts(c, arch)), None)


def broken_for(arch):
    """One line naming an installed clang that has `arch` but fails to build for it (its linker,
    ld.lld of the same version, missing), or None when each installed clang lacks the target."""
    for clang, _ in toolchains():
        err = probe(clang, arch)
        if err and UNKNOWN_TARGET not in err:
            v = re.search(r"clang-(\d+)$", clang)
            lld = f"ld.lld-{v.group(1)} (apt-get install lld-{v.group(1)})" if v else "ld.lld of its version"
            return (f"{clang} has {arch} but cannot build for it ({err}); clang links AMDGPU code "
                    f"with {lld}")
    return None


def _missing_target(arch):
    """(status, note) for the kernels of a target no installed clang builds: an error when a
    clang that has the target is broken or when every target is required, else a skip."""
    broken = broken_for(arch)
    if broken:
        return "error", broken
    if required():
        return "error", (f"no installed clang builds for {arch} and {REQUIRE_ENV} is set "
                         f"({INSTALL_HINT})")
    return "skip", f"no installed clang builds for {arch} ({INSTALL_HINT})"


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
_REG = re.compile(r"[va]\[(\d+):(\d+)\]|\b[va](\d+)\b")    # VGPRs and MFMA AccVGPRs


def matrix_instructions(disasm):
    """{kernel: [(mnemonic, [register counts], modifiers text)]} of every v_wmma/v_swmmac/v_mfma."""
    out, cur = {}, None
    for line in disasm.splitlines():
        m = _FUNC.match(line.strip())
        if m:
            cur = m.group(1)
            out.setdefault(cur, [])
            continue
        text = line.split("//")[0].strip()
        if cur and text.startswith(("v_wmma", "v_swmmac", "v_mfma")):
            mnem, _, rest = text.partition(" ")
            counts = []
            for r in _REG.finditer(rest):
                counts.append(int(r.group(2)) - int(r.group(1)) + 1 if r.group(1) else 1)
            mods = " ".join(re.findall(r"\b([a-z_]+:\S+|clamp)", rest))
            out[cur].append((mnem, counts, mods))
    return out


def check_spec(spec, found):
    """Result for one kernel from its disassembled matrix instructions."""
    want_m = spec.mnemonic
    want_regs = spec.expected_counts()
    want_opsel = bool(spec.instr.options.get("opsel"))
    details = []
    if len(found) != 1:
        details.append(Mismatch(0, "matrix instructions in the kernel", "s32", 1, len(found)))
    for mnem, counts, mods in found[:1]:
        if mnem != want_m:
            details.append(Mismatch(0, f"mnemonic {mnem}", "s32", 0, 1, note=f"expected {want_m}"))
        for name, w, g in zip(spec.disassembly_operands(), want_regs, counts):
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
    """Build every AMD kernel for its compile target (`spec.offload_arch`) with the first installed
    LLVM that has the target, and check the disassembly; returns ([Result], info). A target no
    installed clang has gives "skip" results that say so; "error" results where a clang that has
    it cannot build (a broken install) or where every target is required (REQUIRE_ENV)."""
    if not toolchains():
        raise Unavailable(f"clang / llvm-objdump not found ({INSTALL_HINT})")
    specs = families.amd_specs() if specs is None else specs
    tmp = None
    if outdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="gpu_check_hip_")
        outdir = tmp.name
    results, info = [], {"clang": clang_path(), "objdump": objdump_path(), "objects": {}, "compilers": {},
                         "skipped_targets": [], "unbuilt_targets": []}
    try:
        g = groups(specs)
        tools = {key: toolchain_for(key[0]) for key in g}
        for (arch, wave), ss in sorted(g.items()):
            if tools[(arch, wave)] is None:
                status, note = _missing_target(arch)
                key = "skipped_targets" if status == "skip" else "unbuilt_targets"
                if arch not in info[key]:
                    info[key].append(arch)
                results += [Result("amd-compile", s.entry, f"{arch} clang", status=status, note=note)
                            for s in ss]
        with cf.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as ex:
            futs = {ex.submit(compile_group, ss, arch, wave, outdir, tools[(arch, wave)][0]): (arch, wave)
                    for (arch, wave), ss in g.items() if tools[(arch, wave)]}
            objs = {}
            for f in cf.as_completed(futs):
                key = futs[f]
                try:
                    objs[key] = f.result()
                except RuntimeError as e:
                    for s in g[key]:
                        results.append(Result("amd-compile", s.entry, f"{key[0]} clang", status="error", note=str(e)))
        for (arch, wave), obj in sorted(objs.items()):
            clang, objdump = tools[(arch, wave)]
            found = matrix_instructions(disassemble(obj, arch, wave, objdump))
            info["objects"][f"{arch}_w{wave}"] = obj.stat().st_size
            info["compilers"][arch] = clang
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
