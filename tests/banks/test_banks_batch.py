"""The batch engines (numba, numpy) give exactly what the reference model.analyze gives, under
every candidate merge rule, on structured random accesses (duplicates, lane pairs, conflicts,
predicated-off lanes); and they check addresses like analyze does."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from layoutsim import banks
from layoutsim.banks import batch, nvidia
from layoutsim.errors import LayoutsimError



def width(op):
    return banks.parse_op(op).width


@st.composite
def accesses(draw, w):
    """[8, 32] offsets: addresses from a small pool (so lanes share words and banks), with lane-pair
    or phase-repeat structure, and lane masks that sometimes switch whole phases off."""
    rows = []
    for _ in range(8):
        pool = np.array(draw(st.lists(st.integers(0, 127), min_size=1, max_size=12))) * w
        pick = np.array(draw(st.lists(st.integers(0, 11), min_size=32, max_size=32))) % len(pool)
        offs = pool[pick]
        kind = draw(st.sampled_from(["plain", "xor1", "xor2", "xor8", "repeat8", "stride"]))
        lane = np.arange(32)
        if kind == "xor1":
            offs = offs[lane & ~1]
        elif kind == "xor2":
            offs = offs[lane & ~2]
        elif kind == "xor8":
            offs = offs[lane & ~8]
        elif kind == "repeat8":
            offs = offs[lane % 8]
        elif kind == "stride":
            offs = lane * w * draw(st.sampled_from([1, 2, 3, 8, 9, 16, 17, 32]))
        rows.append(offs)
    masks = draw(st.lists(st.sampled_from([0xFFFFFFFF, 0xFFFFFFFF, 0, 0xFF, 0xFFFF0000, 0x55555555,
                                          0x0F0F0F0F, 0x00F0000F]) | st.integers(0, 2**32 - 1),
                          min_size=8, max_size=8))
    return np.array(rows, np.int64), np.array(masks, np.uint64)


# Every op of both vendors, every candidate rule set the measurement chose from (864), and
# generated patterns (address pools, lane pairs, repeats, strides, phase-sized masks): the engines
# must give what the reference gives. (A search of 864 rule sets x 22 ops x 6 accesses of this
# kind, the AMD ops, and 60,000-access batches through the parallel kernel found no disagreement
# when this test was written.)
@pytest.mark.parametrize("op", banks.op_names("nvidia"))
@settings(max_examples=15, deadline=None)
@given(rules=st.sampled_from(nvidia.candidates()), data=st.data())
def test_engines_match_reference_for_every_op(op, rules, data):
    offs, masks = data.draw(accesses(width(op)))
    if op.startswith(("ldmatrix", "stmatrix")):
        masks = None
    ref = [banks.analyze(op, list(offs[i]), active=None if masks is None else int(masks[i]), rules=rules).wavefronts
           for i in range(len(offs))]
    assert list(banks.wavefronts_batch(op, offs, active=masks, rules=rules, engine="numpy")) == ref
    assert list(banks.wavefronts_batch(op, offs, active=masks, rules=rules, engine="numba")) == ref


@pytest.mark.parametrize("op,arch", [(op, arch) for op in banks.op_names("amd")
                                     for arch in ("gfx1100", "gfx1201")])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_amd_engines_match_reference(op, arch, data):
    offs, masks = data.draw(accesses(width(op)))
    ref = [banks.analyze(op, list(offs[i]), arch=arch, active=int(masks[i])).wavefronts for i in range(len(offs))]
    assert list(banks.wavefronts_batch(op, offs, arch=arch, active=masks, engine="numba")) == ref
    assert list(banks.wavefronts_batch(op, offs, arch=arch, active=masks, engine="numpy")) == ref


def test_parallel_kernel_matches(monkeypatch):
    rng = np.random.default_rng(3)
    offs = rng.integers(0, 256, size=(3000, 32)) * 16
    serial = banks.wavefronts_batch("ld.shared.v4.b32", offs)
    monkeypatch.setattr(batch, "PARALLEL_FROM", 1000)
    assert list(banks.wavefronts_batch("ld.shared.v4.b32", offs)) == list(serial)


def test_ideal_batch():
    offs = np.stack([np.arange(32) * 16, np.zeros(32, np.int64)])
    assert list(banks.ideal_batch("ld.shared.v4.b32", offs)) == [4, 2]
    assert list(banks.wavefronts_batch("ld.shared.v4.b32", offs)) == [4, 2]


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_batch_checks_addresses(engine):
    offs = np.tile(np.arange(32) * 4, (5, 1))
    offs[3, 7] = 6
    with pytest.raises(LayoutsimError, match="access 3, lane 7: .*hardware faults"):
        banks.wavefronts_batch("ld.shared.b32", offs, engine=engine)
    masks = np.full(5, 0xFFFFFFFF, np.uint64)
    masks[3] = 0xFFFFFF7F                                    # lane 7 off: its address is not used
    assert len(banks.wavefronts_batch("ld.shared.b32", offs, active=masks, engine=engine)) == 5
    offs[3, 7] = 228 * 1024
    with pytest.raises(LayoutsimError, match="beyond sm_90"):
        banks.wavefronts_batch("ld.shared.b32", offs, engine=engine)
    with pytest.raises(LayoutsimError, match=r"\[N, 32\]"):
        banks.wavefronts_batch("ld.shared.b32", offs[:, :16], engine=engine)
    with pytest.raises(LayoutsimError, match="sync.aligned"):
        banks.wavefronts_batch("ldmatrix.x4", np.zeros((2, 32), np.int64), active=np.array([1, 1]), engine=engine)
    assert len(banks.wavefronts_batch("ld.shared.b32", np.zeros((0, 32), np.int64), engine=engine)) == 0


@pytest.mark.parametrize("engine", ["numba", "numpy"])
def test_matrix_error_names_the_inactive_row_lane(engine):
    masks = np.array([0xFFFFFFFF, 0xFFFFFFEF], np.uint64)     # access 1: lane 4 off, lanes above on
    with pytest.raises(LayoutsimError, match=r"^access 1: ldmatrix.x4 is "
                                             r".sync.aligned: every lane executes it, and lane 4 \(a row "
                                             r"address\) is inactive$"):
        banks.wavefronts_batch("ldmatrix.x4", np.zeros((2, 32), np.int64), active=masks, engine=engine)


def test_small_batches_need_no_compiler():
    """engine="auto": below AUTO_NUMBA_FROM accesses the numpy engine answers and numba is not
    even imported, so a first small batch never waits for a compile."""
    import subprocess
    import sys
    code = ("import sys, numpy as np; from layoutsim import banks; from layoutsim.banks import batch; "
            "n = batch.AUTO_NUMBA_FROM - 1; "
            "out = banks.wavefronts_batch('ld.shared.v4.b32', np.tile(np.arange(32) * 16, (n, 1))); "
            "assert list(set(out)) == [4], out; assert 'numba' not in sys.modules, 'numba imported'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-1000:]
