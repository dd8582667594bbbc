"""layoutsim.mma bounds its memory before allocating (issue 22): a batch broadcast from small
operands that would need more than the limit is refused at once, with the bytes, the limit and
the chunk size that fits; the limit is max_bytes=, else $LAYOUTSIM_MMA_BYTES, else 4 GiB."""
import tracemalloc

import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.numerics import budget
from layoutsim.numerics.api import resolve
from layoutsim.numerics.plan import make_plan

F16 = "mma.m16n8k16.f32.f16.f16.f32"
S8 = "mma.m16n8k32.s32.s8.s8.s32"
F64 = "mma.m8n8k4.f64.f64.f64.f64"
TF32 = "mma.m16n8k8.f32.tf32.tf32.f32"
WGMMA = "wgmma.m64n64k16.f32.f16.f16"
CASES = [(F16, np.float16, np.float32), (S8, np.int8, np.int32), (F64, np.float64, np.float64),
         (TF32, np.float32, np.float32), (WGMMA, np.float16, np.float32)]
OTHER_ARCHS = [("v_mfma_f32_16x16x16_f16", "gfx942", np.float16, np.float32),
               ("v_mfma_i32_16x16x64_i8", "gfx950", np.int8, np.int32),
               ("v_mfma_f64_16x16x4_f64", "gfx942", np.float64, np.float64),
               ("v_wmma_f32_16x16x16_f16.w32.gfx12", "gfx1201", np.float16, np.float32)]


def _operands(name, it, ct, lead_a, lead_b, lead_c=(1,)):
    inst, prof = resolve(name, "sm_90")
    M, N, K = make_plan(inst, prof).shape
    return (np.zeros(lead_a + (M, K), it), np.zeros(lead_b + (K, N), it), np.zeros(lead_c + (M, N), ct))


@pytest.mark.parametrize("name,it,ct", CASES[:3])
def test_a_broadcast_batch_of_1e8_is_refused_before_allocating(name, it, ct):
    a, b, c = _operands(name, it, ct, (10_000, 1), (1, 10_000))      # 10**8 products, > 100 GiB
    assert budget.per_batch(make_plan(*resolve(name, "sm_90")).kind, *make_plan(*resolve(name, "sm_90")).shape) \
        * 10**8 > 100 * 2**30
    tracemalloc.start()
    try:
        with pytest.raises(LayoutsimError) as e:
            layoutsim.mma(name, a, b, c, arch="sm_90")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20                   # nothing of the batch's size was allocated
    msg = str(e.value)
    assert "\n" not in msg
    assert "a batch of 100000000 products (batch shape (10000, 10000))" in msg
    assert f"the limit is {budget.DEFAULT_BYTES} bytes" in msg and "LAYOUTSIM_MMA_BYTES" in msg
    fit = int(msg.rsplit("at most ", 1)[1].split()[0])
    assert 1000 < fit < 10**8


@pytest.mark.filterwarnings("ignore::layoutsim.numerics.api.UnverifiedProfileWarning")
@pytest.mark.parametrize("name,arch,it,ct", [(n, "sm_90", i, c) for n, i, c in CASES] + OTHER_ARCHS)
def test_the_estimate_bounds_the_measured_peak(name, arch, it, ct):
    """per_batch is an upper bound of what a call really allocates (all operands broadcast views,
    so every byte traced is the call's own)."""
    inst, prof = resolve(name, arch)
    plan = make_plan(inst, prof)
    M, N, K = plan.shape
    nb = 2000
    a, b, c = (np.broadcast_to(np.zeros(shape, t), (nb,) + shape) for shape, t in
               (((M, K), it), ((K, N), it), ((M, N), ct)))
    layoutsim.mma(name, a[:2], b[:2], c[:2], arch=arch)         # compile outside the trace
    tracemalloc.start()
    try:
        layoutsim.mma(name, a, b, c, arch=arch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= nb * budget.per_batch(plan.kind, M, N, K)


def test_the_chunk_the_error_names_runs(monkeypatch):
    a, b, c = _operands(F16, np.float16, np.float32, (50, 1), (1, 40))
    with pytest.raises(LayoutsimError, match="chunks of at most") as e:
        layoutsim.mma(F16, a, b, c, max_bytes=100_000)
    fit = int(str(e.value).rsplit("at most ", 1)[1].split()[0])
    assert fit == 100_000 // budget.per_batch("float", 16, 8, 16)
    flat = [np.broadcast_to(x, (50, 40) + x.shape[-2:]).reshape((2000,) + x.shape[-2:]) for x in (a, b, c)]
    assert layoutsim.mma(F16, *(x[:fit] for x in flat), max_bytes=100_000).shape == (fit, 16, 8)
    with pytest.raises(LayoutsimError, match="chunks of at most"):
        layoutsim.mma(F16, *(x[:fit + 1] for x in flat), max_bytes=100_000)
    monkeypatch.setenv(budget.ENV, "100000")
    with pytest.raises(LayoutsimError, match="the limit is 100000 bytes"):
        layoutsim.mma(F16, a, b, c)
    assert layoutsim.mma(F16, a, b, c, max_bytes=1 << 30).shape == (50, 40, 16, 8)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "4G"])
def test_bad_max_bytes_refused(bad):
    a, b, c = _operands(F16, np.float16, np.float32, (1,), (1,))
    with pytest.raises(LayoutsimError, match=r"max_bytes=.*give a number of bytes >= 1"):
        layoutsim.mma(F16, a, b, c, max_bytes=bad)


@pytest.mark.parametrize("text", ["lots", "0", "-1"])
def test_bad_environment_limit_refused(monkeypatch, text):
    monkeypatch.setenv(budget.ENV, text)
    a, b, c = _operands(F16, np.float16, np.float32, (1,), (1,))
    with pytest.raises(LayoutsimError, match=r"\$LAYOUTSIM_MMA_BYTES="):
        layoutsim.mma(F16, a, b, c)


def test_empty_batch_still_runs():
    a, b, c = _operands(F16, np.float16, np.float32, (0,), (1,))
    assert layoutsim.mma(F16, a, b, c).shape == (0, 16, 8)
