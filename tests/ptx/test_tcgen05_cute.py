"""The CuTe Blackwell tutorial kernels 01 to 05 (nvidia-cutlass 4.2.0.0 from PyPI, compiled for sm_100a by
gpu_check/tcgen05_cute/build.py; the PTX and the package's licence in tests/data/tcgen05_cute/) run
in layoutsim.ptx. No Blackwell GPU exists here: what these tests prove is that the executor's
reading of the PTX ISA (TMEM allocation, the sm_100 descriptors, tcgen05.mma, commit, tcgen05.ld)
and CuTe's independent implementation of the same documents (its descriptors, its TMEM layouts)
produce the GEMM the tutorial computes:
  - bit for bit layoutsim's own tcgen05.mma model (layoutsim.mma, the MMAs chained as the kernel
    issues them: 4 k-blocks of K=16 per 64-wide k-tile, the first with enable-input-d false);
  - exactly the float64 product for the tutorial's own inputs (integers in [-2, 2), its
    initialize_tensor) and its own check (example_utils.hpp compare_results: max |D - ref| == 0);
  - CuTe's instruction descriptors (UMMA::make_instr_desc, printed by print_idesc.cu) decode to the
    fields CuTe meant (ptx/table's tcgen05.mma reads them with isa/ptx_tcgen05_idesc.py);
  - where pip `mmasim` is installed, every MMA the kernel executed bit for bit MMA-Sim's D from the
    same A, B and C (tests/blackwell_oracle.py; the 2-CTA MMAs of 04/05 through MMA-Sim's
    cta_group::1 dot products, which is all it models), each output tile its accumulation's last D.
04 and 05 run 2-CTA MMAs (tcgen05.mma.cta_group::2 m256n256k16 per CTA pair, TMA .cta_group::2, commit
multicast from the pair; 05 adds a TMA epilogue). Their TMA's mbarrier operand is CuTe's
`shared::cta address & Sm100MmaPeerBitMask` (cute/arch/copy_sm100_tma.hpp): CuTe relies on bit 24 of
a CTA's shared::cta address being bit 0 of its cluster rank, so that clearing it names the even CTA
of the pair. The executor's shared addresses carry the rank there, as ptxas writes them
(ptx/cluster.py; tests/ptx/test_ptx_cluster_addr.py), so the PTX runs as nvcc wrote it.
"""
import gzip
import json
import re

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.files import measured_data
from layoutsim.isa.ptx_tcgen05_idesc import decode, encode
from layoutsim.ptx.launch import StructArg
from layoutsim.ptx.tensormap import TensorMapArg

from blackwell_oracle import assert_agrees, chains, final, needs_mmasim, summary

DATA = measured_data("tcgen05_cute")
pytestmark = pytest.mark.skipif(not (DATA / "manifest.json").is_file(),
                                reason="tests/data/tcgen05_cute/ absent: python -m gpu_check.tcgen05_cute.build")


def _manifest():
    return json.loads((DATA / "manifest.json").read_text())


def _tensor(shape, stride, arr):
    """A CuTe Tensor by value (24 bytes): the layout's dynamic ints, then the global pointer at 16."""
    ints = np.asarray(shape + stride, "<i4").tobytes()
    return StructArg(ints + bytes(16 - len(ints)) + bytes(8), ((16, arr),))


def _cute_idesc(kind, types, m, n):
    return next(r["idesc"] for r in _manifest()["idesc"]
                if (r["kind"], r["types"], r["m"], r["n"], r["a_mn_major"], r["b_mn_major"]) == (kind, types, m, n, 0, 0))


