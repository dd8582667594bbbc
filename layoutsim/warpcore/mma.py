"""MMAs on register words: gather A, B, C through the catalog fragments, compute D with
layoutsim.mma, scatter D into register words. mma.sync (NVIDIA), AMD WMMA / SWMMAC / MFMA, and
the register side of wgmma and nvcuda::wmma.

`compute(A, B, C, **extra)` is the arithmetic, default `layoutsim.mma(ins, A, B, C, arch=arch,
raw=True)`; callers pass their own only to put a different model of the same instruction in its
place (the simulator's `mma=` option, wmma's tile sequence).
"""
import warnings

import numpy as np

from ..formats import raw_dtype
from ..numerics import api
from ..numerics import mma as numeric_mma
from . import registers as R

_PLANS = {}          # (id(instruction) or its catalog name, arch) -> (instruction, Plan, why unverified)


def operands(ins, words, keys=("A", "B", "C")):
    """{key: operand matrices} of the operands whose register words are in `words` (uint32
    [batch, lanes, n] by key; IDX for SWMMAC's sparsity index)."""
    return {k: R.operand(ins.operand(k).fragment, words[k]) for k in keys if words.get(k) is not None}


def default_compute(ins, arch):
    def compute(A, B, C, **extra):
        if not extra:
            D = planned(ins, arch, A, B, C)
            if D is not None:
                return D
        return numeric_mma(ins, A, B, C, arch=arch, raw=True, **extra)
    return compute


def planned(ins, arch, A, B, C):
    """layoutsim.mma(ins, A, B, C, arch=arch, raw=True) for the raw operands the core gathers
    (batch, M, K), (batch, K, N), (batch, M, N) in their raw dtypes, with the instruction
    resolved and planned once per (instruction, arch) instead of on every call (what
    layoutsim.mma spends most of a small batch's time on); None for anything else (the caller
    then calls layoutsim.mma). Its memory budget check is not repeated: a batch of the executor
    is at most MAX_BATCH_THREADS threads (ptx/launch.py), so its operands are a few MiB."""
    key = (ins if isinstance(ins, str) else id(ins), arch)       # a catalog name, or an Instruction
    got = _PLANS.get(key)
    if got is None or (got[0] is not ins and not isinstance(ins, str)):
        inst, prof = api.resolve(ins, arch)
        if inst.family == "swmmac" or api.make_plan(inst, prof).kind == "scaled":
            # swmmac's index, and the MMA-Sim ST-FDPA kinds (sm_120 .kind:: mma.sync, tcgen05's f8f6f4 and
            # block-scaled kinds), which only layoutsim.mma runs (api.run has no such kind)
            got = (ins, None, "", None)
        else:
            plan = api.make_plan(inst, prof)
            got = (ins, plan, api.unverified(plan) and f"{prof.arch} {inst.name}: {api.unverified(plan)}",
                   (raw_dtype(plan.a), raw_dtype(plan.b), raw_dtype(plan.c)))
        _PLANS[key] = got
    _, plan, why, dtypes = got
    if plan is None or A.ndim != 3 or B.ndim != 3 or C.ndim != 3:
        return None
    M, N, K = plan.shape
    n = A.shape[0]
    if (A.shape, B.shape, C.shape) != ((n, M, K), (n, K, N), (n, M, N)) or (A.dtype, B.dtype, C.dtype) != dtypes:
        return None
    if why:
        warnings.warn(why, api.UnverifiedProfileWarning, stacklevel=3)
    return api.run(plan, A, B, C)


def result(ins, D, batch, old=None, frag=None):
    """Register words of D (the operand convention of registers.operand), its shape checked."""
    frag = ins.operand("D").fragment if frag is None else frag
    return R.result_words(frag, raw_result(D, batch, frag), old)


def raw_result(D, batch, frag):
    """D as raw bits (a float D viewed as its unsigned integers), its shape checked against the
    D fragment `frag` for `batch` instances."""
    D = np.asarray(D)
    one = frag.shape[0] == 1                         # one matrix; MFMA blocks stay a dimension
    want = (batch, *(frag.shape[1:] if one else frag.shape))
    if tuple(D.shape) != want:
        raise AssertionError(f"layoutsim.mma returned shape {tuple(D.shape)}, expected {want}")
    return D.view(np.dtype(f"u{D.dtype.itemsize}")) if D.dtype.kind != "u" else D


def run(ins, words, arch=None, compute=None, old=None, frags=None):
    """D's register words uint32 [batch, lanes, n] = A*B + C of the operand words `words`
    ({"A", "B", "C"[, "IDX"]}: uint32 [batch, lanes, n]; C None: zero). `frags`: the fragment
    maps by key, for an MMA not in the catalog's operand table (nvcuda::wmma). `old`: D's
    words before, whose bits a map leaves unused it keeps."""
    compute = default_compute(ins, arch) if compute is None else compute
    if frags is None:
        mats = operands(ins, words, ("A", "B", "C", "IDX"))
        fd = ins.operand("D").fragment
        if "C" not in mats:
            mats["C"] = R.zeros(ins.operand("C").fragment, mats["A"].shape[0])
    else:
        mats = {k: R.operand(frags[k], words[k]) for k in ("A", "B", "C")}
        fd = frags["D"]
    extra = {"index": mats["IDX"]} if "IDX" in mats else {}
    D = compute(mats["A"], mats["B"], mats["C"], **extra)
    return result(ins, D, mats["A"].shape[0], old, fd)
