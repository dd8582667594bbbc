"""`layoutsim.mma`: D = A*B + C exactly as the tensor core computes it, batched.

numba is imported on the first call (through `kernel`), never by `import layoutsim`.
"""
import math
import warnings

import numpy as np

from .. import archs
from ..errors import LayoutsimError
from ..formats import as_raw, decode, encode, from_raw, get_format, raw_dtype
from . import budget
from .plan import FP8, make_plan
from .profiles import Profile, profile_for


class UnverifiedProfileWarning(UserWarning):
    """Results computed with an assumed (unpublished, unmeasured) arithmetic profile."""


def resolve(instr, arch, profile=None):
    """(Instruction, Profile) for a user's instruction (name or Instruction) and arch."""
    from ..isa.instruction import Instruction
    from ..isa.registry import get
    if arch is None:
        raise LayoutsimError("give the arch whose arithmetic to model, e.g. arch='sm_90'")
    a = archs.normalize(arch)
    inst = instr if isinstance(instr, Instruction) else get(instr, arch=a)
    inst.check_arch(a)
    if profile is None:
        prof = profile_for(a)
    elif isinstance(profile, Profile):
        prof = profile
    else:
        prof = profile_for(profile)
    return inst, prof


def unverified(plan):
    """Why this plan's results are an assumption ("" when a GPU here or published captures
    cover its arithmetic)."""
    why = plan.profile.unverified(plan.a, plan.d)
    if not why and plan.kind == "float" and plan.inst is not None and plan.inst.family == "swmmac":
        why = ("UNVERIFIED ASSUMPTION: SWMMAC float arithmetic is the dense rule on the logical A; no "
               "capture covers it")
    return why


def evidence(instr, arch):
    """One line: the arithmetic `layoutsim.mma` uses for this instruction on `arch` and what
    backs it (the profile's label: the published captures it matches, or why it stays an
    assumption). `layoutsim query` / `show` print it; numba is not imported."""
    inst, prof = resolve(instr, arch)
    plan = make_plan(inst, prof)
    return prof.label(plan.a, plan.d, why=unverified(plan))


def _raw_operand(role, fmt, x, rows, cols, inst):
    arr = as_raw(fmt, x, what=f"{role} of {inst.name}")
    if arr.ndim < 2 or tuple(arr.shape[-2:]) != (rows, cols):
        raise LayoutsimError(f"{role} of {inst.name} must have shape (..., {rows}, {cols}) "
                             f"({fmt}); got {tuple(arr.shape)}")
    return arr


def _sparse_operand(fmt, a, index, M, K, inst):
    """The logical A (..., M, K) raw bits of a SWMMAC: given so (checked 2:4 sparse), or
    expanded from compressed values (..., M, K/2) and the 4-bit index."""
    from . import sparse
    arr = as_raw(fmt, a, what=f"A of {inst.name}")
    if index is None:
        if arr.ndim < 2 or tuple(arr.shape[-2:]) != (M, K):
            raise LayoutsimError(f"A of {inst.name} must have shape (..., {M}, {K}) (the logical "
                                 f"2:4 sparse A), or (..., {M}, {K // 2}) with index=; got "
                                 f"{tuple(arr.shape)}")
        sparse.check(arr)
        return arr
    return sparse.expand(arr, index, K)


