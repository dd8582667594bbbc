"""MMA-Sim (PyPI `mmasim`, arXiv:2511.10909; validated by its authors bitwise on B200 and RTX
Blackwell) as the oracle of layoutsim's Blackwell arithmetic: random and special-value dot
products per tcgen05.mma kind, compared bit for bit with `layoutsim.mma`.

Used by tests/numerics/test_blackwell_mmasim.py (a few thousand cases), by
`python -m tests.numerics.mmasim_oracle --cases 1000000` (the agreement count per kind), and, for
every MMA a kernel executed in layoutsim.ptx (record_mmas=True), by tests/blackwell_oracle.py
(tcgen05_op, records_d, compare_records: MMA-Sim's D from the MMA's own A, B, C and scales)."""
import argparse
import sys
import time

import numpy as np

import layoutsim
from layoutsim.formats import decode

# (label, tcgen05.mma name, types, MMA-Sim class, MMA-Sim shape_and_type, scale block)
N = 8
KINDS = [
    ("f16", f"tcgen05.mma.cta_group::1.kind::f16.m128n{N}k16", "f32.f16.f16", "mma",
     f"m128n{N}k16.kind::f16.f32.f16.f16", 0),
    ("bf16", f"tcgen05.mma.cta_group::1.kind::f16.m128n{N}k16", "f32.bf16.bf16", "mma",
     f"m128n{N}k16.kind::f16.f32.bf16.bf16", 0),
    ("f16->f16", f"tcgen05.mma.cta_group::1.kind::f16.m128n{N}k16", "f16.f16.f16", "mma",
     f"m128n{N}k16.kind::f16.f16.f16.f16", 0),
    ("tf32", f"tcgen05.mma.cta_group::1.kind::tf32.m128n{N}k8", "f32.tf32.tf32", "mma",
     f"m128n{N}k8.kind::tf32.f32.tf32.tf32", 0),
    ("f8f6f4 e4m3.e5m2", f"tcgen05.mma.cta_group::1.kind::f8f6f4.m128n{N}k32", "f32.e4m3.e5m2", "mma",
     f"m128n{N}k32.kind::f8f6f4.f32.e4m3.e5m2", 0),
    ("f8f6f4 e2m3.e2m1->f16", f"tcgen05.mma.cta_group::1.kind::f8f6f4.m128n{N}k32", "f16.e2m3.e2m1",
     "mma", f"m128n{N}k32.kind::f8f6f4.f16.e2m3.e2m1", 0),
    ("f8f6f4 e3m2.e4m3", f"tcgen05.mma.cta_group::1.kind::f8f6f4.m128n{N}k32", "f32.e3m2.e4m3", "mma",
     f"m128n{N}k32.kind::f8f6f4.f32.e3m2.e4m3", 0),
    ("mxf8f6f4 e4m3", f"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n{N}k32",
     "f32.e4m3.e4m3", "bs", f"m128n{N}k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0", 32),
    ("mxf8f6f4 e2m1.e3m2", f"tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n{N}k32",
     "f32.e2m1.e3m2", "bs", f"m128n{N}k32.kind::mxf8f6f4.block32.f32.e2m1.e3m2.ue8m0", 32),
    ("mxf4", f"tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X.m128n{N}k64",
     "f32.e2m1.e2m1", "bs", f"m128n{N}k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0", 32),
    ("mxf4nvf4 ue4m3", f"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.m128n{N}k64",
     "f32.e2m1.e2m1.ue4m3", "bs", f"m128n{N}k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3", 16),
    ("mxf4nvf4 ue8m0 x2", f"tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::2X.m128n{N}k64",
     "f32.e2m1.e2m1", "bs", f"m128n{N}k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.ue8m0", 32),
]
# sm_120a's .kind:: mma.sync forms (MMA-Sim's "RTX Blackwell"): types are in the names
KINDS += [
    ("sm_120 f8f6f4 e2m1.e3m2", "mma.m16n8k32.kind::f8f6f4.f32.e2m1.e3m2.f32", None, "mma",
     "m16n8k32.kind::f8f6f4.f32.e2m1.e3m2.f32", 0),
    ("sm_120 f8f6f4 e4m3.e5m2->f16", "mma.m16n8k32.kind::f8f6f4.f16.e4m3.e5m2.f16", None, "mma",
     "m16n8k32.kind::f8f6f4.f16.e4m3.e5m2.f16", 0),
    ("sm_120 mxf8f6f4 e5m2.e2m3", "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e5m2.e2m3.f32.ue8m0",
     None, "bs", "m16n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m3.f32.ue8m0", 32),
    ("sm_120 mxf4", "mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", None,
     "bs", "m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0", 32),
    ("sm_120 mxf4nvf4 ue4m3", "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
     None, "bs", "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3", 16),
]
WIDTH = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6,
         "e2m1": 4, "ue8m0": 8, "ue4m3": 8}


