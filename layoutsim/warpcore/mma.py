"""MMAs on register words: gather A, B, C through the catalog fragments, compute D with
layoutsim.mma, scatter D into register words. mma.sync (NVIDIA), AMD WMMA / SWMMAC / MFMA, and
the register side of wgmma and nvcuda::wmma.

`compute(A, B, C, **extra)` is the arithmetic, default `layoutsim.mma(ins, A, B, C, arch=arch,
raw=True)`; callers pass their own only to put a different model of the same instruction in its
place (the simulator's `mma=` option, wmma's tile sequence).
"""
import numpy as np

from ..numerics import mma as numeric_mma
from . import registers as R


def operands(ins, words, keys=("A", "B", "C")):
    """{key: operand matrices} of the operands whose register words are in `words` (uint32
    [batch, lanes, n] by key; IDX for SWMMAC's sparsity index)."""
    return {k: R.operand(ins.operand(k).fragment, words[k]) for k in keys if words.get(k) is not None}


def default_compute(ins, arch):
    def compute(A, B, C, **extra):
        return numeric_mma(ins, A, B, C, arch=arch, raw=True, **extra)
    return compute


def result(ins, D, batch, old=None, frag=None):
    """Register words of D (the operand convention of registers.operand), its shape checked."""
    frag = ins.operand("D").fragment if frag is None else frag
    D = np.asarray(D)
    one = frag.shape[0] == 1                         # one matrix; MFMA blocks stay a dimension
    want = (batch, *(frag.shape[1:] if one else frag.shape))
    if tuple(D.shape) != want:
        raise AssertionError(f"layoutsim.mma returned shape {tuple(D.shape)}, expected {want}")
    return R.result_words(frag, D, old)


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
