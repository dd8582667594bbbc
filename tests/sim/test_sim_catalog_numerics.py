"""Every MMA the simulator can run, against layoutsim.mma bit for bit (random operands), and the
AMD gfx12 WMMA entries (wave32 and wave64) through the simulator with exact arithmetic."""
import numpy as np
import pytest

import layoutsim
from layoutsim.sim import Machine, Warpgroup
from layoutsim.smem import Descriptor, addresses
from sim_exact import encode, exact_mma, stable_seed

# AMD arithmetic is an unverified assumption of the numerics; its warning is expected here
pytestmark = pytest.mark.filterwarnings("ignore:.*UNVERIFIED ASSUMPTION")


def _entries(arch, family):
    return [e for e in layoutsim.listing(arch=arch, family=family)] if family in \
        {e.family for e in layoutsim.listing()} else []


GFX12 = [pytest.param(e, id=f"{e.name}-w{e.wave}") for e in _entries("gfx1201", "wmma")]
NV_MMA = [pytest.param(e, id=e.name) for e in _entries(None, "mma")]
WGMMA = [pytest.param(layoutsim.lookup(n), id=n) for n in (
    "wgmma.m64n8k16.f32.f16.f16", "wgmma.m64n16k16.f32.bf16.bf16", "wgmma.m64n8k16.f16.f16.f16",
    "wgmma.m64n8k8.f32.tf32.tf32", "wgmma.m64n8k32.s32.s8.u8", "wgmma.m64n8k32.f32.e4m3.e4m3")]


def _values(rng, fmt, shape):
    """Random values of a format: wide exponent range for floats, full range for integers."""
    ints = {"s8": (-128, 128), "u8": (0, 256), "s4": (-8, 8), "u4": (0, 16), "s32": (-2**31, 2**31)}
    if fmt in ints:
        return rng.integers(*ints[fmt], shape)
    lo = {"f16": -14, "bf16": -30, "tf32": -30, "f32": -30, "f64": -60, "e4m3": -6, "e5m2": -14}[fmt]
    v = rng.uniform(1, 2, shape) * rng.choice([-1, 1], shape) * 2.0 ** rng.integers(lo, 6, shape)
    v[rng.random(shape) < 0.05] = 0
    return v


def _small(rng, fmt, shape):
    if fmt in ("u8", "u4"):
        return rng.integers(0, 8, shape)
    return rng.integers(-4, 5, shape)


def _arch(ins):
    return "sm_90" if "sm_90" in ins.archs else ins.archs[-1]


def _run(entry, gen, mma=None):
    ins = entry.instruction()
    arch = _arch(ins) if ins.vendor == "nvidia" else "gfx1201"
    M, N, K = ins.shape
    f = ins.formats
    c_fmt = f.get("c", f["d"])
    rng = np.random.default_rng(stable_seed(ins.name, entry.wave))
    ea, eb, ec = (encode(fm, gen(rng, fm, s)) for fm, s in ((f["a"], (M, K)), (f["b"], (K, N)), (c_fmt, (M, N))))
    w = Machine(arch, warps=2, wave=entry.wave if ins.vendor == "amd" else None, mma=mma)
    w.set_fragment(ins, "A", "a", ea)
    w.set_fragment(ins, "B", "b", eb)
    w.set_fragment(ins, "C", "c", ec)
    w.mma(ins, d="d", a="a", b="b", c="c")
    got = w.fragment(ins, "D", "d")[:, 0]            # both warps
    return ins, arch, ea, eb, ec, got


@pytest.mark.parametrize("entry", NV_MMA + GFX12)
def test_simulated_mma_equals_layoutsim_mma_bit_for_bit(entry):
    ins = entry.instruction()
    arch = _arch(ins) if ins.vendor == "nvidia" else "gfx1201"
    ins, arch, ea, eb, ec, got = _run(entry, _values)
    want = np.ascontiguousarray(np.asarray(layoutsim.mma(ins, ea, eb, ec, arch=arch)))
    want = want.view(np.dtype(f"u{want.dtype.itemsize}"))
    assert (got == want).all()


@pytest.mark.parametrize("entry", WGMMA)
def test_simulated_wgmma_equals_layoutsim_mma_bit_for_bit(entry):
    ins = entry.instruction()
    M, N, K = ins.shape
    f = ins.formats
    rng = np.random.default_rng(11)
    ea, eb, ec = (encode(fm, _values(rng, fm, s)) for fm, s in ((f["a"], (M, K)), (f["b"], (K, N)), (f["d"], (M, N))))
    g = Warpgroup("sm_90")
    wb = layoutsim.formats.bits(f["b"])
    desc = Descriptor.dense(start=0, mn=N, k=K, elem_bits=wb)
    addr = addresses(desc, N, K, wb)                    # B^T[n, k] lives at addr[n, k]
    g.smem[addr[..., None] + np.arange(wb // 8)] = np.ascontiguousarray(eb.T)[..., None].view(np.uint8)
    g.set_fragment(ins, "A", "a", ea)
    g.set_fragment(ins, "D", "d", ec)
    g.wgmma(ins, d="d", a="a", b=desc)
    want = np.ascontiguousarray(np.asarray(layoutsim.mma(ins, ea, eb, ec, arch="sm_90")))
    assert (g.fragment(ins, "D", "d")[0, 0] == want.view(np.dtype(f"u{want.dtype.itemsize}"))).all()


@pytest.mark.parametrize("entry", GFX12)
def test_gfx12_wmma_moves_fragments_exactly(entry):
    ins, arch, ea, eb, ec, got = _run(entry, _small, mma=exact_mma)
    want = exact_mma(ins, ea, eb, ec)
    assert (got == np.ascontiguousarray(want).view(np.dtype(f"u{want.dtype.itemsize}"))).all()
