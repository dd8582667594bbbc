"""AMD gfx12 SWMMAC (sparse A) on the simulator: compressed A, B, C and the sparsity index go
into registers through the catalog's fragments (the IDX map is the one AMD's calculator
prints, checked in tests/isa/test_amd_wmma.py), the simulator runs the instruction, and D must
equal layoutsim.mma on the logical A bit for bit (random values), and the exact product
(small integers, with an exact stand-in for the numerics). Every SWMMAC entry, wave32 and
wave64. No AMD GPU here: this checks the data movement and the model, not hardware."""
import numpy as np
import pytest

import layoutsim
from layoutsim import LayoutsimError
from layoutsim.numerics import sparse
from layoutsim.sim import Machine
from sim_exact import encode, exact_mma, stable_seed

pytestmark = pytest.mark.filterwarnings("ignore:.*UNVERIFIED ASSUMPTION")

SWMMAC = [pytest.param(e, id=f"{e.name}") for e in layoutsim.listing("gfx1201", "swmmac")]


def _operands(ins, rng, small):
    M, N, K = ins.shape
    f = ins.formats
    keep = np.zeros((M, K // 4, 4), bool)
    for r in range(M):
        for g in range(K // 4):
            keep[r, g, rng.choice(4, rng.integers(0, 3), replace=False)] = True
    keep = keep.reshape(M, K)

    def vals(fmt, shape):
        if fmt in ("u8", "u4"):
            return rng.integers(0, 8 if small else (16 if fmt == "u4" else 256), shape)
        if fmt == "s32":
            return rng.integers(-8, 9, shape) if small else rng.integers(-2**31, 2**31, shape)
        if small:
            return rng.integers(-4, 5, shape).astype(float)
        return rng.uniform(1, 2, shape) * rng.choice([-1, 1], shape) * 2.0 ** rng.integers(-8, 6, shape)

    dense = encode(f["a"], vals(f["a"], (M, K))) * keep.astype(np.uint8)
    return dense.astype(encode(f["a"], np.zeros(1)).dtype), encode(f["b"], vals(f["b"], (K, N))), \
        encode(f.get("c", f["d"]), vals(f.get("c", f["d"]), (M, N)))


def _run(ins, wave, dense, b, c, mma=None):
    vals, idx = sparse.compress(dense)
    m = Machine("gfx1201", warps=2, wave=wave, mma=mma)
    m.set_fragment(ins, "A", "a", vals)
    m.set_fragment(ins, "B", "b", b)
    m.set_fragment(ins, "C", "c", c)
    m.set_fragment(ins, "IDX", "idx", idx)
    m.mma(ins, d="d", a="a", b="b", c="c", index="idx")
    return m, m.fragment(ins, "D", "d")[:, 0]          # both waves


@pytest.mark.parametrize("entry", SWMMAC)
def test_simulated_swmmac_equals_layoutsim_mma_on_the_logical_a(entry):
    ins = entry.instruction()
    dense, b, c = _operands(ins, np.random.default_rng(stable_seed(entry.name)), small=False)
    _, got = _run(ins, entry.wave, dense, b, c)
    want = layoutsim.mma(ins, dense, b, c, arch="gfx1201", raw=True)
    assert (got == want).all()


def _exact_sparse(ins, a, b, c, arch=None, index=None):
    return exact_mma(ins, sparse.expand(a, index, ins.shape[2]), b, c)


@pytest.mark.parametrize("entry", SWMMAC)
def test_swmmac_moves_fragments_exactly(entry):
    ins = entry.instruction()
    dense, b, c = _operands(ins, np.random.default_rng(7), small=True)
    m, got = _run(ins, entry.wave, dense, b, c, mma=_exact_sparse)
    want = np.ascontiguousarray(exact_mma(ins, dense, b, c))
    assert (got == want.view(np.dtype(f"u{want.dtype.itemsize}"))).all()
    assert m.trace[-1].op.startswith("v_swmmac")


def test_swmmac_needs_its_index_and_dense_mma_refuses_one():
    ins = layoutsim.get("v_swmmac_f32_16x16x32_f16", arch="gfx1201")
    m = Machine("gfx1201", wave=32)
    for op in ("A", "B", "C"):
        m.set_fragment(ins, op, op.lower(), np.zeros(ins.operand(op).fragment.shape[1:], np.uint16
                                                       if op != "C" else np.uint32))
    with pytest.raises(LayoutsimError, match="give index="):
        m.mma(ins, d="d", a="a", b="b", c="c")
    with pytest.raises(LayoutsimError, match="unknown register 'idx0'"):
        m.mma(ins, d="d", a="a", b="b", c="c", index="idx")
    m.mov("idx0", 0)                       # every field names position 0 twice
    before = m.snapshot()
    with pytest.raises(LayoutsimError, match="both kept values name position 0") as e:
        m.mma(ins, d="d", a="a", b="b", c="c", index="idx")
    assert "\n" not in str(e.value) and m.snapshot() == before        # state left as it was
    dense = layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201")
    with pytest.raises(LayoutsimError, match="sparse swmmac instructions only"):
        m.mma(dense, d="d", a="a", b="b", c="c", index="idx")