def _tcgen05_sparse(fmt, a, index, M, K, inst):
    """tcgen05.mma.sp's logical A (..., M, K): given so (checked), or expanded from its kept values
    (..., M, K/2) and the 4-bit metadata fields `index` (numerics/sparse_tcgen05.py)."""
    from . import sparse_tcgen05 as SP
    kind = inst.options["kind"]
    if index is None:
        A = _raw_operand("A", fmt, a, M, K, inst)
        SP.check(kind, A)
        return A
    return SP.expand(kind, _raw_operand("A (kept values)", fmt, a, M, K // 2, inst), index)


def mma(instr, a, b, c, arch="sm_90", *, profile=None, raw=False, index=None, max_bytes=None,
        scale_a=None, scale_b=None, types=None, scale_d=None):
    """D = A*B + C for one instruction, bit for bit, batched over leading dimensions.

    instr: a catalog name (any spelling `layoutsim.get` takes) or an Instruction.
    a (..., M, K), b (..., K, N), c (..., M, N): raw bits in the element's unsigned dtype
    (uint16 f16/bf16, uint32 tf32/f32/s32, uint8 e4m3/e5m2/s8/u8, uint8 low nibble s4/u4,
    uint64 f64), or values (float16, ml_dtypes bfloat16/float8_e4m3fn/float8_e5m2, float32,
    float64, int8/uint8, int32). For wgmma, c is the accumulator D read before the operation.
    arch: whose arithmetic (profiles in layoutsim.numerics.profiles). profile: a Profile to
    use instead (candidate behaviours). raw=True returns D's raw bits instead of values.
    tcgen05.mma.sp (numerics/sparse_tcgen05.py): `a` is the logical A (..., M, K), or its kept values
    (..., M, K/2) with `index` the 4-bit metadata fields (..., M, K/4; tf32 K/2).
    AMD gfx12 sparse SWMMAC (M x N x K, A 2:4 sparse along K): `a` is either the logical A
    (..., M, K), at most 2 nonzero values in every 4 k, or its compressed values (..., M, K/2)
    with `index` (..., M, K/4), the 4-bit fields of the IDX operand (layoutsim.numerics.sparse).
    Returns D (..., M, N) in D's value dtype (float32, float16, float64, int32).
    max_bytes: the memory the call may take (default $LAYOUTSIM_MMA_BYTES, else 4 GiB); a larger
    batch is refused before anything is allocated (layoutsim.numerics.budget).
    Block-scaled MMAs (tcgen05.mma .kind::mxf8f6f4/mxf4/mxf4nvf4, sm_120 mma.sync .block_scale):
    scale_a (..., M, K/block) and scale_b (..., K/block, N), raw uint8 ue8m0/ue4m3 bits (or
    ml_dtypes float8_e8m0fnu values). FP6/FP4 elements are raw bits in the low bits of a uint8.
    types: tcgen05.mma's element types, "d.a.b" (e.g. "f32.bf16.bf16"; its TYPES), which PTX
    keeps in the instruction descriptor.
    scale_d: tcgen05.mma's scale-input-d (.kind::f16 / tf32, 0..15): D = A*B + C * 2^-scale_d, the
    scaling assumed exact (layoutsim.numerics.scale_d says what is assumed and what is refused).
    """
    inst, prof = resolve(instr, arch, profile)
    if types is not None:
        from ..isa.ptx_tcgen05_mma import with_types
        inst = with_types(inst, types)
    plan = make_plan(inst, prof)
    why = unverified(plan)
    if why:
        warnings.warn(f"{prof.arch} {inst.name}: {why}", UnverifiedProfileWarning, stacklevel=3)
    M, N, K = plan.shape
    if inst.family == "swmmac":
        A = _sparse_operand(plan.a, a, index, M, K, inst)
    elif inst.family == "tcgen05.mma" and inst.options.get("sparse"):
        A = _tcgen05_sparse(plan.a, a, index, M, K, inst)
    elif index is not None:
        raise LayoutsimError(f"index= is the sparsity index of AMD swmmac instructions; "
                             f"{inst.name} is a dense {inst.family} instruction")
    else:
        A = _raw_operand("A", plan.a, a, M, K, inst)
    B = _raw_operand("B", plan.b, b, K, N, inst)
    C = _raw_operand("C", plan.c, c, M, N, inst)
    if scale_d is not None:
        from . import scale_d as SD
        C = SD.scale_c(plan.c, C, SD.check(inst, scale_d))
    scales = _scales(plan, inst, scale_a, scale_b, M, N, K)
    try:
        lead = np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2])
    except ValueError:
        raise LayoutsimError(f"batch dimensions of A {A.shape[:-2]}, B {B.shape[:-2]} and C "
                             f"{C.shape[:-2]} do not broadcast") from None
    budget.check(inst.name, plan.kind, plan.shape, lead, max_bytes)    # before any allocation
    nb = math.prod(lead)
    A, B, C = (_batched(X, lead, nb) for X in (A, B, C))
    if plan.kind == "scaled":
        SA, SB = (None if S is None else _batched(S, lead, nb) for S in scales)
        out = _run_scaled(plan, A, B, C, SA, SB).reshape(lead + (M, N))
        return out if raw else from_raw(plan.d, out)
    out = run(plan, A, B, C).reshape(lead + (M, N))
    return out if raw else from_raw(plan.d, out)


def _scales(plan, inst, scale_a, scale_b, M, N, K):
    """(scale_a, scale_b) raw, checked against the plan (None, None without block scaling)."""
    if not plan.scale:
        if scale_a is not None or scale_b is not None:
            raise LayoutsimError(f"scale_a/scale_b are the block scale factors of block-scaled MMAs; "
                                 f"{inst.name} takes none")
        return None, None
    if scale_a is None or scale_b is None:
        raise LayoutsimError(f"{inst.name} is block-scaled: give scale_a (..., {M}, {K // plan.scale_block}) "
                             f"and scale_b (..., {K // plan.scale_block}, {N}) ({plan.scale})")
    ns = K // plan.scale_block
    return (_raw_operand("scale_a", plan.scale, scale_a, M, ns, inst),
            _raw_operand("scale_b", plan.scale, scale_b, ns, N, inst))