def cute_idescs():
    """[(CuTe's instruction descriptor, agrees, fields compared)]: each decodes to the fields CuTe
    meant and encodes back to the same word (tests/blackwell_crosscheck.py counts them)."""
    out = []
    for r in _manifest()["idesc"]:
        d = decode(r["idesc"], r["kind"])
        fields = (r["types"], r["m"], r["n"], bool(r["a_mn_major"]), bool(r["b_mn_major"]), bool(r["neg_a"]))
        agrees = (d["types"], d["m"], d["n"], d["a_mn_major"], d["b_mn_major"], d["neg_a"]) == fields and \
            encode(r["kind"], r["m"], r["n"], r["types"], neg_a=fields[5], a_mn_major=fields[3],
                   b_mn_major=fields[4]) == r["idesc"]
        out.append((f"{r['kind']} {r['types']} m{r['m']}n{r['n']} {r['idesc']:#010x}", agrees, len(fields)))
    return out


def test_cute_instruction_descriptors_decode_to_what_cute_meant():
    rows = cute_idescs()
    assert len(rows) >= 6
    assert [name for name, agrees, _ in rows if not agrees] == []


def _entry(src):
    return next(x.split()[-1].split("(")[0] for x in src.splitlines() if ".entry _Z11gemm_device" in x)


PEER_BIT = re.compile(r"and\.b32\s+(%r\d+), (%r\d+), -16777232;")       # & Sm100MmaPeerBitMask (0xFEFFFFF0 here)


