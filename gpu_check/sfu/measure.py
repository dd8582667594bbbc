"""Measure the approximate-math instructions over every input (see probe.cu) and keep what a
bit-exact model needs.

    python -m gpu_check.sfu.measure --out DIR [--max-seconds 90] [--table-budget-mb 8] [--dry-run]

For each f32 primitive (ex2, rcp, rsqrt, lg2, sqrt, tanh, sin, cos: the .ftz PTX forms, a bare
MUFU on sm_90) every hypothesis of HYPOTHESES is checked over all 2^32 inputs on the GPU: its
tables are built from MUFU itself on canonical inputs, and the check counts the inputs where
MUFU(x) differs from the model, per sign+exponent bin, keeping the first mismatches. The tables
of the best hypothesis (fewest mismatches; 0 means the model is exact over every input) are
kept, in priority order while --table-budget-mb lasts (tables.py: reference + compressed error).
Also: the error of every primitive against the correctly rounded value over all inputs, the PTX
forms without .ftz against their SASS sequences, sin/cos.approx against MUFU(RZ(x / 2 pi)), and
the 16-bit forms (ex2/tanh f16 and bf16, and CUDA's hexp2/hexp/hexp10/h2exp2) over all 2^16
inputs, their x2 forms over all 2^32 pairs. Steps run in priority order and stop at the budget.

DIR/sfu.json (everything but the arrays), DIR/sfu_counts.npz (per-bin counts), DIR/f16_tables.npz
(the 16-bit results, raw), DIR/tables/<op>.<table>.{ref,err}.bz2. --dry-run: no GPU; a CPU stand-in
answers on a small sample of inputs with correctly rounded values (tests the driver only).
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from layoutsim.numerics import sfu_tables as TB

from .. import needs
from .patch import patch_sincos

HERE = Path(__file__).resolve().parent
OPS = {"ex2": 0, "rcp": 1, "rsqrt": 2, "lg2": 3, "sqrt": 4, "sin": 5, "cos": 6, "tanh": 7}
PTX = {"ex2": "ex2.approx.ftz.f32", "rcp": "rcp.approx.ftz.f32", "rsqrt": "rsqrt.approx.ftz.f32",
       "lg2": "lg2.approx.ftz.f32", "sqrt": "sqrt.approx.ftz.f32", "tanh": "tanh.approx.f32",
       "sin": "sin.approx.ftz.f32 (patched: MUFU.SIN of the input itself)", "cos": "cos.approx.ftz.f32 (patched)"}
PRIORITY = ("ex2", "rcp", "rsqrt", "lg2", "tanh", "sin", "cos", "sqrt")   # also the order tables are kept in
FS = (20, 21, 22, 23, 24)
NBINS, NHIST, NSAMPLES = 512, 35, 32
ALL = 1 << 32


def hypotheses(op):
    """[(hyp code for probe.cu, description)]."""
    if op in ("ex2", "sin", "cos"):
        out = []
        for mode, what in ((0, "floor (two's complement) fixed point"), (1, "truncated |x| fixed point, sign by symmetry")):
            for f in FS:
                out.append((mode | f << 4, f"depends only on x as {what} with {f} fraction bits"
                            + (", scaled by 2^integer part" if op == "ex2" else ", period 1")))
        return out
    if op == "lg2":
        return [(m, f"round_{r}(e + L[mantissa]), L exact from the tables at e = 0 and e = -1")
                for m, r in enumerate(("rn", "rz", "rd", "ru"))] + \
            [(4, "round_rz(e + L[mantissa] + d), d an infinitesimal: negative where L is read from the e = -1 "
                 "table (T1 + 1, which rz rounded up), positive for x < 1 (e < 0); 0 when both or neither")]
    if op == "tanh":
        # (K = 23 would keep every bit: true of any function, so not a hypothesis; the 2026-12-01 run had it)
        return ([(k, f"depends only on the top {k} fraction bits of x (truncated)") for k in (8, 9, 10, 11, 12, 13, 14, 16, 18, 20, 21, 22)]
                + [(k | 32, f"depends only on x rounded to {k} fraction bits (nearest even)") for k in (10, 11, 12, 13, 14)]
                + [(64, "odd: tanh(-x) = -tanh(x)")])
    what = {"rcp": "rcp(1.m) * 2^-e", "rsqrt": "rsqrt(1.m * 2^(e mod 2)) * 2^-(e div 2)",
            "sqrt": "sqrt(1.m * 2^(e mod 2)) * 2^(e div 2)"}[op]
    return [(0, f"depends only on the fraction (and exponent parity): {what}")]


# hypotheses that state a property of the function rather than a model of it: never "best"
# (tanh 23 keeps every bit, true of any function: measured on 2026-12-01, no longer generated)
PROPERTIES = {("tanh", 64), ("tanh", 23)}


def tables_of(op, hyp):
    """[(variant, F, n)] the hypothesis reads (T0, T1)."""
    if op in ("ex2", "sin", "cos"):
        mode, f = hyp & 15, hyp >> 4
        return [(0, f, 1 << f)] + ([(1, f, 1 << f)] if (op == "ex2" and mode == 1) else [])
    if op == "rcp":
        return [(0, 0, 1 << 23)]
    if op in ("rsqrt", "sqrt", "lg2"):
        return [(0, 0, 1 << 23), (1, 0, 1 << 23)]
    return []


def canonical_inputs(op, variant, f, n):
    """The f32 inputs whose MUFU results a table holds (mirror of canonical() in probe.cu)."""
    k = np.arange(n, dtype=np.uint64)
    if op in ("ex2", "sin", "cos"):
        x = k.astype(np.float64) * 2.0 ** -f
        return -x if variant else x
    if op == "tanh":
        with np.errstate(invalid="ignore"):                    # NaN inputs are inputs too
            return (k << np.uint64(f)).astype(np.uint32).view(np.float32).astype(np.float64)
    e = {"lg2": 126 + (0 if variant else 1)}.get(op, 127 + variant)
    return ((np.uint64(e) << np.uint64(23)) | k).astype(np.uint32).view(np.float32).astype(np.float64)


def reference(op, x):
    """Correctly rounded reference values in f64 (numpy) for table encoding."""
    with np.errstate(all="ignore"):
        return {"ex2": np.exp2, "rcp": lambda v: 1.0 / v, "rsqrt": lambda v: 1.0 / np.sqrt(v), "lg2": np.log2,
                "sqrt": np.sqrt, "sin": lambda v: np.sin(2 * np.pi * v), "cos": lambda v: np.cos(2 * np.pi * v),
                "tanh": np.tanh}[op](x)


# ---- devices ------------------------------------------------------------------------------------------
class GpuDevice:
    """probe.cu on the GPU through pycuda: the module as built (`plain`) and sin/cos-patched."""
    GRID, BLOCK = 132 * 8, 256

    def __init__(self, cubin, patched):
        import pycuda.driver as drv
        drv.init()
        self.drv = drv
        self.dev = drv.Device(0)
        self.ctx = self.dev.make_context()
        self.plain = drv.module_from_buffer(cubin)
        self.patched = drv.module_from_buffer(patched)
        shared = NBINS * NHIST * 4 + NBINS * 8
        self.errhist_fn = self.patched.get_function("errhist")
        self.errhist_fn.set_attribute(drv.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        self.errhist_shared = shared
        self.dummy = self._zeros(1, np.uint32)          # the table argument of hypotheses without one

    def environment(self):
        drv = self.drv
        dv = drv.get_driver_version()
        from gpu_check.backends.cuda import _driver_string
        return {"gpu": self.dev.name(), "compute_capability": "%d.%d" % self.dev.compute_capability(),
                "driver": _driver_string(dv), "cuda_driver_api": f"{dv // 1000}.{(dv % 1000) // 10}"}

    def close(self):
        self.dummy.free()
        self.ctx.pop()

    def _launch(self, mod, name, *args, shared=0):
        f = self.errhist_fn if name == "errhist" else mod.get_function(name)
        t0 = time.perf_counter()
        f(*args, block=(self.BLOCK, 1, 1), grid=(self.GRID, 1), shared=shared)
        self.drv.Context.synchronize()
        return time.perf_counter() - t0

    def _zeros(self, n, dtype):
        a = self.drv.mem_alloc(max(1, n * np.dtype(dtype).itemsize))
        self.drv.memset_d8(a, 0, max(1, n * np.dtype(dtype).itemsize))
        return a

    def _get(self, a, n, dtype):
        out = np.empty(n, dtype)
        self.drv.memcpy_dtoh(out, a)
        return out

    def build_table(self, op, f, variant, n):
        t = self._zeros(n, np.uint32)
        self._launch(self.patched, "build_table", np.int32(OPS[op]), np.int32(f), np.int32(variant), t, np.uint32(n))
        return t

    def fetch(self, t, n):
        return self._get(t, n, np.uint32)

    def free(self, t):
        t.free()

    def _counted(self, mod, name, *args):
        counts, samples, ns = self._zeros(NBINS, np.uint64), self._zeros(3 * NSAMPLES, np.uint32), self._zeros(1, np.uint32)
        secs = self._launch(mod, name, *args[:-2], counts, samples, ns, *args[-2:])
        n = int(self._get(ns, 1, np.uint32)[0])
        res = (self._get(counts, NBINS, np.uint64), self._get(samples, 3 * NSAMPLES, np.uint32).reshape(-1, 3)[:min(n, NSAMPLES)], secs)
        for a in (counts, samples, ns):
            a.free()
        return res

    def check(self, op, hyp, t0, t1):
        t0, t1 = (self.dummy if t is None else t for t in (t0, t1))
        return self._counted(self.patched, "check", np.int32(OPS[op]), np.int32(hyp), t0, t1, np.uint64(0), np.uint64(ALL))

    def errhist(self, op):
        hist, mx = self._zeros(NBINS * NHIST, np.uint64), self._zeros(NBINS, np.uint64)
        secs = self._launch(self.patched, "errhist", np.int32(OPS[op]), hist, mx, np.uint64(0), np.uint64(ALL),
                            shared=self.errhist_shared)
        out = (self._get(hist, NBINS * NHIST, np.uint64).reshape(NBINS, NHIST),
               self._get(mx, NBINS, np.uint64).view(np.float64), secs)
        hist.free()
        mx.free()
        return out

    def compose(self, op):
        return self._counted(self.plain, "compose", np.int32(OPS[op]), np.uint64(0), np.uint64(ALL))

    def sincos(self, op, chunk=1 << 28):
        """sin/cos.approx(x) as built vs MUFU(RZ(x * c)) patched, over all inputs in chunks."""
        buf = self.drv.mem_alloc(chunk * 4)
        counts, samples, secs = np.zeros(NBINS, np.uint64), [], 0.0
        c = np.float32(0.15915493667125701904)
        try:
            for start in range(0, ALL, chunk):
                secs += self._launch(self.plain, "sincos_dump", np.int32(OPS[op]), buf, np.uint64(start), np.uint64(chunk))
                cts, smp, s = self._counted(self.patched, "sincos_compare", np.int32(OPS[op]), c, buf,
                                            np.uint64(start), np.uint64(chunk))
                counts += cts
                samples += [list(map(int, r)) for r in smp][:NSAMPLES - len(samples)]
                secs += s
        finally:
            buf.free()
        return counts, np.array(samples, np.uint32).reshape(-1, 3), secs

    def dump16(self, op):
        out = self._zeros(65536, np.uint16)
        self._launch(self.plain, "dump16", np.int32(op), out)
        r = self._get(out, 65536, np.uint16)
        out.free()
        return r

    def check16x2(self, op, table):
        t = self.drv.to_device(np.ascontiguousarray(table, np.uint16))
        res = self._counted(self.plain, "check16x2", np.int32(op), t, np.uint64(0), np.uint64(ALL))
        t.free()
        return res


class DryDevice:
    """No GPU: MUFU answers with correctly rounded values, and "all inputs" are a sample of 2^16.
    Tests the driver's steps, selection, encoding and output; says nothing about a GPU."""
    SAMPLE = 1 << 16

    def environment(self):
        return {"gpu": "(dry run: no GPU)", "driver": "", "cuda_driver_api": ""}

    def close(self):
        pass

    def _mufu(self, op, x):
        return TB.round_f32_ftz(reference(op, x))

    def build_table(self, op, f, variant, n):
        return (op, f, variant, n)                       # made when fetched: only the kept ones are

    def fetch(self, t, n):
        op, f, variant, _ = t
        return self._mufu(op, canonical_inputs(op, variant, f, n))

    def free(self, t):
        pass

    def check(self, op, hyp, t0, t1):
        counts = np.zeros(NBINS, np.uint64)
        # the stand-in has exactly one exact hypothesis per op: the largest F / the first listed
        exact = {"ex2": 1 | 20 << 4, "sin": 1 | 20 << 4, "cos": 1 | 20 << 4}.get(op, hypotheses(op)[0][0])
        if hyp != exact:
            counts[200] = 1000 + hyp
        return counts, np.array([[0x3f800000, 1, 2]] if hyp != exact else [], np.uint32).reshape(-1, 3), 0.001

    def errhist(self, op):
        h = np.zeros((NBINS, NHIST), np.uint64)
        h[127, 16] = self.SAMPLE
        return h, np.zeros(NBINS), 0.001

    def compose(self, op):
        return np.zeros(NBINS, np.uint64), np.zeros((0, 3), np.uint32), 0.001

    def sincos(self, op):
        return np.zeros(NBINS, np.uint64), np.zeros((0, 3), np.uint32), 0.001

    def dump16(self, op):
        return (np.arange(65536, dtype=np.uint32) * 40503 % 65536).astype(np.uint16)

    def check16x2(self, op, table):
        return np.zeros(NBINS, np.uint64), np.zeros((0, 3), np.uint32), 0.001


