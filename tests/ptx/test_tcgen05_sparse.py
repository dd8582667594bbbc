"""tcgen05.mma.sp in the executor (layoutsim/ptx/ops_tcgen05_sparse.py), hand-written PTX (each kernel
assembles with `ptxas -arch=sm_100a`, test_the_kernels_assemble_for_sm_100a): the four warps write the
metadata into TMEM with tcgen05.st.32x32b.x2 (register r of lane l of warp w: TMEM lane 32w + l,
column META + r, PTX ISA 9.7.16.2.3.1), thread 0 issues the sparse MMA, all read D back.

Expected values: the metadata words are built here from CUTLASS 4.2's UMMA::tmem_e_frg (M = 128; the
cells written out again in `words` below, assumed, as the module says), the logical A from the
ISA's index table (9.7.16.10.8.1-2, written out again here), and D is layoutsim.mma of the logical A and,
where pip mmasim is installed, MMA-Sim's two chained dense MMAs of the K halves
(tests/numerics/test_sparse_tcgen05.py shows the two agree)."""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode as idesc_of
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from blackwell_oracle import HAVE_MMASIM, oracle as mmasim_oracle, summary
from sparse_reference import PAIRS, SINGLES, logical
from test_ptx_tcgen05 import k_major, mma_kernel, operand, ptxas_sm100a, rules_kernel, SM
from test_tcgen05_extra import ws_cells

META = 256                               # the metadata's first TMEM column (D takes columns 0..N-1)
MMA = "tcgen05.mma.cta_group::1.kind::KIND [%r2], %rd10, %rd11, %r20, %p3;"
STORE = """  bar.sync 0;
  ld.shared.u32 %r2, [%r1];
  mul.wide.u32 %rd5, %r3, 8;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.v2.u32 {%r30, %r31}, [%rd6+16384];
  shr.u32 %r5, %r3, 5;
  shl.b32 %r32, %r5, 21;
  add.u32 %r33, %r2, %r32;
  add.u32 %r33, %r33, 256;
  tcgen05.st.sync.aligned.32x32b.x2.b32 [%r33], {%r30, %r31};
  tcgen05.wait::st.sync.aligned;
"""
A_AT, A_COL = 17408, 320      # A from TMEM: the kept values' image in global memory, their first TMEM column
# each thread stores its row's 32 bytes of kept values (8 words) at TMEM lane 32w + l, column A_COL..
STORE_A = """  mul.wide.u32 %rd5, %r3, 32;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.v4.u32 {%r40, %r41, %r42, %r43}, [%rd6+17408];
  ld.global.v4.u32 {%r44, %r45, %r46, %r47}, [%rd6+17424];
  add.u32 %r36, %r2, 320;
  add.u32 %r37, %r36, %r32;
  tcgen05.st.sync.aligned.32x32b.x8.b32 [%r37], {%r40, %r41, %r42, %r43, %r44, %r45, %r46, %r47};
  tcgen05.wait::st.sync.aligned;
"""


def sparse_kernel(kind, N, selector_column=0, a_tmem=False, ws=False):
    """PTX: mma_kernel with the metadata stored to TMEM and the MMA made sparse; a_tmem: A's kept values
    too (from the global image at A_AT, 32 bytes a row, to TMEM columns A_COL.., row m in lane m) and
    the MMA reading A from there ([a-tmem]); ws: tcgen05.mma.ws.sp (N: the columns each thread reads back)."""
    a = "[%r36]" if a_tmem else "%rd10"
    op = "tcgen05.mma.ws.sp.cta_group::1" if ws else "tcgen05.mma.sp.cta_group::1"
    src = mma_kernel(N, 16384).replace(MMA, f"add.u32 %r34, %r2, {META + selector_column};\n  "
                                            f"{op}.kind::{kind} [%r2], {a}, %rd11, [%r34], "
                                            f"%r20, %p3;").replace(".reg .b32 %r<40>;", ".reg .b32 %r<48>;")
    anchor = "  tcgen05.fence::before_thread_sync;\n  bar.sync 0;"
    assert src.count(anchor) == 1
    return src.replace(anchor, STORE + STORE_A * a_tmem + anchor)