def _run_scaled(plan, A, B, C, SA, SB):
    """Raw D (nb, M, N) of a "scaled" plan (scaled.py), one batch element at a time."""
    from . import scaled
    spec = dict(a=plan.a, b=plan.b, c=plan.c, d=plan.d, scale=plan.scale or None,
                block=plan.scale_block, L=plan.block, G=plan.group, F=plan.align_bits,
                e_zero=plan.floor)
    nb, M, N = C.shape
    out = np.empty((nb, M, N), raw_dtype(plan.d))
    for i in range(nb):
        a = np.broadcast_to(A[i][:, None, :], (M, N, A.shape[2]))
        b = np.broadcast_to(np.swapaxes(B[i], 0, 1)[None], (M, N, B.shape[1]))
        sa = sb = None
        if SA is not None:
            sa = np.broadcast_to(SA[i][:, None, :], (M, N, SA.shape[2]))
            sb = np.broadcast_to(np.swapaxes(SB[i], 0, 1)[None], (M, N, SB.shape[1]))
        out[i] = scaled.dot(a, b, C[i], sa, sb, spec)
    return out


def _batched(x, lead, nb):
    """x (..., R, S) broadcast to lead + (R, S), as (nb, R, S); a view of x where it already
    has that shape (a broadcast view is read-only, and the kernel would then copy it)."""
    if x.shape[:-2] != lead:
        x = np.broadcast_to(x, lead + x.shape[-2:])
    return x.reshape((nb,) + x.shape[-2:])


def run(plan, A, B, C):
    """Raw D (nb, M, N) from raw A (nb, M, K), B (nb, K, N), C (nb, M, N) under a Plan."""
    if plan.kind == "int":
        return _run_int(plan, A, B, C)
    if plan.kind == "f64":
        return _run_f64(plan, A, B, C)
    if plan.kind == "cdna":
        return _run_cdna(plan, A, B, C)
    return _run_float(plan, A, B, C)


def _run_cdna(plan, A, B, C):
    """A CDNA MFMA float model (cdna.py) on exact values; xf32 inputs cut to tf32 first
    (MMA-Sim truncate_fp32_to_tf32: the low 13 bits dropped)."""
    from . import cdna, cdna_kernel
    if plan.inst.name.endswith("_xf32"):
        A, B = (X.astype(np.uint32) & np.uint32(0xFFFFE000) for X in (A, B))
    a = _kernel_array(decode(plan.a, A))
    bt = _kernel_array(np.swapaxes(decode(plan.b, B), 1, 2))
    c = _kernel_array(decode(plan.c, C))
    out = np.empty(c.shape, np.int64)
    cdna_kernel.run(cdna.MODEL_CODES[plan.model], a, bt, c, plan.block, get_format(plan.a).emin,
                    get_format(plan.b).emin, cdna.F_BITS, cdna.F2_BITS, out)
    return out.astype(np.uint32)