# ---- steps ------------------------------------------------------------------------------------------------
OP16 = {0: "ex2.approx.f16", 1: "ex2.approx.ftz.bf16", 2: "tanh.approx.f16", 3: "tanh.approx.bf16",
        4: "hexp2 (cuda_fp16)", 5: "hexp (cuda_fp16)", 6: "hexp10 (cuda_fp16)", 7: "h2exp2 (cuda_fp16), low half"}
OP16X2 = {0: ("ex2.approx.f16x2", 0), 1: ("ex2.approx.ftz.bf16x2", 1), 2: ("tanh.approx.f16x2", 2),
          3: ("tanh.approx.bf16x2", 3)}


def bins_summary(counts):
    """{bin: count} of the nonzero bins ("s0 e127" names sign and biased exponent)."""
    return {f"s{b >> 8} e{b & 255}": int(c) for b, c in enumerate(counts) if c}


def samples_list(samples):
    return [[f"{int(a):#010x}", f"{int(b):#010x}", f"{int(c):#010x}"] for a, b, c in samples]


class Driver:
    def __init__(self, device, out, deadline, table_budget, log):
        self.d, self.out, self.deadline, self.budget, self.log = device, Path(out), deadline, table_budget, log
        self.doc = {"f32": {}, "f16": {}, "compose": {}, "sincos_composition": {}, "problems": [], "skipped": []}
        self.arrays = {}
        self.table_bytes = 0
        self.pending_tables = []          # (priority, op, name, table bits, reference bits)

    def left(self):
        return self.deadline - time.time()

    def step(self, name, fn, need=5.0):
        if self.left() < need:
            self.doc["skipped"].append(f"{name} ({self.left():.0f} s left)")
            self.log(f"skipped {name}: {self.left():.0f} s left")
            return
        t0 = time.time()
        try:
            fn()
        except Exception as e:   # noqa: BLE001 - logged; the next step runs
            self.doc["problems"].append(f"{name}: {type(e).__name__}: {e}")
            self.log(f"{name}: FAILED {type(e).__name__}: {e}")
            return
        self.log(f"{name}: {time.time() - t0:.1f} s")

    # 16-bit
    def f16(self):
        tabs = {}
        for op, what in OP16.items():
            tabs[op] = self.d.dump16(op)
            self.arrays[f"f16/{op}"] = tabs[op]
            self.doc["f16"][what] = {"table": f"f16_tables.npz:op{op}", "inputs": 65536}
        for op, (what, base) in OP16X2.items():
            counts, samples, secs = self.d.check16x2(op, tabs[base])
            self.doc["f16"][what] = {"against": f"{OP16[base]} on each half", "inputs": ALL,
                                     "mismatches": int(counts.sum()), "bins": bins_summary(counts),
                                     "samples": samples_list(samples), "seconds": round(secs, 3)}
            self.arrays[f"x2/{op}"] = counts

    # f32 primitives
    def primitive(self, op):
        rec = {"ptx": PTX[op], "hypotheses": []}
        self.doc["f32"][op] = rec
        built = {}
        best = None
        try:
            for hyp, what in hypotheses(op):
                if self.left() < 8:
                    rec["hypotheses"].append({"hyp": hyp, "what": what, "skipped": "time budget"})
                    continue
                ts = []
                for variant, f, n in tables_of(op, hyp):
                    if (variant, f) not in built:
                        built[variant, f] = (self.d.build_table(op, f, variant, n), n)
                    ts.append(built[variant, f][0])
                t0, t1 = (ts + [None, None])[:2]
                counts, samples, secs = self.d.check(op, hyp, t0, t1)
                total = int(counts.sum())
                self.arrays[f"check/{op}/{hyp}"] = counts
                rec["hypotheses"].append({"hyp": hyp, "what": what, "mismatches": total, "bins": bins_summary(counts),
                                          "samples": samples_list(samples), "seconds": round(secs, 3),
                                          "tables": [f"T{v}: {n} entries" for v, _, n in tables_of(op, hyp)]})
                self.log(f"  {op} hyp {hyp}: {total} mismatches ({secs * 1e3:.0f} ms)")
                if (op, hyp) in PROPERTIES:
                    rec["hypotheses"][-1]["property"] = True
                elif best is None or total < best[1]:
                    best = (hyp, total)
            if best is not None:
                rec["best"] = {"hyp": best[0], "mismatches": best[1], "exact": best[1] == 0}
                for variant, f, n in tables_of(op, best[0]):
                    bits = self.d.fetch(built[variant, f][0], n)
                    ref = TB.round_f32_ftz(reference(op, canonical_inputs(op, variant, f, n)))
                    self.pending_tables.append((PRIORITY.index(op), op, f"T{variant}_F{f}" if f else f"T{variant}",
                                                bits.copy(), ref))
                if op == "tanh":
                    self._tanh_table(rec, best)
        finally:
            for t, _ in built.values():
                self.d.free(t)
        if self.left() > 6:
            hist, maxabs, secs = self.d.errhist(op)
            self.arrays[f"errhist/{op}"] = hist
            self.arrays[f"maxabs/{op}"] = maxabs
            d = hist[:, :33].astype(np.int64)
            ulps = np.arange(-16, 17)
            rec["error_vs_correctly_rounded"] = {
                "inputs": int(hist.sum()), "exact": int(hist[:, 16].sum()),
                "ulp_histogram": {str(int(u)): int(c) for u, c in zip(ulps, d.sum(0)) if c},
                "beyond_16_ulps": int(hist[:, 33].sum()), "nan_mismatch": int(hist[:, 34].sum()),
                "max_ulps": int(max((abs(int(u)) for u, c in zip(ulps, d.sum(0)) if c), default=0)),
                "max_abs_error": float(np.nanmax(maxabs)) if maxabs.size else None, "seconds": round(secs, 3)}

    def _tanh_table(self, rec, best):
        """A hypothesis 'depends on the top K bits' with no mismatch and K <= 16: keep MUFU.TANH on
        every such input (2^(9+K) entries)."""
        hyp, total = best
        if total or hyp >= 32 or hyp > 16:
            return
        shift = 23 - hyp
        n = 1 << (9 + hyp)
        t = self.d.build_table("tanh", shift, 0, n)
        bits = self.d.fetch(t, n).copy()
        self.d.free(t)
        ref = TB.round_f32_ftz(reference("tanh", canonical_inputs("tanh", 0, shift, n)))
        self.pending_tables.append((PRIORITY.index("tanh"), "tanh", f"T0_K{hyp}", bits, ref))

    def compose(self):
        for op in ("ex2", "rcp", "rsqrt", "lg2", "sqrt"):
            counts, samples, secs = self.d.compose(op)
            self.arrays[f"compose/{op}"] = counts
            self.doc["compose"][op] = {"ptx": PTX[op].replace(".ftz", ""), "inputs": ALL, "mismatches": int(counts.sum()),
                                       "bins": bins_summary(counts), "samples": samples_list(samples), "seconds": round(secs, 3)}

    def sincos(self):
        for op in ("sin", "cos"):
            counts, samples, secs = self.d.sincos(op)
            self.doc["sincos_composition"][op] = {
                "what": f"{op}.approx.f32(x) vs MUFU.{op.upper()}(FMUL.RZ(x, 0x3e22f983)) over all x",
                "mismatches": int(counts.sum()), "bins": bins_summary(counts), "samples": samples_list(samples),
                "seconds": round(secs, 3)}

    def write_tables(self):
        """Encode every pending table (in threads: bz2 and numpy release the GIL), keep them in
        priority order while the budget lasts."""
        from concurrent.futures import ThreadPoolExecutor
        kept, left_out = [], []
        (self.out / "tables").mkdir(parents=True, exist_ok=True)
        pending = sorted(self.pending_tables, key=lambda t: t[0])
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            encoded = list(pool.map(lambda t: TB.encode(t[3], t[4]), pending))
        for (_, op, name, bits, ref), (meta, blobs) in zip(pending, encoded):
            size = sum(len(b) for b in blobs.values())
            meta.update(op=op, table=name, ptx=PTX[op])
            if self.table_bytes + size > self.budget:
                meta["kept"] = False
                left_out.append(meta)
                continue
            for k, b in blobs.items():
                (self.out / "tables" / f"{op}.{name}.{k}.bz2").write_bytes(b)
            self.table_bytes += size
            meta["kept"] = True
            kept.append(meta)
        self.doc["tables"] = kept + left_out

    def run(self, ops=PRIORITY):
        self.step("16-bit forms", self.f16)
        for op in ops:
            self.step(f"f32 {op}", lambda op=op: self.primitive(op), need=10)
        self.step("PTX forms without .ftz vs their SASS", self.compose)
        self.step("sin/cos.approx vs MUFU(RZ(x * c))", self.sincos, need=8)
        self.step("tables", self.write_tables, need=0)
        return self.doc


