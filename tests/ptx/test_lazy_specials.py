"""A batch's special registers are computed when first read (launch._Specials): reading one
computes that one; all of them at once (Launch.all_special_registers) are the same values as
the formulas of the PTX ISA give, for a grid and block of three dimensions."""
import numpy as np

from layoutsim.ptx.launch import Launch
from layoutsim.ptx.runner import program
from layoutsim.ptx.state import Batch
from pathlib import Path

SRC = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "transpose.sm_90.ptx").read_text()


def test_read_when_asked_and_as_the_formulas_give():
    prog = program(SRC, "transpose_conflicts", "sm_90")
    x = np.zeros((64, 64), np.float32)
    grid, block = (3, 2, 2), (32, 4, 2)
    L = Launch(prog, grid, block, [x, x.copy(), np.int32(64)], "sm_90", 100)
    bt = Batch(prog, L, [0, 5, 7])
    assert dict(bt.special) == {}
    tid = bt.special["%tid.y"]
    assert list(bt.special) == ["%tid.y"]
    lt = np.arange(bt.T) % 256
    assert np.array_equal(tid, (lt // 32) % 4) and tid.dtype == np.uint32
    sp = L.all_special_registers(bt)
    cta = np.repeat([0, 5, 7], 256)
    assert np.array_equal(sp["%ctaid.x"], cta % 3) and np.array_equal(sp["%ctaid.z"], cta // 6)
    assert np.array_equal(sp["%tid.z"], lt // 128) and sp["%ntid.y"] == 4 and sp["%nctaid.z"] == 2
    lane = np.arange(bt.T) % 32
    assert np.array_equal(sp["%lanemask_lt"], ((1 << lane) - 1).astype(np.uint32))
    assert np.array_equal(sp["%lanemask_ge"], (~((1 << lane) - 1)).astype(np.uint32))
    assert sp["%cluster_nctarank"] == 1 and "%envreg31" in sp and len(sp) == 86