def _int_matmul(a, b):
    """np.matmul of integer arrays, exactly, through float64 (BLAS) where every partial sum is an
    integer below 2**53 in magnitude, which float64 holds exactly whatever the order of the sums
    (numpy's integer matmul has no BLAS: a wgmma of s8 took a millisecond in it)."""
    if not (a.ndim == b.ndim == 3 and a.shape[0] == b.shape[0] and a.size and b.size):
        return np.matmul(a, b)
    _, m, k = a.shape
    n = b.shape[2]
    big = max(int(a.max()), -int(a.min())) * max(int(b.max()), -int(b.min()))     # (no |a| copy)
    if big * k >= 2 ** 53:
        return np.matmul(a, b)
    out = np.empty((a.shape[0], m, n), np.int64)
    per = max(1, (1 << 14) // (m * k + k * n + m * n))     # float64 copies of about 128 KiB at a time
    for i in range(0, a.shape[0], per):
        out[i:i + per] = np.matmul(a[i:i + per].astype(np.float64), b[i:i + per].astype(np.float64))
    return out


def _run_int(plan, A, B, C):
    a = decode(plan.a, A)
    b = decode(plan.b, B)
    acc = decode(plan.c, C)
    lo, hi = -(1 << 31), (1 << 31) - 1
    if plan.saturate and plan.profile.int_saturation == "each_product":
        for k in range(a.shape[-1]):
            acc = np.clip(acc + a[:, :, k, None] * b[:, None, k, :], lo, hi)
    elif plan.saturate and plan.profile.int_saturation == "halves":
        h = a.shape[-1] // 2                 # gfx12: clamped after k < K/2, then after the rest
        acc = np.clip(acc + _int_matmul(a[..., :h], b[:, :h]), lo, hi)
        acc = np.clip(acc + _int_matmul(a[..., h:], b[:, h:]), lo, hi)
    else:
        acc = acc + _int_matmul(a, b)        # int64: exact (|sum| < 2**38)
        acc = np.clip(acc, lo, hi) if plan.saturate else ((acc - lo) & 0xFFFFFFFF) + lo
    return acc.astype(np.int32).view(np.uint32)


def _run_f64(plan, A, B, C):
    from . import f64_kernel
    mode = {"fma_chain": 0, "fma_chain_reversed": 1, "mul_add": 2}[plan.profile.f64]
    a = _kernel_array(A.view(np.float64))
    b = _kernel_array(np.swapaxes(B.view(np.float64), 1, 2))
    c = _kernel_array(C.view(np.float64))
    out = np.empty(c.shape, np.float64)
    if sorted(plan.profile.nan_f64_order) != ["A", "B", "C"]:
        raise LayoutsimError(f"nan_f64_order {plan.profile.nan_f64_order!r}: give the operands A, "
                             f"B, C once each, highest priority first (e.g. 'BCA')")
    order = np.array(["CAB".index(o) for o in plan.profile.nan_f64_order], np.int64)
    invalid = int(np.uint64(plan.profile.nan_f64).view(np.int64))
    f64_kernel.f64_chain(a, b, c, mode, order, bool(plan.profile.nan_f64_snan_first), invalid,
                         out)
    bits = out.view(np.uint64)
    if plan.profile.nan_f64_rule == "propagate":  # the chain's NaN, quieted (bit 51 set)
        nan = bits | np.uint64(1 << 51)
    else:
        nan = np.uint64(plan.profile.nan_f64)
    return np.where(np.isnan(out), nan, bits)


_FP8_TO_F16 = {}
def _fp8_to_f16(fmt, raw):
    """fp8 raw bits -> the f16 raw bits of the same value (exact: every fp8 value is an f16)."""
    if fmt not in _FP8_TO_F16:
        _FP8_TO_F16[fmt] = encode("f16", decode(fmt, np.arange(256, dtype=np.uint8)))
    return np.take(_FP8_TO_F16[fmt], raw)        # np.take: twice as fast as fancy indexing


def _tf32(raw, mode):
    u = raw.astype(np.uint32)
    if mode == "round":     # round to nearest even at bit 13 (Inf/NaN kept as they are)
        special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
        r = (u.astype(np.uint64) + np.uint64(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1)))
        u = np.where(special, u, r.astype(np.uint32))
    return u >> np.uint32(13)


def _layout(fmt):
    f = get_format(fmt)
    return f.ebits, f.mbits, 1 if f.specials == "fn" else 0


def float_config(plan):
    """The kernel's cfg array for a float Plan."""
    from .cfg import (ALIGN, ALIGN_FLOOR, A_EB, BLOCK, B_EB, CFG_LEN, CZERO_EMIN, C_EB, C_EXTRA,
                      D_EB, D_MB, FLOOR, GROUP, IN_FTZ, KEEP, LATE_C, NAN_BITS, NAN_C_QUIET,
                      NAN_FACTOR, NAN_INVALID, NO_FLOOR, OUT_FTZ, OVF_INF, PROD_NORM, ROUND,
                      SIGN_FRAME, TINY_C_ZERO, UPFRONT, ZERO_SIGNED)
    p = plan.profile
    cfg = np.zeros(CFG_LEN, np.int64)
    cfg[BLOCK] = plan.block
    cfg[ALIGN] = plan.align_bits
    cfg[FLOOR] = NO_FLOOR if plan.floor is None else plan.floor
    cfg[CZERO_EMIN] = p.c_zero == "emin"
    cfg[PROD_NORM] = {"sum": 0, "normalized": 1, "true": 2}[p.product_exponent]
    cfg[ROUND] = {"rz": 0, "rne": 1, "rd": 2, "ru": 3, "rne32_truncate": 4}[plan.rounding]
    cfg[KEEP] = plan.keep_bits
    d = get_format(plan.d)
    cfg[D_EB], cfg[D_MB] = d.ebits, d.mbits
    cfg[OVF_INF] = p.overflow == "inf"
    cfg[NAN_BITS] = p.nan_f32 if plan.d == "f32" else p.nan_f16
    cfg[IN_FTZ] = p.subnormal_inputs == "flush" or (
        plan.arith_a == "bf16" and p.subnormal_inputs_bf16 == "flush")
    cfg[OUT_FTZ] = p.subnormal_outputs == "flush"
    cfg[UPFRONT] = p.specials == "upfront"
    cfg[ZERO_SIGNED] = p.zero_sign == "signed"
    cfg[LATE_C] = plan.late_c
    cfg[GROUP] = plan.group
    cfg[ALIGN_FLOOR] = p.alignment == "floor"
    cfg[C_EXTRA] = p.c_extra_bits
    cfg[TINY_C_ZERO] = p.tiny_negative_c == "zero_above_emin"
    cfg[NAN_FACTOR] = -1 if plan.nan_factor is None else plan.nan_factor
    cfg[NAN_INVALID] = -1 if plan.nan_invalid is None else plan.nan_invalid
    cfg[NAN_C_QUIET] = p.nan_c == "quiet"
    cfg[SIGN_FRAME] = p.sign_frame == "c"
    for base, fmt in ((A_EB, plan.arith_a), (B_EB, plan.arith_b), (C_EB, plan.c)):
        cfg[base:base + 3] = _layout(fmt)
    return cfg


