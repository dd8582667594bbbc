"""tcgen05.mma with A from tensor memory ([a-tmem]) beyond the dense cta_group::1 MMA, and .ashift, in the
executor: hand-written PTX, each kernel assembled by ptxas 13.0 for sm_100a; no Blackwell GPU here: from
documents and other implementations, not measured. Every expected value is written out again here.

- A in TMEM: 128 rows per CTA, row i in lane i, its K elements packed along the 32-bit columns from the
  [a-tmem] column, the first element in the low bits (as Triton 3.6 writes it, and JAX's Mosaic GPU's
  tcgen05.LAYOUT / tmem_default_layout(packing) with packing = 32 / bits: jax/experimental/mosaic/gpu/
  tcgen05.py). One row of one MMA is always 32 bytes: 8 columns (f16 K=16, e4m3 K=32, e2m1 K=64 two to a
  byte; a sparse MMA's K/2 kept values likewise).
- The CTA pair (M = 256): each CTA holds its own 128 rows of A in its own TMEM at the same [a-tmem] address,
  as CUTLASS's SM100_MMA_*_2x1SM_TS atoms split it (cute/arch/mma_sm100_umma.hpp; FrgTypeA tmem_frg_2sm, 128
  rows per SM for M = 256) and as JAX's B200 test test_mma_collective_lhs_tmem stores it (f16, M = 256: each
  block its m_slice of 128 rows, tests/mosaic/gpu_test.py).
- Block-scaled MMAs with A in TMEM (JAX's B200 tests test_mma_block_scaled_basic, lhs_in_tmem: e4m3/e5m2 with
  .kind::mxf8f6f4, e2m1 with .kind::mxf4nvf4, M = 128; test_mma_block_scaled_collective: e2m1, M = 256): the
  same layout, e2m1 eight to a column (JAX copies its two-per-byte shared tile with tcgen05.cp).
- .sp with A in TMEM: the K/2 kept values in the same layout (JAX's B200 test test_mma_sparse_lhs_tmem,
  cta_group::1); the pair's as the dense pair's (assumed).
- .ashift (PTX ISA 9.7.16.10.9.1: "shifts the rows of the A matrix down by one row, except for the last row
  in the Tensor Memory", M = 128 / 256, A in TMEM only): CUTLASS 4.7's CuTe DSL (python/CuTeDSL/cutlass/
  experimental/primitives/nvvm_wrapper.py, tcgen05_mma's a_shift) says the shift follows the MMA, which
  reads the unshifted A, and acts per 32-lane sub-partition: shifted[r] = A[r + 1] when r % 32 != 31, else
  A[r] (assumed: one source).
"""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode, encode_scaled
from layoutsim.ptx.state import PtxFault

from blackwell_oracle import HAVE_MMASIM, oracle, summary
from test_ptx_tcgen05 import mma_kernel, operand, ptxas_sm100a, read_back, scaled_kernel
from test_tcgen05_fp4 import B_AT as FP4_B_AT, IMG as FP4_IMG, scaled_case
from test_tcgen05_pair import pair_kernel
import test_tcgen05_scaled_pair as SCP
from test_tcgen05_scale_d import image as single_image
import test_tcgen05_sparse_pair as SPP

A_COL = 448            # single CTA: A's first TMEM column (D from 0, scales 256..271; 512 allocated)
A_COL_PAIR = 224       # test_tcgen05_pair's kernel allocates 256 columns (D from 0, N <= 128, metadata at 128)


def store_a(col, rank, sync):
    """PTX: every thread stores its row (128 * rank + %tid) of the A image (param aimg: 8 words a row) to
    TMEM lane 32w + l of its warp's slab, columns col..col+7; %ra10: the [a-tmem] address."""
    words = ", ".join(f"%ra{i}" for i in range(1, 9))
    return (f"  mad.lo.u32 %ra0, {rank}, 128, %r3;\n  mul.wide.u32 %rda0, %ra0, 32;\n"
            f"  ld.param.u64 %rda1, [aimg];\n  add.s64 %rda1, %rda1, %rda0;\n"
            f"  ld.global.v4.u32 {{%ra1, %ra2, %ra3, %ra4}}, [%rda1];\n"
            f"  ld.global.v4.u32 {{%ra5, %ra6, %ra7, %ra8}}, [%rda1+16];\n"
            f"  shl.b32 %ra9, %r5, 21;\n  add.u32 %ra9, %ra9, %r2;\n  add.u32 %ra9, %ra9, {col};\n"
            f"  tcgen05.st.sync.aligned.32x32b.x8.b32 [%ra9], {{{words}}};\n  tcgen05.wait::st.sync.aligned;\n"
            f"  tcgen05.fence::before_thread_sync;\n{sync}  tcgen05.fence::after_thread_sync;\n"
            f"  add.u32 %ra10, %r2, {col};\n")


