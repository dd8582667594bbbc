"""Triton kernels compiled for sm_100a (Blackwell) run in the executor: layoutsim.triton.launch(...,
arch="sm_100a"). Triton 3.6.0 lowers tl.dot of a 128x128 tile with num_warps=4 to tcgen05.mma (the
accumulator in tensor memory, zeroed by tcgen05.st, read back by tcgen05.ld.32x32b.x128, each
k-tile's MMAs committed to an mbarrier with tcgen05.commit): compiled here at test time, no PTX
committed. No Blackwell GPU exists here; the expected values are
  - bit for bit layoutsim's own tcgen05.mma model (layoutsim.mma), the MMAs chained per K-step as the
    kernel issues them (K=16 for f16, 32 for e4m3, 8 for tf32: PTX ISA 9.x (v9.2) 9.7.16.2.1 'Matrix
    Shape' Table 39), from a zero accumulator;
  - where pip `mmasim` is installed, every MMA the kernel executed bit for bit MMA-Sim's D from the
    same A, B and C (tests/blackwell_oracle.py), the output the last MMA's D;
  - the float64 product within a float32 accumulation's error (K roundings of 2**-23 relative to
    |A| @ |B|), plus for tf32 the reduction of each f32 input to tf32's 10 fraction bits (rounded or
    truncated, less than 2**-10 relative each, so 2**-9 + 2**-20 per product).
"""
import re

import numpy as np
import pytest

from blackwell_oracle import assert_agrees, chains, final, needs_mmasim, summary
from triton_needs import needs_triton

pytestmark = needs_triton


def _chain(A, B, kind, k_step, types, view):
    """The 128xN accumulator through layoutsim.mma: one tcgen05.mma per K-step, in order."""
    import layoutsim
    n = B.shape[1]
    acc = np.zeros((128, n), np.uint32)
    for k in range(0, A.shape[1], k_step):
        acc = layoutsim.mma(f"tcgen05.mma.cta_group::1.kind::{kind}.m128n{n}k{k_step}",
                            A[:, k:k + k_step].view(view), B[k:k + k_step].view(view), acc,
                            arch="sm_100a", raw=True, types=types)
    return acc


MATMULS = [   # dtype, kind, K per MMA, types, raw view, BK, the input's reduction error (tf32)
    ("float16", "f16", 16, "f32.f16.f16", np.uint16, 64, 0.0),            # two 64-wide k-tiles
    ("float8_e4m3fn", "f8f6f4", 32, "f32.e4m3.e4m3", np.uint8, 128, 0.0),
    ("float32", "tf32", 8, "f32.tf32.tf32", np.uint32, 32, 2.0 ** -9 + 2.0 ** -20),
]


def _matmul(dtype, BK, record_mmas=False):
    """(A, B, C, Run) of the project's tl.dot matmul, one 128x128 tile over K = 2 BK, for sm_100a."""
    import ml_dtypes

    import layoutsim.triton as lt
    from gpu_check.triton_corpus import kernels
    dt = getattr(ml_dtypes, dtype) if dtype.startswith("float8") else np.dtype(dtype)
    rng = np.random.default_rng(100)
    n_k = 2 * BK
    A = rng.standard_normal((128, n_k)).astype(dt)
    B = rng.standard_normal((n_k, 128)).astype(dt)
    C = np.zeros((128, 128), np.float32)
    r = lt.launch(kernels.matmul, (1, 1), A, B, C, 128, 128, n_k, n_k, 128, 128, BM=128, BN=128, BK=BK,
                  arch="sm_100a", num_warps=4, options={"record_mmas": record_mmas})
    return A, B, C, r


def _within_f32_accumulation(C, A, B, input_err=0.0):
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    bound = (input_err + A.shape[1] * 2.0 ** -23) * (np.abs(a64) @ np.abs(b64))
    return (np.abs(C - a64 @ b64) <= bound).all()