def _kernel_array(x, dtype=None):
    """x as a C-contiguous, writeable array (copied only when it is not one already): numba
    compiles a kernel per array type, and a read-only or strided array is a type of its own,
    so this keeps it to one compilation per element dtype."""
    if type(x) is np.ndarray and x.flags.c_contiguous and x.flags.writeable and (dtype is None or x.dtype == dtype):
        return x                # what np.require returns for it, without its microseconds per call
    return np.require(x, dtype, ["C_CONTIGUOUS", "WRITEABLE"])


def _prepare(fmt, arith, raw, plan):
    """Raw bits the kernel takes (any unsigned dtype): fp8 on the fp16 path as f16 bits, tf32
    as its 19 bits; anything else as it is (no copy)."""
    if fmt in FP8 and arith == "f16":
        return _fp8_to_f16(fmt, raw)
    if fmt == "tf32":
        return _tf32(raw, plan.profile.tf32_inputs)
    return raw


def kernel_inputs(plan, A, B, C):
    """(a, b, c, cfg): what block.block_fma takes for raw A (nb, M, K), B (nb, K, N),
    C (nb, M, N) under a float Plan (k in the plan's block order; fp8/tf32 prepared)."""
    return (*_kernel_operands(plan, A, B, C), float_config(plan))


def _kernel_operands(plan, A, B, C):
    """kernel_inputs' (a, b, c)."""
    a = _prepare(plan.a, plan.arith_a, A, plan)
    b = _prepare(plan.b, plan.arith_b, B, plan)          # (nb, K, N): the kernel reads it so
    if plan.k_order:            # blocks are consecutive runs of k in this order
        order = np.asarray(plan.k_order)
        a, b = np.take(a, order, axis=-1), np.take(b, order, axis=1)
    a = _kernel_array(a)
    b = _kernel_array(b, a.dtype)        # one compiled kernel per input dtype
    return a, b, _kernel_array(C, np.uint32)


# id(plan) -> [plan, cfg, {(M, N, K): block path}, {(M, N, K): block.runner}, D's raw dtype]: what
# _run_float derives from a Plan, once per Plan (the executor runs one Plan per mma instruction
# thousands of times; a call of layoutsim.mma makes a new Plan, so the table is bounded). The Plan
# is held: its id stays its own.
_CONFIGS = {}
_CONFIGS_MAX = 256


def _configured(plan):
    got = _CONFIGS.get(id(plan))
    if got is None or got[0] is not plan:
        if len(_CONFIGS) >= _CONFIGS_MAX:
            _CONFIGS.clear()
        got = _CONFIGS[id(plan)] = [plan, float_config(plan), {}, {}, raw_dtype(plan.d)]
    return got


def _run_float(plan, A, B, C):
    a, b, c = _kernel_operands(plan, A, B, C)
    _, cfg, paths, runners, d = _configured(plan)
    shape = (a.shape[1], b.shape[2], a.shape[2])
    go = runners.get(shape)
    if go is None:
        from . import block
        which = paths[shape] = block.path(cfg, *shape)
        go = runners[shape] = block.runner(cfg, which, *shape)
    out = np.empty(c.shape, np.uint32)
    if out.size:
        go(a, b, c, out)
    return out.astype(d, copy=False)
