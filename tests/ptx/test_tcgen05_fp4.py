"""tcgen05.mma with FP6/FP4 operands and the FP4 block-scaled kinds in the executor (hand-written PTX;
no Blackwell GPU here: from documents, not measured; every expected layout below is written out
again in this file from the documents, and each executed D is compared bit for bit with
layoutsim.mma's per-MMA result and, where pip `mmasim` is installed, with MMA-Sim's).

- Where the 4-/6-bit elements lie in shared memory:
  .kind::f8f6f4 / .kind::mxf8f6f4: each element has the 8-bit slot of the ISA's canonical layout
  (9.7.16.3.1: K-major core matrices of 8 rows x 16 bytes), and the 16 elements of each 16-byte
  unit are packed at the unit's start, element p at bits width*p: CUDA 13.0 cuda.h
  (cuTensorMapEncodeTiled): "16U4_ALIGN16B copies '16 x U4' packed values to memory aligned as 16
  bytes. There are 8 byte gaps between every 8 byte chunk"; "16U6_ALIGN16B ... 4 byte gaps between
  every 12 byte chunk"; the TMA types CUTLASS 4.2 loads these operands with (cute/arch/
  copy_sm90_desc.hpp: float_e2m1_unpacksmem_t -> 16U4_ALIGN16B, e2m3/e3m2 -> 16U6_ALIGN16B).
  .kind::mxf4 / .kind::mxf4nvf4: e2m1 packed two per byte along K (CUTLASS: float_e2m1_t ->
  16U4_ALIGN8B, "no gaps"), element 2i in the low nibble of byte i.
- The block-scaled instruction descriptor (PTX ISA 9.7.16.4.2; CUTLASS 4.2
  UMMA::InstrDescriptorBlockScaled): A/B format 1 = e2m1 for mxf4/mxf4nvf4 (MXF4Format), bit 23 the
  scale format (0 ue4m3, 1 ue8m0), bits 29-30 / 4-5 the scale-factor ids.
- The scale factors in TMEM (CUTLASS 4.2 UMMA::tmem_sf_frg, 4x1 duplicated): scale s of row r in
  lane r % 32 of each 32-lane slab, column r // 32, byte sf_id + s (scale_vec::2X: 2 bytes, 4X: 4).
"""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode, encode_scaled
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from blackwell_oracle import HAVE_MMASIM, oracle as mmasim_oracle
from test_ptx_tcgen05 import k_major, mma_kernel, ptxas_sm100a, scaled_kernel, sf_image, SM

WIDTH = {"e2m1": 4, "e2m3": 6, "e3m2": 6, "e4m3": 8, "e5m2": 8}
SW128 = "128B"
IMG, B_AT = 32768, 16384          # the shared image; B's offset in it (A at 0)



