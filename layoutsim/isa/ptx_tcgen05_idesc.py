"""The 32-bit instruction descriptor of tcgen05.mma (.kind::tf32, f16, f8f6f4, i8, and the
block-scaled mxf8f6f4, mxf4, mxf4nvf4 below): which catalog entry (isa/ptx_tcgen05_mma.py) and
which element types an idesc value means.

PTX ISA 9.x (v9.2) 9.7.16.4.2 'Instruction descriptor' (Table 'Instruction descriptor format for
.kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8'); the same bit fields in an independent
implementation, CUTLASS 4.2 cute/arch/mma_sm100_desc.hpp `UMMA::InstrDescriptor`:
  bits  0-1  sparsity selector    bit 2  sparsity (dense 0)    bit 3  saturate (.kind::i8)
  bits  4-5  D format: 0 f16, 1 f32, 2 s32
  bits  7-9  A format, 10-12 B format: kind::f16 0 f16 / 1 bf16; kind::tf32 2 tf32;
             kind::f8f6f4 0 e4m3, 1 e5m2, 3 e2m3, 4 e3m2, 5 e2m1; kind::i8 0 u8, 1 s8
  bit  13/14 negate A / B          bit 15/16  A / B MN-major (0: K-major)
  bits 17-22 N >> 3                bits 24-28 M >> 4            bits 30-31 .ws maximum shift
"""
from ..errors import LayoutsimError
from .ptx_tcgen05_mma import KINDS, SCALE_VEC, TYPES

SOURCE = ("PTX ISA 9.x 9.7.16.4.2 'Instruction descriptor' (= CUTLASS 4.2 cute/arch/mma_sm100_desc.hpp "
          "UMMA::InstrDescriptor)")
D_FORMAT = {0: "f16", 1: "f32", 2: "s32"}
AB_FORMAT = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"},
             "f8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}, "i8": {0: "u8", 1: "s8"}}


def _bits(v, lo, n):
    return (v >> lo) & ((1 << n) - 1)


def decode(value, kind, cta_group=1):
    """{name, types, m, n, k, neg_a, neg_b, a_mn_major, b_mn_major, saturate, sparse, max_shift}
    of an idesc value for `kind`; a field outside the ISA's values is a LayoutsimError naming it."""
    v = int(value) & 0xFFFFFFFF
    if kind not in AB_FORMAT:
        raise LayoutsimError(f"tcgen05.mma .kind::{kind}: the instruction descriptor of this kind is not "
                             f"decoded (kinds: {', '.join(AB_FORMAT)})")
    d = D_FORMAT.get(_bits(v, 4, 2))
    a, b = AB_FORMAT[kind].get(_bits(v, 7, 3)), AB_FORMAT[kind].get(_bits(v, 10, 3))
    m, n = _bits(v, 24, 5) << 4, _bits(v, 17, 6) << 3
    k = KINDS[kind][0]
    if None in (d, a, b) or (d, a, b) not in TYPES[kind]:
        raise LayoutsimError(f"tcgen05.mma .kind::{kind} instruction descriptor {v:#010x}: D/A/B format fields "
                             f"{_bits(v, 4, 2)}/{_bits(v, 7, 3)}/{_bits(v, 10, 3)} are not a legal type "
                             f"combination ({SOURCE})")
    name = f"tcgen05.mma.cta_group::{cta_group}.kind::{kind}.m{m}n{n}k{k}"
    return {"name": name, "types": f"{d}.{a}.{b}", "m": m, "n": n, "k": k,
            "neg_a": bool(_bits(v, 13, 1)), "neg_b": bool(_bits(v, 14, 1)),
            "a_mn_major": bool(_bits(v, 15, 1)), "b_mn_major": bool(_bits(v, 16, 1)),
            "saturate": bool(_bits(v, 3, 1)), "sparse": bool(_bits(v, 2, 1)), "max_shift": _bits(v, 30, 2)}


def encode(kind, m, n, types, neg_a=False, neg_b=False, a_mn_major=False, b_mn_major=False, saturate=False):
    """The idesc value of a dense tcgen05.mma (the inverse of decode; tests and hand-written PTX)."""
    d, a, b = str(types).split(".")
    inv = {v: k for k, v in AB_FORMAT[kind].items()}
    dv = {v: k for k, v in D_FORMAT.items()}[d]
    return (int(saturate) << 3 | dv << 4 | inv[a] << 7 | inv[b] << 10 | int(neg_a) << 13 | int(neg_b) << 14
            | int(a_mn_major) << 15 | int(b_mn_major) << 16 | (n >> 3) << 17 | (m >> 4) << 24)


