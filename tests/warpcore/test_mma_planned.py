"""warpcore.mma.planned (the instruction resolved and planned once, then numerics.api.run) gives
exactly what layoutsim.mma gives for the same raw operands, for every MMA of the catalog that
the executor runs (mma.sync, wgmma, nvcuda::wmma's, AMD's WMMA and MFMA on their archs), on
random raw bits (NaN, Inf and subnormal patterns included). No vendor figure: two routes to one
function must agree bit for bit; what layoutsim.mma itself computes is checked elsewhere
against the H200 and the published captures."""
import warnings

import numpy as np

from layoutsim import archs
from layoutsim.formats import raw_dtype
from layoutsim.isa.registry import _built, all_entries
from layoutsim.numerics import mma as numeric_mma
from layoutsim.warpcore import mma as core_mma

ARCH = {"mma": "sm_90", "wgmma": "sm_90", "wmma": "sm_90", "mfma": "gfx942"}


def _arch(ins):
    if ins.family == "wmma" and ".gfx11" in ins.name:
        return "gfx1100"
    if ins.family == "wmma" and ".gfx12" in ins.name:
        return "gfx1200"
    return ARCH.get(ins.family)


def _raw(fmt, shape, rng):
    dt = raw_dtype(fmt)
    bits = rng.integers(0, 1 << (8 * dt.itemsize), shape, dtype=np.uint64)
    return bits.astype(dt)


def test_planned_equals_layoutsim_mma():
    rng = np.random.default_rng(3)
    compared, seen = 0, set()
    for e in all_entries():
        try:
            ins = _built(e)
        except Exception:               # built per arch elsewhere
            continue
        arch = _arch(ins)
        if arch is None:
            continue
        try:
            ins.check_arch(archs.normalize(arch))
        except Exception:
            continue
        M, N, K = ins.shape
        f = ins.formats
        kind = (ins.family, arch, tuple(sorted(f.items())), K, tuple(sorted(map(str, ins.options.items()))))
        if kind in seen:                # wgmma's N = 8..256 of one form: the same plan but for N
            continue
        seen.add(kind)
        A, B = _raw(f["a"], (3, M, K), rng), _raw(f["b"], (3, K, N), rng)
        C = _raw(f.get("c", f["d"]), (3, M, N), rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = numeric_mma(ins, A, B, C, arch=arch, raw=True)
            except Exception:           # an operand format the API refuses: not an executor path
                continue
            got = core_mma.planned(ins, arch, A, B, C)
        if got is None:
            continue
        compared += 1
        assert got.dtype == want.dtype and np.array_equal(got, want), ins.name
    assert compared > 60