def _random(rng, fmt, shape, special):
    """Raw bits: uniform over every pattern (special=True: NaN, Inf, zeros, subnormals and the
    largest values where the format has them), or values near 1 with mixed exponents."""
    w = WIDTH[fmt]
    if special or w <= 8:
        raw = rng.integers(0, 1 << w, shape, dtype=np.uint64)
    else:
        raw = rng.integers(0, 1 << w, shape, dtype=np.uint64)
        e_bits = {"f16": (10, 5, 15), "bf16": (7, 8, 127), "tf32": (23, 8, 127), "f32": (23, 8, 127)}[fmt]
        mb, eb, bias = e_bits
        exp = np.clip(bias + rng.integers(-12, 12, shape), 1, (1 << eb) - 2).astype(np.uint64)
        raw = (raw & np.uint64((1 << mb) - 1)) | (exp << np.uint64(mb)) | (
            rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(w - 1))
    if fmt == "tf32":
        raw &= np.uint64(0xFFFFE000)
    if fmt == "ue8m0" and not special:
        raw = rng.integers(112, 142, shape, dtype=np.uint64)
    return raw.astype({4: np.uint8, 6: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32}[w])


def _torch(fmt, raw):
    import torch
    if fmt in ("e2m3", "e3m2"):
        return torch.from_numpy(raw.astype(np.uint8))
    if fmt == "e2m1":                         # MMA-Sim's f8f6f4 container: fp4 in bits 5:2
        return torch.from_numpy(raw.astype(np.uint8) << 2)
    view = {"f16": (np.uint16, torch.float16), "bf16": (np.uint16, torch.bfloat16),
            "tf32": (np.uint32, torch.float32), "f32": (np.uint32, torch.float32),
            "e4m3": (np.uint8, torch.float8_e4m3fn), "e5m2": (np.uint8, torch.float8_e5m2),
            "ue8m0": (np.uint8, torch.float8_e8m0fnu), "ue4m3": (np.uint8, torch.float8_e4m3fn)}[fmt]
    return torch.from_numpy(raw.astype(view[0])).view(view[1])


def _kind(label):
    """(layoutsim Instruction, arch, types "d.a.b[.scale]", MMA-Sim class, MMA-Sim name, block) of a KINDS label."""
    from mmasim.nv_ptx import MMA, MMABlockScale, TCGen05MMA, TCGen05MMABlockScale
    _, name, types, cls, mmasim_name, block = next(k for k in KINDS if k[0] == label)
    sm120 = types is None
    arch, classes = ("sm_120a", (MMA, MMABlockScale)) if sm120 else ("sm_100a", (TCGen05MMA, TCGen05MMABlockScale))
    inst = layoutsim.get(name)
    if sm120:
        f = inst.formats
        types = ".".join([f["d"], f["a"], f["b"]] + ([f["scale"]] if "scale" in f else []))
    op = classes[cls != "mma"]("RTX Blackwell" if sm120 else "Blackwell", mmasim_name)
    return inst, arch, types, op, block, sm120


def mmasim_d(label, A, B, C, scale_a=None, scale_b=None):
    """MMA-Sim's D raw bits [batch, M, n] for the raw A [batch, M, K], B [batch, K, n], C [batch, M, n]
    (and the raw scale matrices [batch, M, K/block], [batch, K/block, n]) of one KINDS label."""
    _, _, types, op, block, _ = _kind(label)
    return dpa(op, types, block, A, B, C, scale_a, scale_b)