@pytest.mark.parametrize("dtype,kind,k_step,types,view,BK,input_err", MATMULS)
def test_triton_matmul_on_sm100a_is_the_tcgen05_model_bit_for_bit(dtype, kind, k_step, types, view, BK, input_err):
    A, B, C, r = _matmul(dtype, BK)
    n_k = 2 * BK
    ptx = r.triton.ptx
    assert ".target sm_100a" in ptx
    assert f"tcgen05.mma.cta_group::1.kind::{kind} " in ptx and "wgmma" not in ptx
    assert re.search(r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.b64 \[%rd\d+\]", ptx)
    assert np.array_equal(C.view(np.uint32), _chain(A, B, kind, k_step, types, view))
    assert _within_f32_accumulation(C, A, B, input_err) and n_k == A.shape[1]
    assert (C != 0).all()


def _back_to_back(record_mmas=False):
    """(A, B, D, C, Run) of sm100_kernels.back_to_back: C = f16(A @ B) @ D, one tile, for sm_100a."""
    import sm100_kernels

    import layoutsim.triton as lt
    rng = np.random.default_rng(101)
    A = rng.standard_normal((128, 64)).astype(np.float16)
    B = (rng.standard_normal((64, 128)) / 8).astype(np.float16)
    D = rng.standard_normal((128, 64)).astype(np.float16)
    C = np.zeros((128, 64), np.float32)
    r = lt.launch(sm100_kernels.back_to_back, (1,), A, B, D, C, BM=128, BK=64, BN=128, BN2=64, arch="sm_100a",
                  num_warps=4, options={"record_mmas": record_mmas})
    return A, B, D, C, r


def test_second_dot_reads_a_from_tensor_memory_bit_for_bit():
    # f16(A @ B) @ D: Triton stores the f16 tile into TMEM (tcgen05.st.32x32b.x64, two f16 per
    # column) and issues tcgen05.mma [d], [a-tmem + 8 per K=16 step], b-desc: the model's chain of
    # both products, the first rounded to f16 (cvt.rn.f16.f32: round to nearest even, as numpy)
    A, B, D, C, r = _back_to_back()
    assert re.search(r"tcgen05\.mma\.cta_group::1\.kind::f16 \[ %r\d+ \+ 0 \], \[ %r\d+ \+ 8 \]", r.triton.ptx)
    S = _chain(A, B, "f16", 16, "f32.f16.f16", np.uint16).view(np.float32).astype(np.float16)
    assert np.array_equal(C.view(np.uint32), _chain(S, D, "f16", 16, "f32.f16.f16", np.uint16))
    assert _within_f32_accumulation(C, S, D)


# ---- every MMA against MMA-Sim (tests/blackwell_oracle.py) --------------------------------------------
def per_mma_matmul(dtype):
    """The matmul of `dtype` with its MMAs recorded (8 per launch: 2 k-tiles of BK / K-per-MMA): the
    output is its one accumulation's last D and within a float32 accumulation's error of the float64
    product; the per-MMA summary."""
    _, kind, k_step, _, _, BK, input_err = next(m for m in MATMULS if m[0] == dtype)
    A, B, C, r = _matmul(dtype, BK, record_mmas=True)
    s = summary(f"Triton matmul {kind} {dtype}", r, 2 * BK // k_step)
    (acc,) = chains(r.mmas)
    assert np.array_equal(C.view(np.uint32), final(r.mmas, acc))
    assert _within_f32_accumulation(C, A, B, input_err)
    return s


def per_mma_back_to_back():
    """back_to_back with its MMAs recorded: 4 of A @ B (K=64), then 8 of f16(S) @ D (K=128, A from
    TMEM, whose recorded A is f16 of the first accumulation's last D); C is the second's last D."""
    A, B, D, C, r = _back_to_back(record_mmas=True)
    s = summary("Triton back-to-back f16 (A from TMEM)", r, 64 // 16 + 128 // 16)
    first, second = chains(r.mmas)
    S = final(r.mmas, first).view(np.float32).astype(np.float16)
    assert np.array_equal(np.concatenate([r.mmas[i].a for i in second[2]], axis=1), S.view(np.uint16))
    assert np.array_equal(C.view(np.uint32), final(r.mmas, second))
    assert _within_f32_accumulation(C, S, D)
    return s


ORACLE_KERNELS = {**{f"Triton matmul {m[0]}": (lambda d=m[0]: per_mma_matmul(d)) for m in MATMULS},
                  "Triton back-to-back": per_mma_back_to_back}


@needs_mmasim
@pytest.mark.parametrize("name", ORACLE_KERNELS)
def test_every_mma_of_the_kernel_is_mmasim_bit_for_bit(name):
    assert_agrees(ORACLE_KERNELS[name]())


def test_sm100a_is_an_arch_of_the_front_end():
    from layoutsim.triton.compile import ARCHS, capability
    assert capability("sm_100a") == 100 and "sm_100a" in ARCHS


def test_cli_runs_a_matmul_for_sm100a(tmp_path, capsys):
    # ones @ ones over K=128: every element 128, exact in f32
    from pathlib import Path

    from layoutsim.cli import main
    kernels = Path(__file__).resolve().parents[2] / "gpu_check" / "triton_corpus" / "kernels.py"
    argv = ["triton", "run", f"{kernels}:matmul", "--arg", "ones:f16:128x128", "--arg", "ones:f16:128x128",
            "--arg", "zeros:f32:128x128", *sum((["--arg", "i32:128"] for _ in range(6)), []),
            "--meta", "BM=128", "--meta", "BN=128", "--meta", "BK=64", "--meta", "num_warps=4", "--grid", "1,1",
            "--arch", "sm_100a", "--out", str(tmp_path), "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    assert (np.load(tmp_path / "arg2.npy") == 128).all()