# The block-scaled kinds (PTX ISA 9.7.16.4.2, the table for .kind::mxf8f6f4, .kind::mxf4 and
# .kind::mxf4nvf4; CUTLASS 4.2 UMMA::InstrDescriptorBlockScaled): bits 4-5 B's scale-factor id,
# 7-9 / 10-12 A / B formats (.kind::mxf8f6f4: as f8f6f4; .kind::mxf4 / mxf4nvf4: 1 = e2m1,
# CUTLASS's MXF4Format), 13/14 negate, 15/16 majors, 17-22 N >> 3, 23 scale format (0 ue4m3,
# 1 ue8m0: CUTLASS's ScaleFormat), 24-28 M >> 4, 29-30 A's scale-factor id, 31 the K size (0: the
# kind's dense K; 1: .kind::mxf4/mxf4nvf4's K=96, CUTLASS 4.7's SM103_MXF4_ULTRA_SS_VS (sm_103 / sm_100f), not modelled). A scale-factor id is the byte of
# the 32-bit TMEM column the scales start at (CuTe keeps it in the top 2 bits of its TMEM address).
SCALED_AB = {"mxf8f6f4": AB_FORMAT["f8f6f4"], "mxf4": {1: "e2m1"}, "mxf4nvf4": {1: "e2m1"}}
SCALE_FORMAT = {0: "ue4m3", 1: "ue8m0"}
FORMS = ", ".join(f".kind::{k} .scale_vec::{'/'.join(v)}" for k, v in SCALE_VEC.items())


def decode_scaled(value, kind, scale_vec="1X", cta_group=1):
    """{name, types, m, n, k, neg_a, neg_b, a_mn_major, b_mn_major, sparse, a_sf_id, b_sf_id} of a
    block-scaled idesc of `kind` with .scale_vec::`scale_vec` (the entry of .cta_group::`cta_group`);
    a LayoutsimError naming a field otherwise."""
    v = int(value) & 0xFFFFFFFF
    vecs = SCALE_VEC.get(kind, {})
    if scale_vec not in vecs:
        raise LayoutsimError(f"tcgen05.mma .kind::{kind}.block_scale.scale_vec::{scale_vec}: not a block-scaled "
                             f"form ({FORMS})")
    a, b = SCALED_AB[kind].get(_bits(v, 7, 3)), SCALED_AB[kind].get(_bits(v, 10, 3))
    scale = SCALE_FORMAT[_bits(v, 23, 1)]
    legal = vecs[scale_vec][1]
    if a is None or b is None or scale not in legal or _bits(v, 31, 1):
        raise LayoutsimError(f"tcgen05.mma .kind::{kind} .scale_vec::{scale_vec} instruction descriptor {v:#010x}: "
                             f"A/B formats {_bits(v, 7, 3)}/{_bits(v, 10, 3)}, scale format {scale}, K-size bit "
                             f"{_bits(v, 31, 1)}: not legal ({'/'.join(sorted(set(SCALED_AB[kind].values())))} "
                             f"operands, {'/'.join(legal)} scales, the dense K of the kind (K-size bit 1, K=96, "
                             f"is not modelled); {SOURCE})")
    m, n, k = _bits(v, 24, 5) << 4, _bits(v, 17, 6) << 3, KINDS[kind][0]
    return {"name": f"tcgen05.mma.cta_group::{cta_group}.kind::{kind}.block_scale.scale_vec::{scale_vec}.m{m}n{n}k{k}",
            "types": f"f32.{a}.{b}.{scale}", "m": m, "n": n, "k": k,
            "neg_a": bool(_bits(v, 13, 1)), "neg_b": bool(_bits(v, 14, 1)),
            "a_mn_major": bool(_bits(v, 15, 1)), "b_mn_major": bool(_bits(v, 16, 1)),
            "saturate": False, "sparse": bool(_bits(v, 2, 1)), "max_shift": 0,
            "a_sf_id": _bits(v, 29, 2), "b_sf_id": _bits(v, 4, 2)}


def encode_scaled(m, n, types, a_sf_id=0, b_sf_id=0, kind="mxf8f6f4", neg_a=False, neg_b=False):
    """The idesc value of a dense block-scaled tcgen05.mma of `kind` (types "f32.a.b[.scale]", the
    scale format ue8m0 unless named; tests, hand-written PTX)."""
    parts = str(types).split(".")
    a, b = parts[1:3]
    scale = parts[3] if len(parts) > 3 else "ue8m0"
    inv = {v: k for k, v in SCALED_AB[kind].items()}
    sv = {v: k for k, v in SCALE_FORMAT.items()}[scale]
    return (b_sf_id << 4 | inv[a] << 7 | inv[b] << 10 | int(neg_a) << 13 | int(neg_b) << 14 | (n >> 3) << 17
            | sv << 23 | (m >> 4) << 24 | a_sf_id << 29)
