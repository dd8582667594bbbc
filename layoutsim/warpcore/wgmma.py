"""wgmma.mma_async on one warpgroup per batch entry: its shared-memory operands read through
their matrix descriptors, A from registers or shared memory, D = A*B + D (scale-d) or A*B, the
imm-scale negations (PTX ISA 9.0, 9.7.15.5.2).

Descriptor operands: `layoutsim.smem.operand_addresses` gives the shared-window byte address of
every element ((M, K) for A, (K, N) for B; the descriptor readings the H200 confirmed); the
caller checks them against its shared memory (`layoutsim.smem.operand_fault` words the fault),
adds its block's base and passes the byte image to `gather`.
"""
import numpy as np

from ..formats import bits
from ..smem import operand_addresses
from . import mma as core_mma
from . import registers as R


_ADDRESSES = {}            # (instruction, operand, trans, descriptor value) -> int64 [rows, cols]
ADDRESSES_MAX = 512        # kept; a full table starts again (a GEMM's k loop cycles through a few values)


def addresses(ins, which, desc, trans=False):
    """int64 [rows, cols] (one descriptor: a Descriptor or a value) or [batch, rows, cols] (an
    array of descriptor values): where each element of operand `which` lies. An array's values
    are decoded once each and kept (a function of the value alone)."""
    if not isinstance(desc, np.ndarray) or desc.ndim != 1 or desc.dtype.kind != "u":
        return operand_addresses(ins, which, desc, trans)
    keys = [(ins.name, which, bool(trans), v) for v in desc.tolist()]
    new = [i for i, k in enumerate(keys) if k not in _ADDRESSES]
    if new:
        got = operand_addresses(ins, which, desc[new], trans)
        if len(_ADDRESSES) + len(new) > ADDRESSES_MAX:
            _ADDRESSES.clear()
        for j, i in enumerate(new):
            got[j].flags.writeable = False
            _ADDRESSES[keys[i]] = got[j]
    return np.stack([_ADDRESSES[k] for k in keys])


def element_bytes(ins, which):
    return bits(ins.formats[which.lower()]) // 8


def element_byte_index(ins, which, flat):
    """int64 [..., rows, cols, e]: every byte of every element at byte offsets `flat`."""
    return flat[..., None] + np.arange(element_bytes(ins, which))


def gather(ins, which, image, flat):
    """Raw bits [..., rows, cols] of operand `which`, its elements at byte offsets `flat` of
    the byte image `image` (uint8)."""
    e = element_bytes(ins, which)
    flat = np.asarray(flat)
    if image.flags.c_contiguous and image.dtype == np.uint8 and not (flat % e).any():
        # every element aligned to its size (what the descriptor layouts give): one take of the
        # image viewed as e-byte little-endian integers
        return image[:image.size // e * e].view(f"<u{e}").take(flat // e)
    raw = image[element_byte_index(ins, which, flat)]
    return np.ascontiguousarray(raw).view(f"<u{e}")[..., 0]


def register_a(ins, words):
    """A from registers: uint32 [batch, 128, n] -> raw bits [batch, M, K]."""
    return R.operand(ins.operand("A").fragment, words)


def negate(x):
    """imm-scale -1: the element negated, i.e. its sign bit (the top bit of the raw value) flipped."""
    return x ^ x.dtype.type(1 << (x.dtype.itemsize * 8 - 1))


def run(ins, A, B, d_words, scale_d=True, neg_a=False, neg_b=False, arch=None, compute=None, old=None):
    """D's register words uint32 [batch, 128, n] of A [batch, M, K] x B [batch, K, N] (raw bits)
    + D. d_words: D's words before (uint32 [batch, 128, n]), or None where scale-d is false and
    D is not read; scale_d: bool, or bool [batch] (one per warpgroup): D read as +0 where false."""
    fd = ins.operand("D").fragment
    batch = A.shape[0]
    if d_words is None:
        D = product(ins, A, B, R.zeros(fd, batch), True, neg_a, neg_b, arch, compute)
    else:
        D = product(ins, A, B, R.operand(fd, d_words), scale_d, neg_a, neg_b, arch, compute)
    return core_mma.result(ins, D, batch, old, fd)


def product(ins, A, B, C, scale_d=True, neg_a=False, neg_b=False, arch=None, compute=None):
    """D = A*B + C as `compute` gives it (raw bits or values) of A [batch, M, K], B [batch, K, N]
    and C [batch, M, N] (raw bits, D's format), with scale-d (C read as +0 where false; bool, or
    bool [batch]) and the imm-scale negations: run's arithmetic, for a caller that gathers C and
    scatters D itself (the executor, ptx/mma_regs.py)."""
    if not np.all(scale_d):
        C = np.where(np.asarray(scale_d).reshape(-1, 1, 1), C, np.zeros_like(C))
    A = negate(A) if neg_a else A
    B = negate(B) if neg_b else B
    compute = core_mma.default_compute(ins, arch) if compute is None else compute
    return compute(A, B, C)
