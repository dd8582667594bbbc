"""tcgen05.mma.sp.cta_group::2 (M = 256 over a CTA pair) in the executor: hand-written PTX, each kernel
assembled by ptxas 13.0 for sm_100a; no Blackwell GPU here: from documents, not measured.

- The pair (test_tcgen05_pair's kernel: PTX ISA 9.7.16.5; CuTe's SM100_MMA_*_2x1SM_SS_SPARSE ALayout /
  BLayout, M/2 rows of A and N/2 rows of the N x K B per peer): the even CTA's shared memory holds the
  kept values of A's rows 0..127 and B's rows 0..N/2-1, the odd CTA's the rest, at the same descriptor
  addresses; D in Layout A (row i in lane i % 128 of CTA i // 128).
- The metadata (assumed; the ISA's figures were not read here, but it gives M = 128 and M = 256 one
  layout, and CUTLASS 4.2's pair atoms lay each CTA's 128 rows out with UMMA::tmem_e_frg): each CTA's
  TMEM holds, at the same [sp-meta-tmem] address, the metadata of its own 128 rows of A in the M = 128
  layout (test_tcgen05_sparse.words).
- The arithmetic: layoutsim.mma of the whole M = 256 logical A, and MMA-Sim's two chained dense MMAs of
  the K halves per dot product (tests/numerics/mmasim_oracle.records_d).
"""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode as idesc_of
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from blackwell_oracle import HAVE_MMASIM, oracle, summary
from sparse_reference import PAIRS, SINGLES, logical
from test_ptx_tcgen05 import SM, k_major, operand, ptxas_sm100a
from test_tcgen05_pair import IMG, pair_kernel
from test_tcgen05_sparse import words

META = 128                                   # the metadata's TMEM column in each CTA (D: columns 0..N-1)
DENSE = "tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20, %p3;"
# every warp of each CTA stores its CTA's metadata words (param meta: [2 CTAs, 128 lanes, 2 columns])
# to TMEM lanes 32w.. of its slab, columns META, META + 1; then the pair synchronises
STORE = """  mad.lo.u32 %r17, %r30, 128, %r3;
  mul.wide.u32 %rd12, %r17, 8;
  ld.param.u64 %rd13, [meta];
  add.s64 %rd13, %rd13, %rd12;
  ld.global.v2.u32 {%r40, %r41}, [%rd13];
  shl.b32 %r13, %r5, 21;
  add.u32 %r14, %r2, %r13;
  add.u32 %r14, %r14, 128;
  tcgen05.st.sync.aligned.32x32b.x2.b32 [%r14], {%r40, %r41};
  tcgen05.wait::st.sync.aligned;
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  tcgen05.fence::after_thread_sync;
"""


def sparse_pair_kernel(kind, N, issuer=0):
    src = pair_kernel(N, issuer=issuer)
    for old, new in ((".reg .b32 %r<40>;", ".reg .b32 %r<48>;"),
                     (".param .u32 idesc)", ".param .u32 idesc, .param .u64 meta)"),
                     ("  ld.param.u64 %rd10, [da];", STORE + "  ld.param.u64 %rd10, [da];"),
                     (DENSE, f"add.u32 %r15, %r2, {META};\n  tcgen05.mma.sp.cta_group::2.kind::{kind} [%r2], "
                             f"%rd10, %rd11, [%r15], %r20, %p3;")):
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