def slots(mn, k, swizzle):
    """Byte offset of the 8-bit slot (mn, k) of a K-major operand: the ISA's no-swizzle canonical
    layout (LBO 128 between 16-byte K groups, SBO between 8-row groups), or the 128-byte swizzle
    atom (8 rows x 128 bytes, 16-byte unit c of row r at unit c ^ (r % 8); 9.7.16.3.1 Figure
    'K-major, 128B swizzle'), 8-row groups 1024 bytes apart."""
    if swizzle is None:
        return k_major(mn, k, 1, 128, 128 * (k // 16))
    r, c = np.meshgrid(np.arange(mn), np.arange(k), indexing="ij")
    return (r // 8) * 1024 + (r % 8) * 128 + (((c // 16) ^ (r % 8)) * 16) + c % 16


def store(img, base, raw, fmt, packed, swizzle=None):
    """Write the raw bits raw [mn, k] of a K-major operand into the byte image at base."""
    mn, k = raw.shape
    w = WIDTH[fmt]
    if packed:                                   # two e2m1 per byte along K
        img[base + slots(mn, k // 2, swizzle)] = raw[:, 0::2] | (raw[:, 1::2] << 4)
        return
    off = base + slots(mn, k, swizzle)
    if w == 8:
        img[off] = raw
        return
    p = np.arange(k) % 16                         # element p of its 16-byte unit at bits w*p
    unit = off - p
    acc = {}
    for (i, j), u in np.ndenumerate(unit):
        acc[u] = acc.get(u, 0) | (int(raw[i, j]) << (w * int(p[j])))
    for u, bits in acc.items():
        img[u:u + 16] = np.frombuffer(bits.to_bytes(16, "little"), np.uint8)


def descs(swizzle, K, bytes_per_elem):
    """The A and B descriptors (swizzle: one mode for both, or a pair (A's, B's))."""
    rowb = int(K * bytes_per_elem)
    sw = swizzle if isinstance(swizzle, tuple) else (swizzle, swizzle)
    return [UmmaDescriptor(SM + b, 128, 128 * (rowb // 16)).encode() if w is None
            else UmmaDescriptor(SM + b, 16, 1024, w).encode() for b, w in zip((0, B_AT), sw)]


def swz(swizzle, which):
    return swizzle[which] if isinstance(swizzle, tuple) else swizzle


def raw_values(rng, fmt, shape):
    return rng.integers(0, 1 << WIDTH[fmt], shape).astype(np.uint8)


# ---- .kind::f8f6f4 with FP6 / FP4 operands (dense, no scales) ---------------------------------------
DENSE = [  # types, N, swizzle, MMA-Sim label (tests/numerics/mmasim_oracle.KINDS) or None
    ("f16.e2m3.e2m1", 32, None, "f8f6f4 e2m3.e2m1->f16"),
    ("f32.e3m2.e4m3", 16, None, "f8f6f4 e3m2.e4m3"),
    ("f32.e2m1.e3m2", 32, SW128, None),
    ("f32.e5m2.e2m1", 8, SW128, None),
    ("f32.e2m1.e2m3", 16, (None, SW128), None),     # A and B in different layouts: a k order the two
]                                                   # shared would cancel in the dot product


@pytest.mark.parametrize("types,N,swizzle,label", DENSE + [("f32.e3m2.e2m1", 8, None, "negate")])
def test_f8f6f4_fp6_fp4_operands_are_layoutsim_mma_bit_for_bit(types, N, swizzle, label):
    d, fa, fb = types.split(".")
    M, K = 128, 32
    neg = label == "negate"              # idesc bits 13/14: each element's sign bit (its format's top bit)
    label = None if neg else label
    rng = np.random.default_rng(N + WIDTH[fa])
    A, B = raw_values(rng, fa, (M, K)), raw_values(rng, fb, (N, K))
    img = np.zeros(IMG, np.uint8)
    store(img, 0, A, fa, False, swz(swizzle, 0))
    store(img, B_AT, B, fb, False, swz(swizzle, 1))
    da, db = descs(swizzle, K, 1)
    out = np.zeros((128, N), np.uint32)
    src = mma_kernel(N, IMG).replace("KIND", "f8f6f4")
    idesc = encode("f8f6f4", M, N, types, neg_a=neg, neg_b=neg)
    got = ptx.run(src, "k", 1, 128, [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc)],
                  arch="sm_100").buffers[1]
    got = got & 0xFFFF if d == "f16" else got
    inst = layoutsim.get(f"tcgen05.mma.cta_group::1.kind::f8f6f4.m{M}n{N}k{K}")
    C = np.zeros((M, N), np.uint16 if d == "f16" else np.uint32)
    if neg:
        A, B = A ^ np.uint8(1 << (WIDTH[fa] - 1)), B ^ np.uint8(1 << (WIDTH[fb] - 1))
    want = layoutsim.mma(inst, A, np.ascontiguousarray(B.T), C, arch="sm_100a", raw=True, types=types)
    assert np.array_equal(got, want.astype(np.uint32))
    oracle = mmasim_oracle() if HAVE_MMASIM and label else None
    if oracle is not None:
        ref = oracle.mmasim_d(label, A[None], np.ascontiguousarray(B.T)[None], C[None])[0]
        assert np.array_equal(got, ref.astype(np.uint32))


# ---- the block-scaled kinds ----------------------------------------------------------------------------
SCALED = [  # kind, qualifiers, scale_vec, types (d.a.b.scale), N, a_sf_id, b_sf_id, swizzle, MMA-Sim label
    # (.block32 is 2X for mxf4, .block16 4X for mxf4nvf4: PTX ISA 9.7.16.10.7)
    ("mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e2m1.e3m2.ue8m0", 32, 1, 3, None, "mxf8f6f4 e2m1.e3m2"),
    ("mxf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 32, 2, 0, None, "mxf4"),
    ("mxf4", "block_scale.block32", "2X", "f32.e2m1.e2m1.ue8m0", 16, 0, 2, SW128, "mxf4"),
    ("mxf4nvf4", "block_scale.scale_vec::4X", "4X", "f32.e2m1.e2m1.ue4m3", 32, 0, 0, None, "mxf4nvf4 ue4m3"),
    ("mxf4nvf4", "block_scale.block16", "4X", "f32.e2m1.e2m1.ue8m0", 16, 0, 0, SW128, None),
    ("mxf4nvf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 32, 2, 1, None, "mxf4nvf4 ue8m0 x2"),
    ("mxf4nvf4", "block_scale.scale_vec::4X", "4X", "f32.e2m1.e2m1.ue4m3", 16, 0, 0, (SW128, None), None),
]


def scaled_case(kind, vec, types, N, a_id, b_id, swizzle, seed):
    """(image, descriptors, scale image, idesc, A, B, sa, sb, M, K) of one block-scaled MMA."""
    _, fa, fb, fs = types.split(".")
    packed = kind != "mxf8f6f4"
    M, K = 128, (64 if packed else 32)
    block = 16 if vec == "4X" else 32
    rng = np.random.default_rng(seed)
    A, B = raw_values(rng, fa, (M, K)), raw_values(rng, fb, (N, K))
    nsf = K // block
    lo, hi = (120, 135) if fs == "ue8m0" else (0x30, 0x48)      # ue8m0 2**(s-127); ue4m3 about 1
    sa, sb = rng.integers(lo, hi, (M, nsf)).astype(np.uint8), rng.integers(lo, hi, (nsf, N)).astype(np.uint8)
    img = np.zeros(IMG, np.uint8)
    store(img, 0, A, fa, packed, swz(swizzle, 0))
    store(img, B_AT, B, fb, packed, swz(swizzle, 1))
    d = descs(swizzle, K, 0.5 if packed else 1)
    idesc = encode_scaled(M, N, types, a_sf_id=a_id, b_sf_id=b_id, kind=kind)
    return img, d, sf_image(sa, sb, a_id, b_id), idesc, A, B, sa, sb, M, K


@pytest.mark.parametrize("kind,quals,vec,types,N,a_id,b_id,swizzle,label", SCALED)
def test_block_scaled_fp4_kinds_are_layoutsim_mma_bit_for_bit(kind, quals, vec, types, N, a_id, b_id, swizzle, label):
    img, (da, db), sf, idesc, A, B, sa, sb, M, K = scaled_case(kind, vec, types, N, a_id, b_id, swizzle, N + a_id)
    out = np.zeros((128, N), np.uint32)
    src = scaled_kernel(N, f"{kind}.{quals}", IMG).replace(".version 8.7", ".version 8.8")   # .block16/32: PTX 8.8
    got = ptx.run(src, "k", 1, 128,
                  [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc), sf], arch="sm_100").buffers[1]
    name = f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}.m{M}n{N}k{K}"
    C = np.zeros((M, N), np.uint32)
    Bt = np.ascontiguousarray(B.T)
    want = layoutsim.mma(name, A, Bt, C, arch="sm_100a", raw=True, types=types, scale_a=sa, scale_b=sb)
    assert np.array_equal(got, want)
    assert np.count_nonzero(got) > N * M // 2                # the scales and operands reached the result
    oracle = mmasim_oracle() if HAVE_MMASIM and label else None
    if oracle is not None:
        ref = oracle.mmasim_d(label, A[None], Bt[None], C[None], sa[None], sb[None])[0]
        assert np.array_equal(got, ref)


def test_fp4_descriptor_faults_and_refusals():
    # an ue4m3 scale format with .scale_vec::2X (PTX ISA 9.7.16.10.7: 2X takes ue8m0 only), and the K=96
    # bit of .kind::mxf4nvf4 (not modelled): faults naming the idesc; an MN-major FP4 operand: K-major only
    img, (da, db), sf, idesc, *_ = scaled_case("mxf4nvf4", "2X", "f32.e2m1.e2m1.ue8m0", 16, 0, 0, None, 1)
    out = np.zeros((128, 16), np.uint32)
    src = scaled_kernel(16, "mxf4nvf4.block_scale.scale_vec::2X", IMG)
    for bad, match in ((idesc & ~(1 << 23), "scale format ue4m3"), (idesc | 1 << 31, "K-size bit 1"),
                       (idesc | 1 << 15, "FP6/FP4 operands are K-major only"),
                       (idesc | 1 << 13, "negates an operand of .kind::mxf4nvf4"),
                       (idesc | 3 << 29, "scale-factor id 3 puts SFA's scales past byte 3")):
        with pytest.raises(PtxFault, match=match):
            ptx.run(src, "k", 1, 128, [img, out, np.uint64(da), np.uint64(db), np.uint32(bad), sf], arch="sm_100")


@pytest.mark.parametrize("kind,vec,types", [("mxf8f6f4", "1X", "f32.e3m2.e2m1.ue8m0"),
                                            ("mxf4", "2X", "f32.e2m1.e2m1.ue8m0"),
                                            ("mxf4nvf4", "4X", "f32.e2m1.e2m1.ue4m3")])
def test_block_scaled_idesc_round_trips(kind, vec, types):
    from layoutsim.isa.ptx_tcgen05_idesc import decode_scaled
    v = encode_scaled(128, 200, types, a_sf_id=1, b_sf_id=2, kind=kind)
    info = decode_scaled(v, kind, vec)
    assert (info["types"], info["n"], info["a_sf_id"], info["b_sf_id"]) == (types, 200, 1, 2)
    assert info["name"] == f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}.m128n200k{info['k']}"


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed here")
@pytest.mark.parametrize("kind,quals", sorted({(c[0], c[1]) for c in SCALED}))
def test_the_hand_written_kernels_build_with_ptxas_for_sm_100a(kind, quals, tmp_path):
    # the forms written above are PTX that ptxas 13.0 takes (.block16/.block32 from PTX ISA 8.8)
    res = ptxas_sm100a(scaled_kernel(16, f"{kind}.{quals}", IMG).replace(".version 8.7", ".version 8.8"), tmp_path)
    assert res.returncode == 0, res.stderr
