"""Find what ptxas makes of every nvcuda::wmma load, store and mma for sm_90, and write it to
layoutsim/ptx/data/wmma_sm_90.json (what the executor costs and computes).

    python -m gpu_check.wmma_probe [--cuobjdump PATH] [--out FILE]

One small kernel per (operation, use, layout, shape, type, state space) is compiled with
`nvcc -cubin -arch=sm_90` and disassembled with `cuobjdump -sass`. Recorded per PTX op:
  loads/stores: the SASS memory instructions of the wmma op, in order, with the immediate
    offsets they carry (the leading dimension is a compile-time constant, LD below, so the
    offsets show which fragment elements each access moves);
  mma: the tensor-core instructions (HMMA/IMMA/DMMA with their shapes) and MOVM transposes.
Needs nvcc and cuobjdump (CUDA 12/13; `pip install triton` ships cuobjdump), so it lives with the
GPU tools, not in the executor that reads its file (layoutsim/ptx/wmma.py).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from layoutsim import sass as SASS     # absolute: the probe is a GPU tool, not the executor
from layoutsim.files import write_atomic
from layoutsim.ptx.wmma import DATA as OUT

SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4)}
CTYPE = {"f16": "half", "bf16": "__nv_bfloat16", "tf32": "wmma::precision::tf32", "s8": "signed char",
         "u8": "unsigned char", "f32": "float", "s32": "int", "f64": "double"}
STORE_T = {"f16": "half", "bf16": "__nv_bfloat16", "tf32": "float", "s8": "signed char",
           "u8": "unsigned char", "f32": "float", "s32": "int", "f64": "double"}
# (shape, a/b type, accumulator types): the wmma forms of PTX ISA 9.7.14.4.3/5
FAMILIES = [(s, "f16", ("f16", "f32")) for s in ("m16n16k16", "m32n8k16", "m8n32k16")] + \
           [(s, "bf16", ("f32",)) for s in ("m16n16k16", "m32n8k16", "m8n32k16")] + \
           [(s, t, ("s32",)) for s in ("m16n16k16", "m32n8k16", "m8n32k16") for t in ("s8", "u8")] + \
           [("m16n16k8", "tf32", ("f32",)), ("m8n8k4", "f64", ("f64",))]
LD = 40     # elements between rows/columns in the probes: a multiple of 8 and of 16 bytes


def _variants():
    """(kernel name, PTX op name, C++ body) for every probe."""
    out = []
    for shape, ab, accs in FAMILIES:
        M, N, K = SHAPES[shape]
        for use, t in (("a", ab), ("b", ab)) + tuple(("c", c) for c in accs):
            for layout in ("row", "col"):
                for space in ("shared", "global"):
                    out.append(_load(shape, use, t, layout, space))
        for d in accs:
            for layout in ("row", "col"):
                for space in ("shared", "global"):
                    out.append(_store(shape, d, layout, space))
        for d in accs:
            for c in accs:
                if ab in ("f16",) or d == c:
                    for al in ("row", "col"):
                        for bl in ("row", "col"):
                            out.append(_mma(shape, ab, d, c, al, bl))
    seen = set()
    return [v for v in out if not (v[0] in seen or seen.add(v[0]))]


def _frag(use, shape, t, layout):
    M, N, K = SHAPES[shape]
    kind = {"a": "wmma::matrix_a", "b": "wmma::matrix_b", "c": "wmma::accumulator"}[use]
    lay = "" if use == "c" else f", wmma::{layout}_major"
    return f"wmma::fragment<{kind}, {M}, {N}, {K}, {CTYPE[t]}{lay}>"


def _load(shape, use, t, layout, space):
    name = f"ld_{use}_{layout}_{shape}_{t}_{space}"
    st = STORE_T[t]
    src = "s" if space == "shared" else "g"
    lay = f", wmma::mem_{layout}_major" if use == "c" else ""
    body = (f"extern \"C\" __global__ void {name}(const {st}* g, {st}* out) {{\n"
            f"  __shared__ __align__(128) {st} s[4096];\n"
            f"  {_frag(use, shape, t, layout)} f;\n"
            f"  wmma::load_matrix_sync(f, {src}, {LD}{lay});\n"
            f"  for (int i = 0; i < f.num_elements; i++) out[i * 32 + threadIdx.x] = f.x[i];\n}}\n")
    op = f"wmma.load.{use}.sync.aligned.{layout}.{shape}.{space}.{t}"
    return name, op, body


def _store(shape, d, layout, space):
    name = f"st_d_{layout}_{shape}_{d}_{space}"
    st = STORE_T[d]
    dst = "s" if space == "shared" else "out"
    body = (f"extern \"C\" __global__ void {name}(const {st}* g, {st}* out) {{\n"
            f"  __shared__ __align__(128) {st} s[4096];\n"
            f"  {_frag('c', shape, d, layout)} f;\n"
            f"  for (int i = 0; i < f.num_elements; i++) f.x[i] = g[i * 32 + threadIdx.x];\n"
            f"  wmma::store_matrix_sync({dst}, f, {LD}, wmma::mem_{layout}_major);\n"
            + ("  __syncthreads(); out[threadIdx.x] = s[threadIdx.x * 7];\n" if space == "shared" else "")
            + "}\n")
    op = f"wmma.store.d.sync.aligned.{layout}.{shape}.{space}.{d}"
    return name, op, body


def _mma(shape, ab, d, c, al, bl):
    name = f"mma_{al}_{bl}_{shape}_{ab}_{d}_{c}"
    st = STORE_T[ab]
    cs = STORE_T[c]
    ds = STORE_T[d]
    body = (f"extern \"C\" __global__ void {name}(const {st}* A, const {st}* B, const {cs}* C, {ds}* D) {{\n"
            f"  {_frag('a', shape, ab, al)} a;\n  {_frag('b', shape, ab, bl)} b;\n"
            f"  {_frag('c', shape, c, 'row')} c;\n  {_frag('c', shape, d, 'row')} d;\n"
            f"  wmma::load_matrix_sync(a, A, {LD});\n  wmma::load_matrix_sync(b, B, {LD});\n"
            f"  wmma::load_matrix_sync(c, C, {LD}, wmma::mem_row_major);\n"
            f"  wmma::mma_sync(d, a, b, c);\n"
            f"  wmma::store_matrix_sync(D, d, {LD}, wmma::mem_row_major);\n}}\n")
    if ab == "f16":
        op = f"wmma.mma.sync.aligned.{al}.{bl}.{shape}.{d}.{c}"
    else:
        op = f"wmma.mma.sync.aligned.{al}.{bl}.{shape}.{d}.{ab}.{ab}.{c}"
    return name, op, body


def _sass(cubin, cuobjdump):
    return SASS.cuobjdump_functions(subprocess.run([cuobjdump, "-sass", str(cubin)], check=True,
                                                   capture_output=True, text=True).stdout)


def _summarize(kind, space, lines):
    if kind == "mma":
        mmas = [m.group(1) for line in lines for m in [SASS.MMA.search(line)] if m]
        movm = sum(1 for line in lines if line.startswith(SASS.TRANSPOSE) or f" {SASS.TRANSPOSE}" in line)
        return {"sass": mmas, "movm": movm}
    # generic LD/ST appear where the PTX op has no state space (bf16, tf32, f64 wmma)
    want = SASS.access_prefixes({"load": "ld", "store": "st"}[kind], space)
    acc = []
    for line in lines:
        m = SASS.ACCESS.search(line)
        if m and m.group(1).startswith(want):
            acc.append({"sass": m.group(1), "offset": SASS.address_offset(m.group(2))})
    return {"accesses": acc}


def find_cuobjdump(path=None):
    cands = [path, os.environ.get("LAYOUTSIM_CUOBJDUMP"), shutil.which("cuobjdump")]
    try:
        import triton
        cands.append(str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"))
    except ImportError:
        pass
    for c in cands:
        if c and Path(c).exists():
            return c
    return None


def generate(cuobjdump, out=OUT):
    variants = _variants()
    src = "#include <mma.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\nusing namespace nvcuda;\n" + \
        "".join(v[2] for v in variants)
    with tempfile.TemporaryDirectory() as d:
        cu, cubin = Path(d) / "probe.cu", Path(d) / "probe.cubin"
        cu.write_text(src)
        cmd = ["nvcc", "-cubin", "-arch=sm_90", "-O3", str(cu), "-o", str(cubin)]
        subprocess.run(cmd, check=True, capture_output=True)
        funcs = _sass(cubin, cuobjdump)
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    entries = []
    for name, op, _ in variants:
        kind = {"ld": "load", "st": "store", "mma": "mma"}[name.split("_")[0]]
        space = name.rsplit("_", 1)[1] if kind != "mma" else None
        entries.append(dict(op=op, kernel=name, **_summarize(kind, space, funcs[name])))
    doc = {"format": 1, "arch": "sm_90", "leading_dimension": LD,
           "source": f"nvcc -cubin -arch=sm_90 -O3 ({nvcc}); cuobjdump -sass; probes generated by "
                     f"gpu_check/wmma_probe.py",
           "entries": entries}
    write_atomic(out, json.dumps(doc, indent=0) + "\n", "wmma lowering data")
    return doc


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gpu_check.wmma_probe", description=__doc__.split("\n")[0])
    p.add_argument("--cuobjdump")
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    tool = find_cuobjdump(a.cuobjdump)
    if tool is None or shutil.which("nvcc") is None:
        print("wmma_probe: needs nvcc and cuobjdump (pip install triton ships cuobjdump)", file=sys.stderr)
        return 2
    doc = generate(tool, a.out)
    print(f"{len(doc['entries'])} wmma ops -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
