"""sm_120a's block-scaled mma.sync in the executor: scale-a-data / scale-b-data and their
{byte-id, thread-id} selectors (PTX ISA 9.x 9.7.14.3 'Block Scaling for mma.sync').

The kernel loads every lane's A, B, C words (packed by the catalog's A/B/C maps, which the sm_120
mma.sync fragment figures give) and one scale word each for A and B, which this test writes itself
from the ISA's text and CUTLASS 4.2's SM120 traits, not from the catalog:
  SF_A of row i: lane 4 (i % 8) + 2 thread-id-a + i // 8 (the ISA: the pair %laneid % 4 == 2 thread-id-a,
      + 1; CuTe's SFALayout: row = lane / 4 + 8 (lane % 2)), byte byte-id-a + s for its scale s;
  SF_B of column j: lane 4 j + thread-id-b (the ISA: %laneid % 4 == thread-id-b), byte byte-id-b + s;
every other byte of every lane's scale word random. No sm_120 GPU exists here (from documents, not
measured): D must be bit for bit layoutsim.mma of the logical A, B, C and scale matrices and, where pip
`mmasim` is installed, MMA-Sim's D (its "RTX Blackwell" block-scaled MMA, validated by its authors on
RTX Blackwell)."""
import importlib.util
import pathlib

import numpy as np
import pytest

import layoutsim
import layoutsim.ptx as P
from layoutsim.packing import pack, unpack
from layoutsim.ptx import PtxFault

HAVE_MMASIM = all(importlib.util.find_spec(m) is not None for m in ("mmasim", "torch"))

KERNEL = """.version 8.8
.target sm_120a
.address_size 64
.visible .entry k(.param .u64 inp, .param .u64 out, .param .u32 sel)
{{
  .reg .b32 %r<20>; .reg .f32 %f<8>; .reg .b64 %rd<8>; .reg .b16 %h<4>;
  mov.u32 %r15, %laneid;
  ld.param.u32 %r16, [sel];
  and.b32 %r17, %r16, 255;
  cvt.u16.u32 %h0, %r17;
  bfe.u32 %r17, %r16, 8, 8;
  cvt.u16.u32 %h1, %r17;
  bfe.u32 %r17, %r16, 16, 8;
  cvt.u16.u32 %h2, %r17;
  bfe.u32 %r17, %r16, 24, 8;
  cvt.u16.u32 %h3, %r17;
  ld.param.u64 %rd1, [inp];
  mul.wide.u32 %rd2, %r15, 48;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.v4.u32 {{%r0, %r1, %r2, %r3}}, [%rd3];
  ld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd3+16];
  ld.global.v4.u32 {{%r8, %r9, %r10, %r11}}, [%rd3+32];
  mov.b32 %f4, %r6; mov.b32 %f5, %r7; mov.b32 %f6, %r8; mov.b32 %f7, %r9;
  {name} {{%f0, %f1, %f2, %f3}}, {{%r0, %r1, %r2, %r3}}, {{%r4, %r5}}, {{%f4, %f5, %f6, %f7}}, %r10, {{{sa}}}, %r11, {{{sb}}};
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r15, 16;
  add.s64 %rd6, %rd4, %rd5;
  st.global.v4.f32 [%rd6], {{%f0, %f1, %f2, %f3}};
  ret;
}}"""

# (catalog name, MMA-Sim name, {byte-id-a, thread-id-a}, {byte-id-b, thread-id-b})
CASES = [
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e5m2.f32.ue8m0",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e5m2.f32.ue8m0", (1, 1), (2, 3)),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e3m2.f32.ue8m0",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e3m2.f32.ue8m0", (3, 0), (0, 1)),
    ("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e2m1.f32.ue8m0",
     "m16n8k32.kind::mxf8f6f4.block32.f32.e2m3.e2m1.f32.ue8m0", (0, 0), (3, 2)),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
     "m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0", (2, 1), (2, 2)),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
     "m16n8k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.f32.ue8m0", (0, 0), (2, 0)),
    ("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
     "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3", (0, 1), (0, 3)),
]