def with_tmem_a(src, mma, col, pair, ashift=False):
    """`src` (a kernel of test_ptx_tcgen05 / test_tcgen05_pair and their variants, whose MMA line is `mma`)
    with A stored to TMEM first (store_a) and the MMA reading it; ashift: that MMA .ashift (enable-input-d
    false), a plain second one after it (enable-input-d true) and each thread's row of A read back from
    TMEM to param aout after D."""
    sync = "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n" if pair else "  bar.sync 0;\n"
    entry = src.index(")\n{\n")
    src = (src[:entry] + ", .param .u64 aimg, .param .u64 aout)\n{\n  .reg .b32 %ra<12>; .reg .b64 %rda<2>;\n"
           + src[entry + 4:])
    anchor = "  ld.param.u64 %rd10, [da];"
    assert src.count(anchor) == 1 and src.count(mma) == 1, mma
    src = src.replace(anchor, store_a(col, "%r30" if pair else "0", sync) + anchor)
    new = mma.replace("[%r2], %rd10,", "[%r2], [%ra10],")
    if ashift:
        kind = new.split(" ")[0]
        new = (new.replace(kind, kind + ".ashift") + "\n  mov.pred %p4, 1;\n  " + new.replace("%p3;", "%p4;"))
        back = "  mad.lo.u32 %ra0, %r30, 128, %r3;\n" if pair else "  mov.u32 %ra0, %r3;\n"
        tail = "  add.u32 %ra11, %r12, " + str(col) + ";\n" + back + read_back("%ra11", 8, "%ra0", "aout")
        done = "  bar.sync 0;\n  @%p1 tcgen05.relinquish" if not pair else "  barrier.cluster.arrive.aligned;\n" \
                                                                            "  barrier.cluster.wait.aligned;\n  @%p1 tcgen05.relinquish"
        assert src.count(done) == 1
        src = src.replace(done, tail + done)
    return src.replace(mma, new)


def rows_of(raw, width):
    """The A image: each row's raw elements packed little-endian into 8 words (width 4: two to a byte)."""
    raw = np.ascontiguousarray(raw)
    if width == 4:
        raw = (raw[:, 0::2] | raw[:, 1::2] << 4).astype(np.uint8)
    return raw.view(np.uint8).reshape(raw.shape[0], 32).view("<u4")


def shifted(a):
    """A after .ashift (module docstring: per 32-row sub-partition, row r takes row r + 1, row 31 keeps)."""
    r = np.arange(a.shape[0])
    return a[np.where(r % 32 == 31, r, r + 1)]


# ---- dense: the pair's M = 256, and .ashift --------------------------------------------------------------
PAIR_MMA = "tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20, %p3;"
ONE_MMA = "tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;"


def dense(kind, types, M, N, issuer=0, ashift=False, seed=0):
    """(run with record_mmas, D read back [M, N] raw, A [M, K] raw, B^T [K, N] raw, A read back or None)."""
    d, fa, fb = types.split(".")
    K = 256 // {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}[fa]
    rng = np.random.default_rng(seed + M + N)
    A, B = operand(rng, fa, (M, K)), operand(rng, fb, (N, K))
    e = A.dtype.itemsize
    a, b = A.view(f"u{e}"), B.view(f"u{e}")
    aimg = rows_of(a, 8 * e)
    aout = np.zeros((256, 8), np.uint32)
    idesc = np.uint32(encode(kind, M, N, types))
    if M == 256:
        img, (da, db) = SPP.images(np.zeros_like(a), b)          # A only in TMEM: zeros in shared memory
        src = with_tmem_a(pair_kernel(N, issuer=issuer).replace("kind::f16", f"kind::{kind}"),
                          PAIR_MMA.replace("f16", kind), A_COL_PAIR, True, ashift)
        out = np.zeros((256, N), np.uint32)
        r = ptx.run(src, "k", 2, 128, [img.reshape(-1), out, np.uint64(da), np.uint64(db), idesc, aimg, aout],
                    arch="sm_100", cluster=(2, 1, 1), record_mmas=True)
    else:
        img, (da, db) = single_image(np.zeros_like(a), b)           # A at 0, B at 8192, K-major
        src = with_tmem_a(mma_kernel(N, 16384).replace("KIND", kind), ONE_MMA.replace("KIND", kind), A_COL, False,
                          ashift)
        out = np.zeros((128, N), np.uint32)
        r = ptx.run(src, "k", 1, 128, [img, out, np.uint64(da), np.uint64(db), idesc, aimg, aout],
                    arch="sm_100", record_mmas=True)
    got = r.buffers[1] & (0xFFFF if d == "f16" else 0xFFFFFFFF)
    return r, got, a, np.ascontiguousarray(b.T), (r.buffers[6][:M] if ashift else None)