def words(kind, index):
    """TMEM words [128 lanes, 2 columns] holding the metadata fields index [M, chunks] (tmem_e_frg; M = 64 / 32:
    tmem_e_frg_ws, the same cells again every M lanes, as print_umma_frg.cu prints them):
    f16/tf32: row m's chunk c in lane m%8 + 8(c//4) + 16(m//16), bits 16((m//8)%2) + 4(c%4), one column;
    f8f6f4/i8: row m in lane m, chunk c in column c//8, bits 4(c%8)."""
    out = np.zeros((128, 2), np.uint32)
    M = index.shape[0]
    for m in range(M):
        for c in range(index.shape[1]):
            if kind in ("f16", "tf32"):
                lane, col, bit = m % 8 + 8 * (c // 4) + 16 * (m // 16), 0, 16 * ((m // 8) % 2) + 4 * (c % 4)
            else:
                lane, col, bit = m, c // 8, 4 * (c % 8)
            for q in range(128 // M):
                out[lane + M * q, col] |= np.uint32(int(index[m, c]) << bit)
    return out





def run(kind, types, N, values, B, index, meta_words, selector=0, column=0, idesc=None, a_tmem=False, ws=False):
    M = values.shape[0]
    img = np.zeros(A_AT + 128 * 32, np.uint8)
    descs = []
    for x, base in ((values, 0), (B, 8192)):
        e = x.dtype.itemsize
        mn, k = x.shape
        lbo, sbo = 128, 128 * (k * e // 16)
        img[(base + k_major(mn, k, e, lbo, sbo))[..., None] + np.arange(e)] = x.view(np.uint8).reshape(mn, k, e)
        descs.append(UmmaDescriptor(SM + base, lbo, sbo).encode())
    img[16384:A_AT] = meta_words.view(np.uint8).reshape(-1)
    if a_tmem:                                 # row m's kept values, little-endian in its 8 words
        img[A_AT:] = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    if idesc is None:
        idesc = idesc_of(kind, M, N, types) | 1 << 2 | selector
    cols = {32: N // 4, 64: N // 2}.get(M, N)                     # D's columns (.ws: Layouts G, E, D)
    out = np.zeros((128, cols), np.uint32)
    return ptx.run(sparse_kernel(kind, cols, column, a_tmem, ws), "k", 1, 128,
                   [img, out, np.uint64(descs[0]), np.uint64(descs[1]), np.uint32(idesc)],
                   arch="sm_100", shared_bytes=0, record_mmas=True)


CASES = [  # kind, types, N, selector, MMA-Sim label (None: .kind::i8, exact, which MMA-Sim does not model), A from TMEM
    ("f16", "f32.f16.f16", 32, 0, "f16", False),
    ("f16", "f32.bf16.bf16", 16, 1, "bf16", False),
    ("f16", "f16.f16.f16", 16, 0, "f16->f16", False),
    ("tf32", "f32.tf32.tf32", 16, 1, "tf32", False),
    ("f8f6f4", "f32.e4m3.e5m2", 16, 0, "f8f6f4 e4m3.e5m2", False),
    ("i8", "s32.s8.u8", 32, 0, None, False),
    ("f16", "f32.bf16.bf16", 32, 1, "bf16", True),
    ("tf32", "f32.tf32.tf32", 16, 0, "tf32", True),
    ("f8f6f4", "f32.e4m3.e5m2", 64, 0, "f8f6f4 e4m3.e5m2", True),
    ("i8", "s32.u8.s8", 16, 0, None, True),
]


def sparse_case(kind, types, N, selector, a_tmem, M=128, ws=False):
    """(run with record_mmas, D read back [M, N], layoutsim.mma's D of the logical A, logical A, B^T raw, the
    entry) of one case; ws: tcgen05.mma.ws.sp, D read back from Layout G / E / D (ws_cells)."""
    d, fa, fb = types.split(".")
    K = {"tf32": 16, "f16": 32, "f8f6f4": 64, "i8": 64}[kind]
    size = 2 if kind == "tf32" else 4
    rng = np.random.default_rng(K + N + selector + 5 * a_tmem + M)
    values = operand(rng, fa, (M, K // 2))
    B = operand(rng, fb, (N, K))
    table = list(SINGLES if size == 2 else PAIRS)
    index = np.array(table, np.uint8)[rng.integers(0, len(table), (M, K // size))]
    meta = np.zeros((128, 2), np.uint32)
    w = words(kind, index)
    if kind in ("f16", "tf32"):
        meta[:, selector] = w[:, 0]           # selector s: column META + s (CUTLASS id2 = tmem_e & 1)
        meta[:, 1 - selector] = 0x77777777    # the other column: undefined indices, must not be read
    else:
        meta = w
    e = values.dtype.itemsize
    v, b = values.view(f"u{e}"), B.view(f"u{e}")
    r = run(kind, types, N, v, b, index, meta, selector, a_tmem=a_tmem, ws=ws)
    A = logical(v, index, size)
    bt = np.ascontiguousarray(b.T)
    inst = layoutsim.get(f"tcgen05.mma.sp{'.ws' * ws}.cta_group::1.kind::{kind}.m{M}n{N}k{K}")
    want = layoutsim.mma(inst, A, bt, np.zeros((M, N), np.uint16 if d == "f16" else np.uint32),
                         arch="sm_100a", raw=True, types=types).astype(np.uint32)
    got = r.buffers[1][ws_cells(M, N) if ws else np.s_[:]] & (0xFFFF if d == "f16" else 0xFFFFFFFF)
    return r, got, want, A, bt, inst


@pytest.mark.parametrize("kind,types,N,selector,label,a_tmem", CASES)
def test_sparse_mma_is_layoutsim_mma_of_the_logical_a(kind, types, N, selector, label, a_tmem):
    r, got, want, A, bt, inst = sparse_case(kind, types, N, selector, a_tmem)
    assert np.array_equal(got, want)
    (rec,) = r.mmas
    assert rec.name == inst.name and np.array_equal(rec.a, A)
    sources = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert sources and all(".sp" in s and "assumed" in s for s in sources)   # the fidelity line names the assumption
    assert all(("A from tensor memory" in s) == a_tmem for s in sources)
    if kind == "i8":                           # exact: the integer product, wrapped to 32 bits
        sa, sb = (np.int8 if x == "s8" else np.uint8 for x in types.split(".")[1:3])
        exact = A.view(sa).astype(np.int64) @ bt.view(sb).astype(np.int64)
        assert np.array_equal(got, (exact & 0xFFFFFFFF).astype(np.uint32))
    oracle = mmasim_oracle() if HAVE_MMASIM else None
    if oracle is not None and label is not None:
        d = types.split(".")[0]
        h = A.shape[1] // 2
        zero = np.zeros((1, 128, bt.shape[1]), np.uint16 if d == "f16" else np.uint32)
        half = oracle.mmasim_d(label, A[None, :, :h], bt[None, :h], zero)
        ref = oracle.mmasim_d(label, A[None, :, h:], bt[None, h:], half)[0]
        assert np.array_equal(got.astype(ref.dtype), ref)
        assert oracle.compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


WS_CASES = [  # kind, types, M, N, selector, MMA-Sim label, A from TMEM (tcgen05.mma.ws.sp: Table 39's M 32/64/128, N 64/128)
    ("f16", "f32.f16.f16", 32, 64, 0, "f16", False),
    ("f16", "f16.f16.f16", 64, 128, 1, "f16->f16", False),
    ("tf32", "f32.tf32.tf32", 64, 64, 0, "tf32", False),
    ("f8f6f4", "f32.e4m3.e5m2", 32, 128, 0, "f8f6f4 e4m3.e5m2", False),
    ("i8", "s32.s8.s8", 64, 64, 0, None, False),
    ("f16", "f32.bf16.bf16", 128, 64, 0, "bf16", True),
]


@pytest.mark.parametrize("kind,types,M,N,selector,label,a_tmem", WS_CASES)
def test_ws_sparse_mma_is_layoutsim_mma_of_the_logical_a(kind, types, M, N, selector, label, a_tmem):
    r, got, want, A, bt, inst = sparse_case(kind, types, N, selector, a_tmem, M, ws=True)
    assert np.array_equal(got, want)
    (rec,) = r.mmas
    assert rec.name == inst.name and np.array_equal(rec.a, A)
    sources = [d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")]
    assert sources and all(".ws.sp" in s and "assumed" in s for s in sources)
    if HAVE_MMASIM and label is not None:
        assert mmasim_oracle().compare_records(r.mmas)[f"kind::{kind} {types}"]["differ"] == 0


def test_ws_sparse_metadata_copies_must_agree():
    # M = 64: the metadata's second copy (lanes 64..127) differs in one field: which copy is read is not documented
    values, _, index = _f16_case()
    values, index = values[:64], index[:64]
    B = operand(np.random.default_rng(4), "f16", (64, 32)).view(np.uint16)
    meta = words("f16", index)
    meta[64 + 3, 0] ^= np.uint32(0b1100)                    # row 3's chunk 0 in the second copy: 0b0100 -> 0b1000
    with pytest.raises(PtxFault, match=r"the 2 copies of the metadata differ \(row 3, chunk 0") as e:
        run("f16", "f32.f16.f16", 64, values, B, index, meta, ws=True)
    assert e.value.fault["kind"] == "invalid_operand"


def _name(kind, types, M, N, selector, a_tmem, ws):
    return f"hand-written sparse{' .ws' * ws} {kind} {types} M={M} N={N}{' A from TMEM' * a_tmem}"


def per_mma(kind, types, M, N, selector, a_tmem, ws):
    """blackwell_oracle.summary of one case's kernel (its one MMA against MMA-Sim: tests/blackwell_crosscheck.py)."""
    return summary(_name(kind, types, M, N, selector, a_tmem, ws), sparse_case(kind, types, N, selector, a_tmem, M, ws)[0], 1)


ORACLE_KERNELS = {_name(*c, ws): (lambda c=c, ws=ws: per_mma(*c, ws))
                  for ws, cases in ((False, [(k, t, 128, n, s, a) for k, t, n, s, lab, a in CASES if lab]),
                                    (True, [(k, t, m, n, s, a) for k, t, m, n, s, lab, a in WS_CASES if lab]))
                  for c in cases}


def _f16_case():
    rng = np.random.default_rng(3)
    values = operand(rng, "f16", (128, 16)).view(np.uint16)
    B = operand(rng, "f16", (16, 32)).view(np.uint16)
    index = np.full((128, 8), 0b0100, np.uint8)
    return values, B, index


@pytest.mark.parametrize("tamper,match", [
    ("index", r"0b0001 .* not a meaningful index"),
    ("selector2", r"sparsity selector 2"),
    ("odd", r"metadata column 257"),
    ("dense", r"sparsity bit \(2\) is 0"),
])
def test_bad_metadata_or_descriptor_is_a_fault(tamper, match):
    values, B, index = _f16_case()
    if tamper == "index":
        index[9, 3] = 0b0001
    meta = np.zeros((128, 2), np.uint32)
    meta[:, 0] = words("f16", index)[:, 0]
    kw = {"selector2": dict(selector=2), "odd": dict(column=1),
          "dense": dict(idesc=idesc_of("f16", 128, 32, "f32.f16.f16"))}.get(tamper, {})
    with pytest.raises(PtxFault, match=match) as e:
        run("f16", "f32.f16.f16", 32, values, B, index, meta, **kw)
    assert e.value.fault["kind"] == "invalid_operand"


def test_m64_is_a_fault_naming_the_layout_not_modelled():
    values, B, index = _f16_case()
    with pytest.raises(PtxFault, match="M=64: the metadata layout of 64 rows per CTA is not modelled"):
        run("f16", "f32.f16.f16", 32, values, B, index, np.zeros((128, 2), np.uint32),
            idesc=idesc_of("f16", 64, 32, "f32.f16.f16") | 4)


@pytest.mark.parametrize("line,match", [
    ("tcgen05.mma.sp.cta_group::1.kind::mxf8f6f4.block_scale [%r1], %rd1, %rd1, [%r1], %r1, [%r1], [%r1], %p1;",
     "block-scaled tcgen05.mma.sp"),
    ("tcgen05.mma.sp.cta_group::1.kind::f16.ashift [%r1], [%r1], %rd1, [%r1], %r1, %p1;", r"\.ashift with \.sp is not modelled"),
])
def test_forms_not_modelled_are_refused_in_one_line(line, match):
    src = rules_kernel(f"  .reg .b64 %rd<2>;\n  {line}")
    with pytest.raises(layoutsim.LayoutsimError, match=match) as e:
        ptx.run(src, "k", 1, 32, [], arch="sm_100")
    assert "\n" not in str(e.value)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA 13) not installed")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    for n, kind in enumerate(("f16", "tf32", "f8f6f4", "i8")):
        for a_tmem in (False, True):
            for ws in (False, True):
                res = ptxas_sm100a(sparse_kernel(kind, 16, a_tmem=a_tmem, ws=ws), tmp_path, f"k{n}{a_tmem:d}{ws:d}")
                assert res.returncode == 0, res.stderr