def _raw(rng, fmt, shape):
    w = {"e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}[fmt]
    x = rng.integers(0, 1 << w, shape).astype(np.uint8)
    nan = {"e4m3": (x & 0x7F) == 0x7F, "e5m2": (x & 0x7C) == 0x7C}.get(fmt)       # no NaN/Inf inputs
    return np.where(nan, 0, x).astype(np.uint8) if nan is not None else x


def scale_words(rng, sa, sb, sel_a, sel_b):
    """Every lane's scale-a-data / scale-b-data word: the scales where the ISA and CuTe put them, random
    bytes elsewhere."""
    SA = rng.integers(0, 1 << 32, 32, dtype=np.uint64)
    SB = rng.integers(0, 1 << 32, 32, dtype=np.uint64)
    (ba, ta), (bb, tb) = sel_a, sel_b
    for words, s, byte, lane_of in ((SA, sa, ba, lambda i: 4 * (i % 8) + 2 * ta + i // 8),
                                    (SB, sb.T, bb, lambda j: 4 * j + tb)):
        for i in range(s.shape[0]):
            for k in range(s.shape[1]):
                sh = np.uint64(8 * (byte + k))
                words[lane_of(i)] = (words[lane_of(i)] & ~(np.uint64(0xFF) << sh)) | (np.uint64(s[i, k]) << sh)
    return SA.astype(np.uint32), SB.astype(np.uint32)


def run(name, A, B, C, SA, SB, sel, selectors=None, shift=None):
    """D (float32 [16, 8]) of the kernel; sel: the four selectors as immediates, or (selectors given) as
    registers holding them ('reg': %h0..%h3 from the .param)."""
    inst = layoutsim.get(name)
    shift = shift or {}
    regs = [pack(inst.operand(k).fragment, (x << shift.get(k, 0)).astype(x.dtype)[None])
            for k, x in (("A", A), ("B", B), ("C", C.view(np.uint32)))]
    inp = np.concatenate(regs + [SA[None, :, None], SB[None, :, None]], 2)[0].astype(np.uint32)
    if selectors == "reg":
        sa, sb = "%h0, %h1", "%h2, %h3"
    else:
        sa, sb = f"{sel[0]}, {sel[1]}", f"{sel[2]}, {sel[3]}"
    word = np.uint32(sel[0] | sel[1] << 8 | sel[2] << 16 | sel[3] << 24)
    r = P.run(KERNEL.format(name=name, sa=sa, sb=sb), "k", 1, 32, [inp.reshape(-1), np.zeros(128, np.float32), word],
              arch="sm_120")
    return unpack(inst.operand("D").fragment, r.buffers[1].view(np.uint32).reshape(1, 32, 4))[0, 0].view(np.float32), r


def _inputs(name, seed):
    inst = layoutsim.get(name)
    f, (M, N, K) = inst.formats, inst.shape
    nsf = K // inst.options["block"]
    rng = np.random.default_rng(seed)
    A, B = _raw(rng, f["a"], (M, K)), _raw(rng, f["b"], (K, N))
    C = rng.standard_normal((M, N)).astype(np.float32)
    lo = 120 if f["scale"] == "ue8m0" else 0x28                   # ue8m0 2^-7..2^7; ue4m3 0.25..~30
    hi = 135 if f["scale"] == "ue8m0" else 0x68
    sa = rng.integers(lo, hi, (M, nsf)).astype(np.uint8)
    sb = rng.integers(lo, hi, (nsf, N)).astype(np.uint8)
    # FP4 in the k32 forms' 8-bit container sits in bits 5-2 (CuTe's fp4_shift_A/B, MMA-Sim)
    shift = {k: 2 for k in "AB" if K == 32 and f[k.lower()] == "e2m1"}
    return rng, A, B, C, sa, sb, shift


def _mmasim(label, name, A, B, C, sa, sb):
    path = pathlib.Path(__file__).parents[1] / "numerics" / "mmasim_oracle.py"
    spec = importlib.util.spec_from_file_location("mmasim_oracle", path)
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    from mmasim.nv_ptx import MMABlockScale
    inst = layoutsim.get(name)
    f = inst.formats
    types = ".".join([f["d"], f["a"], f["b"], f["scale"]])
    op = MMABlockScale("RTX Blackwell", label)
    return oracle.dpa(op, types, inst.options["block"], A[None], B[None], C.view(np.uint32)[None],
                      sa[None], sb[None])[0]


@pytest.mark.parametrize("name, label, sel_a, sel_b", CASES, ids=[c[1] for c in CASES])
def test_block_scaled_mma_sync_reads_its_scale_registers(name, label, sel_a, sel_b):
    rng, A, B, C, sa, sb, shift = _inputs(name, len(label))
    SA, SB = scale_words(rng, sa, sb, sel_a, sel_b)
    D, r = run(name, A, B, C, SA, SB, (*sel_a, *sel_b), shift=shift)
    want = layoutsim.mma(name, A, B, C, arch="sm_120", scale_a=sa, scale_b=sb)
    assert np.array_equal(D.view(np.uint32), want.view(np.uint32))
    assert not np.array_equal(want, layoutsim.mma(name, A, B, C, arch="sm_120", scale_a=np.full_like(sa, sa[0, 0]),
                                                  scale_b=sb))          # the scales matter to D
    assert r.fidelity["documented"] == 1
    if HAVE_MMASIM:
        assert np.array_equal(D.view(np.uint32), _mmasim(label, name, A, B, C, sa, sb))


def test_register_selectors_equal_immediates_and_pick_other_lanes():
    name, _, sel_a, sel_b = CASES[0]
    rng, A, B, C, sa, sb, shift = _inputs(name, 7)
    SA, SB = scale_words(rng, sa, sb, sel_a, sel_b)
    imm, _ = run(name, A, B, C, SA, SB, (*sel_a, *sel_b))
    reg, _ = run(name, A, B, C, SA, SB, (*sel_a, *sel_b), selectors="reg")
    assert np.array_equal(imm.view(np.uint32), reg.view(np.uint32))
    # thread-id-a 0 instead: the scales of the lower thread pairs (random bytes here), read as the ISA says
    other, _ = run(name, A, B, C, SA, SB, (sel_a[0], 0, *sel_b), selectors="reg")
    lower = np.array([[(SA[4 * (i % 8) + i // 8] >> np.uint32(8 * sel_a[0])) & 0xFF] for i in range(16)], np.uint8)
    want = layoutsim.mma(name, A, B, C, arch="sm_120", scale_a=lower, scale_b=sb)
    assert np.array_equal(other.view(np.uint32), want.view(np.uint32))


def test_selectors_that_differ_across_the_warp_or_leave_table_37_fault():
    name = CASES[0][0]
    bad = KERNEL.format(name=name, sa="%h0, %h1", sb="%h2, %h3").replace(
        "and.b32 %r17, %r16, 255;", "and.b32 %r17, %r15, 3;")          # byte-id-a = %laneid
    inp = np.zeros(32 * 12, np.uint32)
    with pytest.raises(PtxFault, match="different byte-id/thread-id selectors") as e:
        P.run(bad, "k", 1, 32, [inp, np.zeros(128, np.float32), np.uint32(0)], arch="sm_120")
    assert e.value.fault["kind"] == "not_uniform"
    with pytest.raises(PtxFault, match=r"thread-id-a:2 out of range: with \.scale_vec::1X thread-id-a is 0, 1") as e:
        run(name, *(np.zeros(s, t) for s, t in (((16, 32), np.uint8), ((32, 8), np.uint8), ((16, 8), np.float32))),
            np.zeros(32, np.uint32), np.zeros(32, np.uint32), (0, 2, 0, 0), selectors="reg")
    assert e.value.fault["kind"] == "invalid_operand"
    with pytest.raises(layoutsim.LayoutsimError, match=r"byte-id-b:1 out of range: with \.scale_vec::2X byte-id-b is "
                                                       r"0, 2 \(PTX ISA 9\.7\.14\.3 Table 37\)"):
        run(CASES[3][0], np.zeros((16, 64), np.uint8), np.zeros((64, 8), np.uint8), np.zeros((16, 8), np.float32),
            np.zeros(32, np.uint32), np.zeros(32, np.uint32), (0, 0, 1, 0))


def test_fp4_in_a_byte_uses_bits_5_to_2_and_other_bits_fault():
    name, label, sel_a, sel_b = CASES[1]                              # e2m1 x e3m2
    rng, A, B, C, sa, sb, shift = _inputs(name, 3)
    SA, SB = scale_words(rng, sa, sb, sel_a, sel_b)
    with pytest.raises(PtxFault, match=r"a\d = 0x[0-9a-f]+: a \.e2m1 element in its byte uses bits 2-5 only") as e:
        run(name, A, B, C, SA, SB, (*sel_a, *sel_b))                  # e2m1 in the low bits: bits 0-1 set
    assert e.value.fault["kind"] == "invalid_operand"