def nvcc_cubin(source, cubin):
    """Build `source` (a .cu beside this file) into `cubin` with nvcc -cubin -arch=sm_90 -O3;
    returns the command line."""
    from gpu_check.build import tool
    nvcc = tool("nvcc")
    if not nvcc:
        raise FileNotFoundError("nvcc not found")
    cmd = [nvcc, "-cubin", "-arch=sm_90", "-O3", "-o", str(cubin), str(HERE / source)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip()[:400]}")
    return cmd


def compile_probe(work, log):
    """(cubin, patched cubin, facts) from probe.cu with nvcc -cubin -arch=sm_90."""
    from gpu_check.build import tool
    cubin = Path(work) / "probe.cubin"
    cmd = nvcc_cubin("probe.cu", cubin)
    data = cubin.read_bytes()
    patched, hits = patch_sincos(data)
    facts = {"nvcc": " ".join(cmd), "patched_immediates": [f"{s}+{o:#x}" for s, o in hits]}
    cuobjdump = tool("cuobjdump")
    if cuobjdump:
        pp = Path(work) / "patched.cubin"
        pp.write_bytes(patched)
        for name, p in (("sass_plain", cubin), ("sass_patched", pp)):
            d = subprocess.run([cuobjdump, "-sass", str(p)], capture_output=True, text=True)
            facts[name] = [line.strip() for line in d.stdout.splitlines() if "MUFU" in line or "FMUL.RZ" in line]
    return data, patched, facts


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.sfu.measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-seconds", type=float, default=90.0, help="time budget (default 90)")
    ap.add_argument("--table-budget-mb", type=float, default=8.0, help="compressed tables kept at most (default 8)")
    ap.add_argument("--ops", default=",".join(PRIORITY), help=f"f32 primitives, in order (default {','.join(PRIORITY)})")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: a CPU stand-in (tests the driver only)")
    args = ap.parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad:
        print(f"sfu: --ops: unknown {bad[0]!r}; valid: {', '.join(PRIORITY)}", file=sys.stderr)
        return 2
    if needs.refuse("python -m gpu_check.sfu.measure", args, pycuda=True):   # before anything is compiled or written
        return 2
    t0 = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def log(s):
        print(f"[sfu] {s}", flush=True)

    facts = {}
    if args.dry_run:
        device = DryDevice()
    else:
        work = tempfile.mkdtemp(prefix="sfu_")
        try:
            cubin, patched, facts = compile_probe(work, log)
            device = GpuDevice(cubin, patched)
        except Exception as e:   # noqa: BLE001 - nothing can run: one line, exit 2
            print(f"sfu: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
        finally:
            shutil.rmtree(work, ignore_errors=True)
    env = dict(device.environment(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               host=platform.node(), python=platform.python_version(), dry_run=args.dry_run,
               command=" ".join(["python -m gpu_check.sfu.measure", *sys.argv[1:]] if argv is None else argv))
    log(f"{env['gpu']}, driver {env.get('driver')}; budget {args.max_seconds:.0f} s")
    drv = Driver(device, out, t0 + args.max_seconds, int(args.table_budget_mb * (1 << 20)), log)
    try:
        doc = drv.run(ops)
    finally:
        device.close()
    doc.update(schema=1, environment=env, probe=facts, seconds=round(time.time() - t0, 1),
               what="approximate-math instructions measured over every input; see gpu_check/sfu/measure.py")
    np.savez_compressed(out / "sfu_counts.npz", **{k.replace("/", "_"): v for k, v in drv.arrays.items()
                                                   if not k.startswith("f16/")})
    np.savez_compressed(out / "f16_tables.npz", **{f"op{k.split('/')[1]}": v for k, v in drv.arrays.items()
                                                   if k.startswith("f16/")})
    tmp = out / ".sfu.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, out / "sfu.json")
    for op, rec in doc["f32"].items():
        b = rec.get("best")
        if b:
            log(f"RESULT {op}: best hypothesis {b['hyp']}: {b['mismatches']} mismatches over 2^32 inputs"
                + (" (exact)" if b["exact"] else ""))
    for op, rec in doc["compose"].items():
        log(f"RESULT {rec['ptx']} vs its SASS sequence: {rec['mismatches']} mismatches")
    for op, rec in doc["sincos_composition"].items():
        log(f"RESULT {op}.approx vs MUFU(RZ(x*c)): {rec['mismatches']} mismatches")
    log(f"tables kept: {sum(t['kept'] for t in doc.get('tables', []))}/{len(doc.get('tables', []))}, "
        f"{drv.table_bytes / 2**20:.2f} MiB; {len(doc['problems'])} problems; {doc['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