def images(values, B):
    """Each CTA's shared image [2, IMG]: its 128 rows of A's kept values at 0, its N/2 rows of B at 8192
    (K-major, no swizzle), and the two descriptors."""
    img = np.zeros((2, IMG), np.uint8)
    descs = []
    for x, base in ((values, 0), (B, 8192)):
        e = x.dtype.itemsize
        rows, k = x.shape[0] // 2, x.shape[1]
        lbo, sbo = 128, 128 * (k * e // 16)
        off = k_major(rows, k, e, lbo, sbo)
        for c in range(2):
            img[c][(base + off)[..., None] + np.arange(e)] = x[rows * c:rows * (c + 1)].view(np.uint8).reshape(rows, k, e)
        descs.append(UmmaDescriptor(SM + base, lbo, sbo).encode())
    return img, descs


CASES = [  # kind, types, N, selector, MMA-Sim label (None: .kind::i8, exact), issuer
    ("f16", "f32.f16.f16", 64, 0, "f16", 0),
    ("f16", "f32.bf16.bf16", 32, 1, "bf16", 1),
    ("tf32", "f32.tf32.tf32", 32, 0, "tf32", 0),
    ("f8f6f4", "f32.e4m3.e5m2", 64, 0, "f8f6f4 e4m3.e5m2", 1),
    ("i8", "s32.s8.s8", 64, 0, None, 0),
]


def case(kind, types, N, selector, issuer, seed=0, swap=False, tmem_a=None):
    """(run with record_mmas, D [256, N] read back, logical A [256, K], B^T [K, N] raw, the entry); swap: the
    two CTAs' metadata images exchanged (the logical A then has each half's rows with the other's index);
    tmem_a: (kernel -> the kernel reading A from TMEM, kept values -> their A image) of
    test_tcgen05_tmem_a, the A image and an A read-back buffer passed after the others."""
    d, fa, fb = types.split(".")
    K = {"tf32": 16, "f16": 32, "f8f6f4": 64, "i8": 64}[kind]
    size = 2 if kind == "tf32" else 4
    rng = np.random.default_rng(seed + K + N + selector)
    values = operand(rng, fa, (256, K // 2))
    B = operand(rng, fb, (N, K))
    table = list(SINGLES if size == 2 else PAIRS)
    index = np.array(table, np.uint8)[rng.integers(0, len(table), (256, K // size))]
    meta = np.zeros((2, 128, 2), np.uint32)
    for c in range(2):
        w = words(kind, index[128 * c:128 * (c + 1)])
        if kind in ("f16", "tf32"):
            meta[c, :, selector], meta[c, :, 1 - selector] = w[:, 0], 0x77777777
        else:
            meta[c] = w
    if swap:
        meta, index = meta[::-1].copy(), np.concatenate([index[128:], index[:128]])
    e = values.dtype.itemsize
    v, b = values.view(f"u{e}"), B.view(f"u{e}")
    img, (da, db) = images(np.zeros_like(v) if tmem_a else v, b)      # tmem_a: the kept values only in TMEM
    idesc = idesc_of(kind, 256, N, types) | 1 << 2 | selector
    out = np.zeros((256, N), np.uint32)
    src = sparse_pair_kernel(kind, N, issuer)
    args = [img.reshape(-1), out, np.uint64(da), np.uint64(db), np.uint32(idesc), meta.reshape(-1)]
    if tmem_a:
        src, args = tmem_a[0](src), args + [tmem_a[1](v, 8 * e), np.zeros((256, 8), np.uint32)]
    r = ptx.run(src, "k", 2, 128, args, arch="sm_100", cluster=(2, 1, 1), record_mmas=True)
    inst = layoutsim.get(f"tcgen05.mma.sp.cta_group::2.kind::{kind}.m256n{N}k{K}")
    got = r.buffers[1] & (0xFFFF if d == "f16" else 0xFFFFFFFF)
    return r, got, logical(v, index, size), np.ascontiguousarray(b.T), inst


@pytest.mark.parametrize("kind,types,N,selector,label,issuer", CASES)
def test_sparse_pair_mma_is_the_whole_pairs_mma_of_the_logical_a(kind, types, N, selector, label, issuer):
    r, got, A, bt, inst = case(kind, types, N, selector, issuer)
    want = layoutsim.mma(inst, A, bt, np.zeros((256, N), np.uint32), arch="sm_100a", raw=True, types=types)
    assert np.array_equal(got, np.asarray(want, np.uint32))
    (rec,) = r.mmas
    assert rec.name == inst.name and rec.ctas == (0, 1) and np.array_equal(rec.a, A)
    sources = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert sources and all(".sp cta_group::2" in s and "assumed" in s for s in sources)
    if kind == "i8":
        exact = A.view(np.int8).astype(np.int64) @ bt.view(np.int8).astype(np.int64)
        assert np.array_equal(got, (exact & 0xFFFFFFFF).astype(np.uint32))
    elif HAVE_MMASIM:
        assert oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


def test_each_cta_supplies_the_metadata_of_its_own_rows():
    # the two CTAs' metadata exchanged: rows 0..127 are expanded with the odd CTA's index, 128..255 with
    # the even one's, and D changes accordingly
    kind, types, N, selector, _, issuer = CASES[0]
    _, plain, *_ = case(kind, types, N, selector, issuer)
    _, got, A, bt, inst = case(kind, types, N, selector, issuer, swap=True)
    want = layoutsim.mma(inst, A, bt, np.zeros((256, N), np.uint32), arch="sm_100a", raw=True, types=types)
    assert np.array_equal(got, np.asarray(want, np.uint32)) and not np.array_equal(got, plain)


def test_m128_pair_is_a_fault_naming_the_layout_not_modelled():
    kind, types, N, selector, _, issuer = CASES[0]
    src = sparse_pair_kernel(kind, N, issuer)
    img = np.zeros((2, IMG), np.uint8)
    idesc = idesc_of(kind, 128, N, types) | 1 << 2
    with pytest.raises(PtxFault, match="M=128: the metadata layout of 64 rows per CTA is not modelled") as e:
        ptx.run(src, "k", 2, 128, [img.reshape(-1), np.zeros((256, N), np.uint32), np.uint64(0), np.uint64(0),
                                   np.uint32(idesc), np.zeros(512, np.uint32)], arch="sm_100", cluster=(2, 1, 1))
    assert e.value.fault["kind"] == "invalid_operand"


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA 13) not installed")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    for n, kind in enumerate(("f16", "tf32", "f8f6f4", "i8")):
        res = ptxas_sm100a(sparse_pair_kernel(kind, 64), tmp_path, f"p{n}")
        assert res.returncode == 0, res.stderr


def per_mma(c):
    """blackwell_oracle.summary of one case's kernel (its one pair MMA against MMA-Sim)."""
    kind, types, N, selector, _, issuer = c
    return summary(f"hand-written sparse pair {kind} {types} N={N}", case(kind, types, N, selector, issuer)[0], 1)


ORACLE_KERNELS = {f"hand-written sparse pair {c[0]} {c[1]} N={c[2]}": (lambda c=c: per_mma(c))
                  for c in CASES if c[4] is not None}
