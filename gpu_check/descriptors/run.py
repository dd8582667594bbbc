"""Run the descriptor probes on a lab (the GPU, or emulate.FakeLab), decode what every output saw,
and compare with layoutsim.smem.

    observe(lab, probe, descs)   -> int64 [cases, rows, cols]: the shared-window byte address each
                                    operand element was read from (-1: no id recognised), in the
                                    orientation of smem.operand_addresses ((M, K) for A, (K, N) for B)
    tma_landed(lab, case, via)   -> int64 [region elements]: the global element index that landed in
                                    each element-sized slot of the destination region (-1: none)
The whole plan runs as tasks (tasks.py), each phase in its own process (isolate.py);
`gpu-check run --group descriptors` enters through group.py.
"""
import json

import numpy as np

from layoutsim import formats as F
from layoutsim import smem
from layoutsim.packing import pack, unpack

from ..checks.common import Mismatch, Result
from . import ids, plan


# ---- wgmma probes ------------------------------------------------------------------------------
def _le_bytes(raw, e):
    raw = np.asarray(raw, np.uint64)
    return np.stack([((raw >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(np.uint8) for b in range(e)],
                    axis=-1).reshape(-1)


def image(probe, p, base):
    """Shared memory (bytes, SMEM_BYTES) of pass p: ids, and the one-hot B of an SS probe."""
    e = probe.elem_bits // 8
    img = np.zeros(plan.SMEM_BYTES, np.uint8)
    img[:plan.ID_BYTES] = _le_bytes(ids.element_image(probe.fmt, plan.ID_BYTES // e, p), e)
    if probe.under == "A":
        ins = probe.instr
        M, N, K = ins.shape
        fb = ins.formats["b"]
        eb = F.bits(fb) // 8
        one = int(F.encode(fb, np.array([1.0]))[0])
        onehot = np.where(np.arange(K)[:, None] == np.arange(N)[None, :] % K, one, 0)     # B[k][n]
        addr = smem.operand_addresses(ins, "B", plan.onehot_descriptor(probe, base)) - base
        for b in range(eb):
            img[addr + b] = (onehot >> (8 * b)) & 0xFF
    return img


def a_registers(probe):
    """The one-hot A of an RS probe, A[m][k] = (k == m % K), as the kernel's register words."""
    ins = probe.instr
    M, N, K = ins.shape
    fa = ins.formats["a"]
    one = int(F.encode(fa, np.array([1.0]))[0])
    a = np.where(np.arange(K)[None, :] == np.arange(M)[:, None] % K, one, 0).astype(np.uint64)
    return pack(ins.operand("A").fragment, a[None]).reshape(-1).astype(np.uint32)


def desc_pairs(probe, base, values):
    values = np.asarray(values, np.uint64)
    other = np.uint64(plan.onehot_descriptor(probe, base).encode()) if probe.under == "A" else np.uint64(0)
    pairs = np.zeros((len(values), 2), np.uint64)
    pairs[:, 0 if probe.under == "A" else 1] = values
    pairs[:, 1 if probe.under == "A" else 0] = other
    return pairs


def n_passes(probe):
    return ids.passes(plan.ID_BYTES // (probe.elem_bits // 8), ids.base(probe.fmt))


def observe(lab, probe, values, base):
    """(addresses int64 [n, rows, cols], inconsistent replicas per case int64 [n])."""
    ins = probe.instr
    M, N, K = ins.shape
    n = len(values)
    fd = ins.operand("D").fragment
    pairs = desc_pairs(probe, base, values)
    areg = a_registers(probe) if probe.under == "B" else np.zeros(128 * probe.wa, np.uint32)
    digits = []
    for p in range(n_passes(probe)):
        out = np.asarray(lab.wgmma(probe, pairs, image(probe, p, base), areg), np.uint32)
        d = unpack(fd, out[1:1 + n * 128 * probe.wd].reshape(n, 128, probe.wd))[:, 0]       # [n, M, N]
        digits.append(ids.digits_from_output(probe.fmt, probe.out_fmt, d))
    idx = ids.combine(digits, ids.base(probe.fmt))
    if probe.under == "A":
        obs, bad = idx[:, :, :K], np.zeros(n, np.int64)          # D[m][n] = A[m][n], N == K
    else:
        obs = idx[:, :K, :]                                      # D[m][n] = B[m % K][n]
        bad = (idx != obs[:, np.arange(M) % K, :]).reshape(n, -1).sum(axis=1)
    e = probe.elem_bits // 8
    return np.where(obs >= 0, base + obs * e, -1), bad


def model(probe, values, reading=smem.DOCUMENTED):
    return smem.operand_addresses(probe.instr, probe.under, np.asarray(values, np.uint64), probe.trans, reading)


def compare(probe, values, kinds, observed, inconsistent, phase=""):
    """One Result per probe: every element of every case against the documented reading."""
    want = model(probe, values)
    res = Result("descriptors", probe.instr.name,
                 f"{probe.under}{' trans' if probe.trans else ''} {phase + ' ' if phase else ''}descriptors",
                 cases=len(values), compared=int(want.size))
    bad = observed != want
    res.mismatches = int(bad.sum())
    for i in np.flatnonzero(bad.reshape(len(values), -1).any(axis=1))[:6]:
        r, c = map(int, np.argwhere(bad[i])[0])
        d = smem.Descriptor.decode(int(values[i]))
        res.details.append(Mismatch(int(i), f"{kinds[i]} {d}: {probe.under}[{r}][{c}]", "b32",
                                    int(want[i, r, c]), int(observed[i, r, c]) & 0xFFFFFFFF,
                                    note="addresses (observed -1 = no id)"))
    if inconsistent.any():
        res.explain.append(f"{int((inconsistent > 0).sum())} cases: rows m and m % K of D disagree "
                           f"(the one-hot A did not select one row of B)")
        res.status = "fail"
    return res.finish()


# ---- TMA ------------------------------------------------------------------------------------------
def tma_region(case):
    m = smem.mode(case.swizzle)
    rows = int(np.prod(case.box[1:]))
    pitch = max(case.box[0] * case.elem_bytes, m.span if m.bits else 0)
    return -(-(case.dst + rows * pitch + 256) // 128) * 128


def tma_landed(lab, case, via="param"):
    e = case.elem_bytes
    gdims = case.gdims[::-1]                                    # numpy order, outermost first
    n = int(np.prod(gdims))
    nbase = ids.byte_base(e)
    region = tma_region(case)
    digits = []
    for p in range(ids.passes(n, nbase)):
        g = ids.byte_image(e, n, p).astype(np.dtype(f"<u{e}")).reshape(gdims)
        out = np.asarray(lab.tma(case, g, region, via=via), np.uint32)
        if out[1]:
            raise RuntimeError(f"the TMA copy of box {case.box} never completed (mbarrier wait gave up)")
        vals = np.ascontiguousarray(out[2:2 + region // 4]).view(np.dtype(f"<u{e}"))
        digits.append(ids.byte_digits(vals))
    return ids.combine(digits, nbase), int(out[0])


def tma_model(case, base, reading=None):
    """Expected landed array: global element index per element slot of the region (-1 none)."""
    tmap = smem.TensorMap(case.box, case.elem_bytes, case.swizzle)
    addr = smem.box_addresses(tmap, base + case.dst, reading or smem.TmaReading()) - base
    region = tma_region(case)
    out = np.full(region // case.elem_bytes, -1, np.int64)
    gidx = np.ravel_multi_index(tuple(smem.tma.box_coords(tmap, case.coords)), case.gdims[::-1])
    ok = (addr >= 0) & (addr + case.elem_bytes <= region)
    out[addr[ok] // case.elem_bytes] = gidx[ok]
    return out


TMA_VIA = {"param": "the tensor map as a kernel parameter", "global": "the tensor map in global memory"}


def predicted_fault(case):
    """The one-line fault the model predicts for a TMA box (the innermost-coordinate rule,
    layoutsim.smem.coords_problem), or None when the copy should land."""
    return smem.coords_problem(smem.TensorMap(case.box, case.elem_bytes, case.swizzle), case.coords)


def fault_compare(cases, faulted):
    """The boxes of the coordinate rule: each must fault exactly when the model says it faults
    (faulted[i]: the H200 raised a fault on box i; a box the model lets land is compared by
    tma_compare too, a box that faulted has no landed bytes)."""
    res = Result("descriptors", "cp.async.bulk.tensor (TMA)", "faults (innermost coordinate rule)",
                 cases=len(cases), compared=len(cases))
    for i, (c, f) in enumerate(zip(cases, faulted)):
        want = predicted_fault(c) is not None
        if want != f:
            res.mismatches += 1
            res.details.append(Mismatch(i, f"box {c.box} x {c.elem_bytes} B at {c.coords}", "b32", int(want), int(f),
                                        note="1 = the copy faults (expected = layoutsim.smem, got = GPU)"))
    return res.finish()


def tma_compare(cases, landed, bases, via="param"):
    rule = " (innermost coordinate rule)" if cases and all(c.coord_probe for c in cases) else ""
    res = Result("descriptors", "cp.async.bulk.tensor (TMA)", f"landed bytes, {TMA_VIA[via]}{rule}", cases=len(cases))
    for i, (c, got, base) in enumerate(zip(cases, landed, bases)):
        want = tma_model(c, base)
        res.compared += int(want.size)
        bad = np.flatnonzero(want != got)
        res.mismatches += len(bad)
        if len(bad) and len(res.details) < 8:
            j = int(bad[0])
            res.details.append(Mismatch(i, f"box {c.box} x {c.elem_bytes} B, {c.swizzle}, dst +{c.dst}: "
                                           f"slot at byte {j * c.elem_bytes}", "b32",
                                        int(want[j]) & 0xFFFFFFFF, int(got[j]) & 0xFFFFFFFF,
                                        note="global element index (-1 = nothing landed)"))
    return res.finish()


def results_json(results):
    return json.dumps([r.to_json() for r in results], indent=1, default=str)