def _run_pair(stem, src, A, B, C, D, alpha, beta, **kw):
    """04/05: 4x4 clusters of 2-CTA MMAs (256x256 per pair, 2 pairs along M); each CTA's TMA box is its
    half of the pair's tile split over the cluster column (A: 128/4 rows) or row (B: 128/2 rows)."""
    M, K = A.shape
    N = B.shape[0]
    coords = lambda r, c: np.asarray([r, c, 0], "<i4").tobytes()        # noqa: E731
    tiled = np.asarray([_cute_idesc("f16", "f32.f16.f16", 256, 256)], "<u4").tobytes() + bytes([1, 0, 0, 0])
    tma = [TensorMapArg(A, (K, M), (64, 32), "128B"), TensorMapArg(B, (K, N), (64, 64), "128B")]
    if stem.startswith("04"):
        args = [coords(M, K), coords(N, K), _tensor((M, N), (N,), C), _tensor((M, N), (N,), D), b"\0", tiled,
                b"\0"] + tma
    else:       # 05: C and D by TMA, boxes of 32 floats (128B) x 128 rows, 4 epilogue tiles per CTA
        epi = [TensorMapArg(C, (N, M), (32, 128), "128B"), TensorMapArg(D, (N, M), (32, 128), "128B")]
        args = [coords(M, K), coords(N, K), coords(M, N), coords(M, N), b"\0", b"\0", tiled, b"\0"] + tma + epi
    grid = (M // 512 * 4, N // 1024 * 4)
    r = ptx.run(src, _entry(src), grid, 128, args + [np.float32(alpha), np.float32(beta)],
                arch="sm_100", shared_bytes=128 * 64 * 2 * 2 + 128, cluster=(4, 4, 1), **kw)
    return r.buffers[3][0] if stem.startswith("04") else r.buffers[11], r      # 05: the D tensor map's array


def _run(stem, A, B, C, alpha=1.0, beta=0.0, **kw):
    """(D, Run) of one launch of the tutorial's gemm_device (its main()'s arguments, M x N x K given;
    kw: more keywords of layoutsim.ptx.run)."""
    M, K = A.shape
    N = B.shape[0]
    D = np.zeros((M, N), np.float32)
    src = gzip.decompress((DATA / f"{stem}.sm_100a.ptx.gz").read_bytes()).decode()
    if stem[:2] in ("04", "05"):
        return _run_pair(stem, src, A, B, C, D, alpha, beta, **kw)
    # the tutorial's TiledMMA by value: UMMA::InstrDescriptor idesc_ (CuTe's value), accumulate_ (One)
    tiled = np.asarray([_cute_idesc("f16", "f32.f16.f16", 128, 256)], "<u4").tobytes() + bytes([1, 0, 0, 0])
    # SharedStorage: A 128x64 f16, B 256x64 f16 (128-byte aligned), the mbarrier(s), the TMEM address
    shared = 128 * 64 * 2 + 256 * 64 * 2 + 128
    if stem.startswith("01"):
        ab = [_tensor((M, K), (K,), A), _tensor((N, K), (K,), B)]
        tma = []
    else:   # mA_tma, mB_tma: coordinate tensors (shape, the iterator's int); the TMA atoms' CUtensorMaps
        ab = [np.asarray([M, K, 0], "<i4").tobytes(), np.asarray([N, K, 0], "<i4").tobytes()]
        # 03: 4x4 clusters; each CTA's box is 1/4 of the tile, multicast to the other 3 of its row/column
        split = 4 if stem.startswith("03") else 1
        tma = [TensorMapArg(A, (K, M), (64, 128 // split), "128B"), TensorMapArg(B, (K, N), (64, 256 // split), "128B")]
    r = ptx.run(src, _entry(src), (M // 128, N // 256), 128,
                ab + [_tensor((M, N), (N,), C), _tensor((M, N), (N,), D), b"\0", tiled, b"\0"] + tma
                + [np.float32(alpha), np.float32(beta)], arch="sm_100", shared_bytes=shared,
                cluster=(4, 4, 1) if stem.startswith("03") else None, **kw)
    return r.buffers[3][0], r


def _model(A, B, pair=1):
    """The accumulator as the kernel's MMAs build it, through layoutsim.mma (bit for bit); pair=2: the
    CTA pair's 256x256 MMAs of 04/05."""
    M, K = A.shape
    N = B.shape[0]
    tm = 128 * pair
    inst = f"tcgen05.mma.cta_group::{pair}.kind::f16.m{tm}n256k16"
    out = np.zeros((M, N), np.uint32)
    for i in range(0, M, tm):
        for j in range(0, N, 256):
            acc = np.zeros((tm, 256), np.uint32)
            for k in range(0, K, 16):
                a = A[i:i + tm, k:k + 16].view(np.uint16)
                b = np.ascontiguousarray(B[j:j + 256, k:k + 16].T).view(np.uint16)
                acc = layoutsim.mma(inst, a, b, acc, arch="sm_100a", raw=True, types="f32.f16.f16")
            out[i:i + tm, j:j + 256] = acc
    return out.view(np.float32)


# ---- every MMA against MMA-Sim (tests/blackwell_oracle.py) --------------------------------------------
# the smallest launch of each tutorial: 01/02 two 64-wide k-tiles in one CTA, 03/04/05 one 4x4 cluster and
# one k-tile (M x N x K)
ORACLE_SIZES = {"01_mma_sm100": (128, 256, 128), "02_mma_tma_sm100": (128, 256, 128),
                "03_mma_tma_multicast_sm100": (512, 1024, 64), "04_mma_tma_2sm_sm100": (512, 1024, 64),
                "05_mma_tma_epi_sm100": (512, 1024, 64)}


def per_mma(stem):
    """Run tutorial `stem` on random f16 inputs, recording its MMAs (kind::f16 f32.f16.f16; 04/05
    cta_group::2 m256n256k16, which MMA-Sim models as its cta_group::1 dot products: mmasim_oracle
    tcgen05_op); check each output tile against its accumulation's last D (the epilogue: alpha=1,
    beta=0) and the float64 product within a float32 accumulation's error; the per-MMA summary."""
    M, N, K = ORACLE_SIZES[stem]
    rng = np.random.default_rng(2027)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    C = rng.integers(-2, 2, (M, N)).astype(np.float32)
    D, run = _run(stem, A, B, C, record_mmas=True)
    pair = 2 if stem[:2] in ("04", "05") else 1
    tm, tn = 128 * pair, 256
    s = summary(f"CuTe {stem}", run, M // tm * N // tn * K // 16)
    acc = chains(run.mmas)
    assert len(acc) == M // tm * N // tn
    gx = M // 128                       # the grid: (M / 128, N / 256) CTAs, a tile (a pair's) per CTA (pair)
    for ctas, _, idx in acc:
        x, y = ctas[0] % gx, ctas[0] // gx
        r, c = (x // pair) * tm, y * tn
        want = final(run.mmas, (ctas, _, idx)).view(np.float32) + np.float32(0.0) * C[r:r + tm, c:c + tn]
        assert np.array_equal(D[r:r + tm, c:c + tn].view(np.uint32), want.view(np.uint32)), (stem, ctas)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    assert (np.abs(D - ref) <= K * 2.0 ** -23 * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64).T)).all()
    return s


ORACLE_KERNELS = {f"CuTe {stem}": (lambda s=stem: per_mma(s)) for stem in ORACLE_SIZES}


@needs_mmasim
@pytest.mark.parametrize("stem", ORACLE_SIZES)
def test_every_mma_of_the_tutorial_is_mmasim_bit_for_bit(stem):
    assert_agrees(per_mma(stem))


@pytest.mark.parametrize("stem,M,N,K", [("01_mma_sm100", 128, 256, 128), ("02_mma_tma_sm100", 128, 256, 128),
                                        ("03_mma_tma_multicast_sm100", 512, 1024, 64),
                                        ("04_mma_tma_2sm_sm100", 512, 1024, 256),
                                        ("05_mma_tma_epi_sm100", 512, 1024, 256)])
def test_tutorial_gemm_is_the_model_bit_for_bit_and_the_exact_product_on_its_own_inputs(stem, M, N, K):
    # 01/02: one CTA, two 64-wide k-tiles (the mbarriers' phases flip); 03: one 4x4 cluster; 04/05: the
    # tutorials' own sizes (main()'s defaults), one 4x4 cluster of 8 CTA pairs, four 64-wide k-tiles
    rng = np.random.default_rng(27)
    # the tutorial's inputs: initialize_tensor's integers in [-2, 2)
    A = rng.integers(-2, 2, (M, K)).astype(np.float16)
    B = rng.integers(-2, 2, (N, K)).astype(np.float16)
    C = rng.integers(-2, 2, (M, N)).astype(np.float32)
    D, run = _run(stem, A, B, C)
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    assert np.abs(D - ref).max() == 0                       # example_utils.hpp compare_results: diff == 0
    assert (np.abs(D) > 0).any()
    # random f16 inputs: every bit as layoutsim's own tcgen05.mma model chains them
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    D, run = _run(stem, A, B, C)
    acc = _model(A, B, 2 if stem[:2] in ("04", "05") else 1)
    want = acc + np.float32(0.0) * C                         # the epilogue: alpha * acc + beta * C
    assert np.array_equal(D.view(np.uint32), want.view(np.uint32))
    ref = A.astype(np.float64) @ B.astype(np.float64).T
    bound = K * 2.0 ** -23 * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64).T)
    assert (np.abs(D - ref) <= bound).all()                 # float64 within a float32 accumulation's error
    assert run.fidelity["documented"] > 0


@pytest.mark.parametrize("stem", ["04_mma_tma_2sm_sm100", "05_mma_tma_epi_sm100"])
def test_tutorials_clear_the_peer_bit_of_the_mbarrier_address(stem):
    # the PTX holds CuTe's peer-bit clear once (04/05 run it unchanged above): the odd CTA's TMA boxes
    # signal the even CTA's mbarrier through bit 24 of a shared address (module docstring)
    src = gzip.decompress((DATA / f"{stem}.sm_100a.ptx.gz").read_bytes()).decode()
    assert len(PEER_BIT.findall(src)) == 1
    assert -16777232 & 0xFFFFFFFF == 0xFEFFFFF0 and not 0xFEFFFFF0 & 1 << 24