DENSE = [  # kind, types, M, N, issuer, .ashift
    ("f16", "f32.f16.f16", 256, 64, 0, False),
    ("f16", "f32.bf16.bf16", 256, 128, 1, False),
    ("i8", "s32.s8.u8", 256, 64, 0, False),
    ("f8f6f4", "f32.e4m3.e5m2", 256, 32, 1, False),
    ("f16", "f32.f16.f16", 128, 64, 0, True),
    ("tf32", "f32.tf32.tf32", 128, 32, 0, True),
    ("f16", "f32.f16.f16", 256, 64, 1, True),
]


def _mma(kind, types, M, N, A, bt, C):
    inst = layoutsim.get(f"tcgen05.mma.cta_group::{M // 128}.kind::{kind}.m{M}n{N}k{A.shape[1]}")
    return np.asarray(layoutsim.mma(inst, A, bt, C, arch="sm_100a", raw=True, types=types), np.uint32)


@pytest.mark.parametrize("kind,types,M,N,issuer,ashift", DENSE)
def test_a_from_tensor_memory_of_the_pair_and_ashift(kind, types, M, N, issuer, ashift):
    r, got, A, bt, a_after = dense(kind, types, M, N, issuer, ashift)
    zero = np.zeros((M, N), np.uint32)
    first = _mma(kind, types, M, N, A, bt, zero)
    if not ashift:
        assert np.array_equal(got, first)
        if kind == "i8":
            exact = A.view(np.int8).astype(np.int64) @ bt.view(np.uint8).astype(np.int64)
            assert np.array_equal(got, (exact & 0xFFFFFFFF).astype(np.uint32))
    else:
        # the .ashift MMA read the unshifted A; the next one reads the shifted rows, which stay in TMEM
        after = np.concatenate([shifted(A[c:c + 128]) for c in range(0, M, 128)])
        assert np.array_equal(got, _mma(kind, types, M, N, after, bt, first))
        assert np.array_equal(a_after, rows_of(after, 8 * A.dtype.itemsize))
        assert not np.array_equal(got, _mma(kind, types, M, N, A, bt, first))       # the shift mattered
    assert len(r.mmas) == 1 + ashift and r.mmas[0].ctas == ((0, 1) if M == 256 else (0,))
    src = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert any(".ashift: after the MMA" in s and "assumed" in s for s in src) == ashift
    if HAVE_MMASIM and kind != "i8":
        row = oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]
        assert row["differ"] == 0 and row["mmas"] == 1 + ashift


# ---- block-scaled MMAs with A in TMEM ----------------------------------------------------------------------
SCALED_ONE = [  # kind, qualifiers, scale_vec, types, N, a_sf_id, b_sf_id (cta_group::1, M = 128)
    ("mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e4m3.e5m2.ue8m0", 64, 1, 2),
    ("mxf4nvf4", "block_scale.scale_vec::4X", "4X", "f32.e2m1.e2m1.ue4m3", 32, 0, 0),
    ("mxf4", "block_scale.block32", "2X", "f32.e2m1.e2m1.ue8m0", 16, 2, 1),
]
SCALED_PAIR = [  # the pair's M = 256 (JAX's test_mma_block_scaled_collective with lhs_in_tmem: e2m1)
    ("mxf4nvf4", "block_scale.scale_vec::2X", "2X", "f32.e2m1.e2m1.ue8m0", 64, 2, 1, 0),
    ("mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e5m2.e4m3.ue8m0", 32, 0, 3, 1),
]