def dpa(op, types, block, A, B, C, scale_a=None, scale_b=None):
    """MMA-Sim operation `op`'s D raw bits [batch, M, n] (types "d.a.b[.scale]", block: the scale
    block, 0 for a dense kind): every D element one call of its dot-product API (`dpa`)."""
    import torch
    d, fa, fb = types.split(".")[:3]
    fs = (types.split(".") + ["ue8m0"])[3] if block else None
    batch, M, K = A.shape
    n = B.shape[2]
    av = np.broadcast_to(A[:, :, None, :], (batch, M, n, K)).reshape(-1, K)
    bv = np.broadcast_to(np.swapaxes(B, 1, 2)[:, None], (batch, M, n, K)).reshape(-1, K)
    args = [_torch(fa, av), _torch(fb, bv), _torch(d, C.reshape(-1))]
    if block and K == 64:                      # GST-FDPA: MMA-Sim unpacks uint8 pairs; give values
        args[:2] = [torch.from_numpy(decode(f, x).astype(np.float16)) for f, x in ((fa, av), (fb, bv))]
    if block:
        sa = np.broadcast_to(scale_a[:, :, None, :], (batch, M, n, K // block)).reshape(-1, K // block)
        sb = np.broadcast_to(np.swapaxes(scale_b, 1, 2)[:, None], (batch, M, n, K // block)).reshape(-1, K // block)
        args += [_torch(fs, sa), _torch(fs, sb)]
    ref = op.dpa(*args).numpy().view(np.uint32 if d == "f32" else np.uint16)
    return ref.reshape(batch, M, n)


# ---- the MMAs a kernel executed (layoutsim.ptx.run(..., record_mmas=True): Run.mmas) -------------
# MMA-Sim 0.1 models tcgen05.mma .kind::tf32, f16, f8f6f4, mxf8f6f4, mxf4 and mxf4nvf4 of
# cta_group::1 (mmasim/nv_ptx/isa_tcgen05mma.py; its TODO: .ws and .cta_group::2), not .kind::i8
# (integer: exact, tests/numerics/test_blackwell_mmasim.py test_i8_is_exact).
MODELLED = ("tf32", "f16", "f8f6f4", "mxf8f6f4", "mxf4", "mxf4nvf4")


def tcgen05_op(name, types):
    """(MMA-Sim operation, scale block or 0) for the dot products of tcgen05.mma entry `name` with
    `types`. A cta_group::2 MMA (M=256 over the CTA pair) is given MMA-Sim's cta_group::1 model of
    the same kind, N and K with M/2 rows: each D element is the same K-long dot product of a row of
    A and a column of B (PTX ISA 9.7.16.5: the pair computes one D = A*B + D; CuTe's 2x1SM atoms
    split M over the pair); MMA-Sim does not model the pair, so its arithmetic there is assumed
    to be the single CTA's. A .ws MMA (M = 32, 64, 128) likewise gets the cta_group::1 M = 128 model of its
    kind, N and K (MMA-Sim's TODO lists .ws; each D element is the same K-long dot product), and so does a
    block-scaled pair MMA of M = 128 (MMA-Sim's block-scaled models are M = 128)."""
    from mmasim.nv_ptx import TCGen05MMA, TCGen05MMABlockScale
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    kind = next(p.split("::")[1] for p in name.split(".") if p.startswith("kind::"))
    if kind not in MODELLED:
        raise ValueError(f"MMA-Sim does not model tcgen05.mma .kind::{kind} (it models {', '.join(MODELLED)})")
    m = 128 if ".ws." in name or "block_scale" in name else M // (2 if "cta_group::2" in name else 1)
    d, fa, fb = types.split(".")[:3]
    if "block_scale" in name:
        block = inst.options["block"]
        fs = (types.split(".") + ["ue8m0"])[3]
        return TCGen05MMABlockScale("Blackwell", f"m{m}n{N}k{K}.kind::{kind}.block{block}.{d}.{fa}.{fb}.{fs}"), block
    return TCGen05MMA("Blackwell", f"m{m}n{N}k{K}.kind::{kind}.{d}.{fa}.{fb}"), 0


def _negated(x, fmt, on):
    """The instruction descriptor's negate bit: the element's sign bit (its format's top bit) flipped."""
    return x ^ x.dtype.type(1 << (WIDTH[fmt] - 1)) if on else x


def records_d(records):
    """MMA-Sim's D raw bits [batch, M, N] (D's width) of executed MMAs of one entry, types and
    negation (layoutsim.ptx.events.Mma records), in one call of MMA-Sim's dot-product API. A record
    with scale-input-d gives MMA-Sim its C * 2^-scale_d (layoutsim.numerics.scale_d: exact, assumed;
    MMA-Sim has no such operand)."""
    from layoutsim.numerics.scale_d import scale_c
    rec = records[0]
    sparse = rec.name.startswith("tcgen05.mma.sp.")
    op, block = tcgen05_op(dense_half(rec.name) if sparse else rec.name, rec.types)
    fa, fb = rec.types.split(".")[1:3]
    stack = lambda f: np.stack([f(r) for r in records])             # noqa: E731
    scales = (stack(lambda r: r.scale_a), stack(lambda r: r.scale_b)) if block else (None, None)
    A, B = _negated(stack(lambda r: r.a), fa, rec.neg_a), _negated(stack(lambda r: r.b), fb, rec.neg_b)
    C = stack(lambda r: scale_c(rec.types.split(".")[0], r.c, r.scale_d))
    if not sparse:
        return dpa(op, rec.types, block, A, B, C, *scales)
    h = A.shape[2] // 2                 # .sp: the logical A's two K halves, chained
    return dpa(op, rec.types, block, A[:, :, h:], B[:, h:], dpa(op, rec.types, block, A[:, :, :h], B[:, :h], C))


def dense_half(name):
    """The dense tcgen05.mma entry whose two chained MMAs of the K halves are a tcgen05.mma.sp entry's
    arithmetic on its logical A (layoutsim.numerics.sparse_tcgen05: the kind's dense arithmetic over
    the logical K, assumed; MMA-Sim does not model .sp): the same kind, M and N, K/2."""
    K = layoutsim.get(name).shape[2]
    return name.replace("tcgen05.mma.sp.", "tcgen05.mma.").replace(f"k{K}", f"k{K // 2}")


def compare_records(records, chunk=1 << 19):
    """Every executed MMA against MMA-Sim, bit for bit: {"kind::K d.a.b[.s]": {"mmas", "elements",
    "differ", "first"}} (first: the first differing (MMA index, row, col, executor, MMA-Sim) or None).
    MMAs of one form go to MMA-Sim together, about `chunk` dot products a call (its throughput
    grows with the batch). A 16-bit D must have 0 in the high half of the executor's word."""
    out, groups = {}, {}
    for i, rec in enumerate(records):
        groups.setdefault((rec.name, rec.types, rec.neg_a, rec.neg_b), []).append(i)
    for (name, types, _, _), idx in groups.items():
        kind = next(p for p in name.split(".") if p.startswith("kind::"))
        row = out.setdefault(f"{kind} {types}", {"mmas": 0, "elements": 0, "differ": 0, "first": None})
        per = max(1, chunk // records[idx[0]].d.size)
        for k in range(0, len(idx), per):
            part = idx[k:k + per]
            ref = records_d([records[i] for i in part])
            got = np.stack([records[i].d for i in part])
            got = got if ref.dtype == np.uint32 else np.where(got >> 16 == 0, got, 1 << 31)
            bad = np.argwhere(got != ref)
            row["mmas"] += len(part)
            row["elements"] += ref.size
            row["differ"] += len(bad)
            if len(bad) and row["first"] is None:
                j, r, c = bad[0]
                row["first"] = (part[j], int(r), int(c), int(got[j, r, c]), int(ref[j, r, c]))
    return out


def compare(label, cases, seed=0, special=False):
    """(cases compared, cases that differ, first difference or None) for one KINDS label:
    `cases` random dot products (rows of A against columns of B, batched)."""
    inst, arch, types, _, block, sm120 = _kind(label)
    M, n, K = inst.shape
    d, fa, fb = types.split(".")[:3]
    fs = (types.split(".") + ["ue8m0"])[3] if block else None
    rng = np.random.default_rng(seed)
    batch = max(1, -(-cases // (M * n)))
    A = _random(rng, fa, (batch, M, K), special)
    B = _random(rng, fb, (batch, K, n), special)
    C = _random(rng, d, (batch, M, n), special)
    kw = {}
    if block:
        kw = dict(scale_a=_random(rng, fs, (batch, M, K // block), special),
                  scale_b=_random(rng, fs, (batch, K // block, n), special))
    ours = layoutsim.mma(inst, A, B, C, arch=arch, raw=True, types=None if sm120 else types, **kw)
    ref = mmasim_d(label, A, B, C, **kw).reshape(-1)
    got = ours.reshape(-1)
    bad = np.nonzero(got != ref)[0]
    first = None if not len(bad) else (int(bad[0]), int(got[bad[0]]), int(ref[bad[0]]))
    return got.size, len(bad), first


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", type=int, default=1_000_000, help="random dot products per kind")
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument("--only", default="", help="comma-separated labels (default: every kind)")
    args = ap.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    for label, *_ in KINDS:
        if only and label not in only:
            continue
        t = time.time()
        total = diff = 0
        for i, start in enumerate(range(0, args.cases, args.chunk)):
            for special in (False, True):
                n, nd, first = compare(label, min(args.chunk, args.cases - start) // 2 or 1, seed=i,
                                       special=special)
                total += n
                diff += nd
                if first and diff == nd:
                    print(f"  first difference ({label}): case {first[0]}: layoutsim {first[1]:#x}, "
                          f"MMA-Sim {first[2]:#x}")
        print(f"{label:24s} {total:9d} cases, {diff} differ ({time.time() - t:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