def scaled_one(kind, quals, vec, types, N, a_id, b_id):
    img, (da, db), sf, idesc, A, B, sa, sb, M, K = scaled_case(kind, vec, types, N, a_id, b_id, None, N + a_id)
    img[:FP4_B_AT] = 0                                           # A only in TMEM
    width = 4 if kind != "mxf8f6f4" else 8
    form = f"tcgen05.mma.cta_group::1.kind::{kind}.{quals} [%r2], %rd10, %rd11, %r20, [%r15], [%r16], %p3;"
    src = with_tmem_a(scaled_kernel(N, f"{kind}.{quals}", FP4_IMG).replace(".version 8.7", ".version 8.8"),
                      form, A_COL, False)
    out = np.zeros((128, N), np.uint32)
    r = ptx.run(src, "k", 1, 128, [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc), sf,
                                   rows_of(A, width), np.zeros((256, 8), np.uint32)], arch="sm_100", record_mmas=True)
    return r, r.buffers[1], A, B, sa, sb, M, K


def scaled_pair(kind, quals, vec, types, N, a_id, b_id, issuer):
    A, B, sa, sb, K, args = SCP.case(kind, vec, types, N, a_id, b_id, (None, None), 5 * N + a_id)
    args[0].reshape(2, -1)[:, :SCP.B_AT] = 0                     # A only in TMEM
    width = 4 if kind != "mxf8f6f4" else 8
    form = f"tcgen05.mma.cta_group::2.kind::{kind}.{quals} [%r2], %rd10, %rd11, %r20, [%r15], [%r16], %p3;"
    src = with_tmem_a(SCP.scaled_pair_kernel(N, f"{kind}.{quals}", issuer), form, A_COL, True)
    r = ptx.run(src, "k", 2, 128, args + [rows_of(A, width), np.zeros((256, 8), np.uint32)], arch="sm_100",
                cluster=(2, 1, 1), record_mmas=True)
    return r, SCP.d_of(r.buffers[1], 256, N), A, B, sa, sb, 256, K


@pytest.mark.parametrize("case", [("one",) + c for c in SCALED_ONE] + [("pair",) + c for c in SCALED_PAIR],
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}-N{c[5]}")
def test_block_scaled_mma_reads_a_from_tensor_memory(case):
    r, got, A, B, sa, sb, M, K = (scaled_one if case[0] == "one" else scaled_pair)(*case[1:])
    kind, vec, types, N = case[1], case[3], case[4], case[5]
    name = f"tcgen05.mma.cta_group::{M // 128}.kind::{kind}.block_scale.scale_vec::{vec}.m{M}n{N}k{K}"
    want = layoutsim.mma(name, A, np.ascontiguousarray(B.T), np.zeros((M, N), np.uint32), arch="sm_100a", raw=True,
                         types=types, scale_a=sa, scale_b=sb)
    assert np.array_equal(got, want) and np.count_nonzero(got) > M * N // 2
    (rec,) = r.mmas
    assert rec.name == name and np.array_equal(rec.a, A)
    if HAVE_MMASIM:
        assert oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


def test_fp6_fp4_a_of_f8f6f4_from_tensor_memory_is_a_fault():
    # .kind::mxf8f6f4 with an e2m1 A: no source read here packs FP6/FP4 of the 8-bit-slot kinds in TMEM
    kind, quals, vec, types, N, a_id, b_id = "mxf8f6f4", "block_scale.scale_vec::1X", "1X", "f32.e2m1.e4m3.ue8m0", 32, 0, 0
    with pytest.raises(PtxFault, match="FP6/FP4 A of .kind::mxf8f6f4 from tensor memory is not modelled"):
        scaled_one(kind, quals, vec, types, N, a_id, b_id)


# ---- .sp over the pair with A in TMEM ------------------------------------------------------------------------
SPARSE_PAIR = [  # kind, types, N, selector, MMA-Sim label (None: i8), issuer
    ("f16", "f32.f16.f16", 64, 0, "f16", 0),
    ("f8f6f4", "f32.e4m3.e4m3", 32, 0, "f8f6f4", 1),
    ("i8", "s32.s8.s8", 64, 0, None, 0),
]


def sparse_pair(kind, types, N, selector, issuer):
    """SPP.case with the kept values from TMEM (each CTA its 128 rows' 32 bytes, A_COL_PAIR..)."""
    mma = f"tcgen05.mma.sp.cta_group::2.kind::{kind} [%r2], %rd10, %rd11, [%r15], %r20, %p3;"
    return SPP.case(kind, types, N, selector, issuer,
                    tmem_a=(lambda src: with_tmem_a(src, mma, A_COL_PAIR, True), rows_of))


@pytest.mark.parametrize("kind,types,N,selector,label,issuer", SPARSE_PAIR)
def test_sparse_pair_mma_reads_its_kept_values_from_each_ctas_tensor_memory(kind, types, N, selector, label, issuer):
    r, got, A, bt, inst = sparse_pair(kind, types, N, selector, issuer)
    want = layoutsim.mma(inst, A, bt, np.zeros((256, N), np.uint32), arch="sm_100a", raw=True, types=types)
    assert np.array_equal(got, np.asarray(want, np.uint32))
    sources = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert sources and all(".sp A from tensor memory" in s for s in sources)
    if label and HAVE_MMASIM:
        assert oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


# ---- what stays refused -------------------------------------------------------------------------------------
def test_a_from_tensor_memory_of_the_pairs_m128_is_a_fault():
    # M = 128 over the pair (Layout B): CUTLASS's 2x1SM_TS atoms duplicate A over the lane halves (TmemAllocMode
    # Duplicated), JAX's Mosaic GPU takes only 128 rows of A per CTA from TMEM: one source, not modelled
    src = with_tmem_a(pair_kernel(32), PAIR_MMA, A_COL_PAIR, True)
    img = np.zeros((2, 16384), np.uint8)
    with pytest.raises(PtxFault, match=r"A from tensor memory with M=128 \(layout B\) is not modelled"):
        ptx.run(src, "k", 2, 128, [img.reshape(-1), np.zeros((256, 16), np.uint32), np.uint64(0), np.uint64(0),
                                   np.uint32(encode("f16", 128, 32, "f32.f16.f16")), np.zeros((256, 8), np.uint32),
                                   np.zeros((256, 8), np.uint32)], arch="sm_100", cluster=(2, 1, 1))


# ---- the kernels assemble, and their MMAs against MMA-Sim (tests/blackwell_crosscheck.py) -----------------------
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA 13) not installed")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    kernels = [with_tmem_a(mma_kernel(64, 16384).replace("KIND", "f16"), ONE_MMA.replace("KIND", "f16"), A_COL, False,
                           True),
               with_tmem_a(pair_kernel(64), PAIR_MMA, A_COL_PAIR, True, True),
               with_tmem_a(SCP.scaled_pair_kernel(64, "mxf4nvf4.block_scale.scale_vec::2X"),
                           "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::2X [%r2], %rd10, %rd11, %r20, "
                           "[%r15], [%r16], %p3;", A_COL, True),
               with_tmem_a(scaled_kernel(32, "mxf8f6f4.block_scale.scale_vec::1X", FP4_IMG),
                           "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r2], %rd10, %rd11, %r20, "
                           "[%r15], [%r16], %p3;", A_COL, False),
               with_tmem_a(SPP.sparse_pair_kernel("f16", 64), "tcgen05.mma.sp.cta_group::2.kind::f16 [%r2], %rd10, "
                           "%rd11, [%r15], %r20, %p3;", A_COL_PAIR, True)]
    for i, src in enumerate(kernels):
        res = ptxas_sm100a(src, tmp_path, f"k{i}")
        assert res.returncode == 0, (i, res.stderr)


def _name(c, what):
    if what == "dense":
        kind, types, M, N, issuer, ashift = c
        return f"hand-written A-in-TMEM {kind} {types} M={M} N={N}{' .ashift' * ashift}"
    if what == "sparse":
        return f"hand-written A-in-TMEM .sp pair {c[0]} {c[1]} N={c[2]}"
    return f"hand-written A-in-TMEM{' pair' * (what == 'pair')} {c[0]} {c[3]} M={128 * (1 + (what == 'pair'))} N={c[4]}"


ORACLE_KERNELS = {
    **{_name(c, "dense"): (lambda c=c: summary(_name(c, "dense"), dense(*c)[0], 1 + c[5])) for c in DENSE if c[0] != "i8"},
    **{_name(c, "one"): (lambda c=c: summary(_name(c, "one"), scaled_one(*c)[0], 1)) for c in SCALED_ONE},
    **{_name(c, "pair"): (lambda c=c: summary(_name(c, "pair"), scaled_pair(*c)[0], 1)) for c in SCALED_PAIR},
    **{_name(c, "sparse"): (lambda c=c: summary(_name(c, "sparse"), sparse_pair(*c[:4], c[5])[0], 1))
       for c in SPARSE_PAIR if c[4]},
}
