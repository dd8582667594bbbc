"""FragmentMap's own contract, on small hand-built maps whose every answer is worked out here
by hand: construction checks, default register names, the inverse (who_holds) against the
forward map (lane_entries), unused positions, and broadcast (`shared`) maps."""
import dataclasses

import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.fragment import FragmentMap


def _two_by_four():
    """2 lanes x 2 registers x 2 slots, one 2x4 matrix: lane l, element i holds row l, col i."""
    return FragmentMap.from_formula(2, 4, 2, 16, (1, 2, 4), lambda lane, i: (0 * lane, lane, i))


def test_formula_map_default_names_and_queries():
    f = _two_by_four()
    assert f.names == ("r0.0", "r0.1", "r1.0", "r1.1")
    assert f.name(1, 0) == "r1.0"
    assert f.lane_entries(1) == [(0, 0, 0, 1, 0), (0, 1, 0, 1, 1), (1, 0, 0, 1, 2), (1, 1, 0, 1, 3)]
    assert f.who_holds(1, 3) == [(1, 1, 1)]
    assert f.replication == 1 and not f.shared
    named = FragmentMap.from_formula(2, 4, 2, 16, (1, 2, 4), lambda lane, i: (0 * lane, lane, i), prefix="a")
    assert named.names == ("a0", "a1", "a2", "a3")
    given = FragmentMap.from_formula(2, 4, 2, 16, (1, 2, 4), lambda lane, i: (0 * lane, lane, i),
                                     names=("w", "x", "y", "z"))
    assert given.names == ("w", "x", "y", "z")


def test_name_counts_slots_not_bits():
    # three 10-bit elements per register: reg 1, slot 2 is the sixth name
    f = FragmentMap.from_formula(1, 6, 3, 10, (1, 1, 6), lambda lane, i: (0 * i, 0 * i, i), prefix="e")
    assert f.name(1, 2) == "e5" and f.name(0, 2) == "e2"
    assert f.bit_range(2) == (20, 29)


def test_every_element_check_is_exact_at_the_edges():
    f = _two_by_four()
    for row, col in ((2, 0), (0, 4), (-1, 0), (0, -1)):
        with pytest.raises(LayoutsimError, match="outside the 2x4 operand"):
            f.who_holds(row, col)
    with pytest.raises(LayoutsimError, match="out of range"):
        f.lane_entries(2)


@pytest.mark.parametrize("bad", [(0, -1, 0), (0, 0, -1), (1, 0, 0), (0, 2, 0), (0, 0, 4)])
def test_a_formula_leaving_the_operand_is_refused(bad):
    def formula(lane, i):
        m, r, c = (0 * lane, lane, i)
        first = (lane == 0) & (i == 0)
        return tuple(np.where(first, v, x) for v, x in zip(bad, (m, r, c)))
    with pytest.raises(AssertionError, match="leaves the operand"):
        FragmentMap.from_formula(2, 4, 2, 16, (1, 2, 4), formula)


def test_unused_positions_are_minus_one_and_never_listed():
    # element 1 of every lane holds nothing (like the unused half of gfx11's 16-bit D)
    def formula(lane, i):
        used = i == 0
        return (np.where(used, 0, -1), np.where(used, lane, -1), np.where(used, 0, -1))
    f = FragmentMap.from_formula(4, 2, 2, 16, (1, 4, 1), formula)
    assert (f.table[:, 0, 1] == -1).all()
    assert f.lane_entries(3) == [(0, 0, 0, 3, 0)]
    assert f.entries().tolist() == [[lane, 0, 0, 0, lane, 0] for lane in range(4)]


def test_from_holders_checks_and_names():
    with pytest.raises(AssertionError, match=r"expected \(1, 2, 4, 3\)"):
        FragmentMap.from_holders(np.zeros((1, 2, 3, 3), int), 2, 2, 2, 16, (1, 2, 4))
    h = np.array([[[[l, i // 2, i % 2] for i in range(4)] for l in range(2)]])   # [1, 2, 4, 3]
    f = FragmentMap.from_holders(h, 2, 2, 2, 16, (1, 2, 4))
    assert f.names == ("r0.0", "r0.1", "r1.0", "r1.1")
    # every position holds one element: not shared, and the queries match _two_by_four's
    assert not f.shared
    ref = _two_by_four()
    assert all(f.lane_entries(lane) == ref.lane_entries(lane) for lane in range(2))
    assert (f.table == ref.table).all() and f.entries().tolist() == ref.entries().tolist()


def test_a_broadcast_map_lists_every_element_a_position_feeds():
    # lane 1's registers feed both rows (a broadcast); lane 0 holds nothing
    h = np.array([[[[1, i // 2, i % 2] for i in range(4)] for _ in range(2)]])
    f = FragmentMap.from_holders(h, 2, 2, 2, 16, (1, 2, 4))
    assert f.shared
    assert (f.table[0] == -1).all() and f.lane_entries(0) == []
    assert f.lane_entries(1) == [(0, 0, 0, 0, 0), (0, 0, 0, 1, 0), (0, 1, 0, 0, 1), (0, 1, 0, 1, 1),
                                 (1, 0, 0, 0, 2), (1, 0, 0, 1, 2), (1, 1, 0, 0, 3), (1, 1, 0, 1, 3)]
    assert f.who_holds(1, 2) == [(1, 1, 0)]
    assert sorted(map(tuple, f.entries().tolist())) == sorted((1, *e[:2], *e[2:]) for e in f.lane_entries(1))


@pytest.mark.parametrize("name, arch, shared", [
    ("v_mfma_f32_4x4x4_16b_f16 cbsz:2 abid:1", "gfx942", "A"),      # A's block broadcast
    ("v_mfma_f32_4x4x4_16b_f16 blgp:1", "gfx90a", "B"),             # B's lanes broadcast
    ("v_mfma_f32_32x32x8_f16", "gfx942", ""),
    ("v_wmma_f16_16x16x16_f16", "gfx1100", "")])                   # replicated, unused halves
def test_catalog_maps_forward_and_inverse_agree(name, arch, shared):
    """For real MFMA maps, broadcast or not: every (lane, reg, slot) -> element lane_entries
    lists is a holder who_holds returns, and the other way round."""
    inst = layoutsim.get(name, arch=arch)
    for key, op in inst.operands.items():
        f = op.fragment
        forward = {(lane, *e) for lane in range(f.lanes) for e in f.lane_entries(lane)}
        nm, nr, nc = f.shape
        inverse = {(h[0], h[1], h[2], m, r, c) for m in range(nm) for r in range(nr) for c in range(nc)
                   for h in f.who_holds(r, c, m)}
        assert forward == inverse, op
        assert forward == {tuple(row) for row in f.entries().tolist()}
        assert f.shared == (key in shared), key


# ---- direct construction from a table ------------------------------------------------------
def _table(rows, cols, regs, slots):
    """A simple bijective table: lane l, element i -> row l % rows, col (l // rows)*n + i."""
    n = regs * slots
    t = np.zeros((32, regs, slots, 3), np.int16)
    for lane in range(32):
        for i in range(n):
            t[lane, i // slots, i % slots] = (0, lane % rows, (lane // rows) * n + i)
    return t


def test_default_register_names_and_immutability():
    frag = FragmentMap(table=_table(8, 16, 2, 2), shape=(1, 8, 16), elem_bits=16)
    assert frag.names == ("r0.0", "r0.1", "r1.0", "r1.1")
    three = FragmentMap(table=_table(8, 24, 2, 3), shape=(1, 8, 24), elem_bits=8)   # regs * slots
    assert three.names == ("r0.0", "r0.1", "r0.2", "r1.0", "r1.1", "r1.2")
    assert frag.replication == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        frag.elem_bits = 8
    with pytest.raises(ValueError):
        frag.table[0, 0, 0, 0] = 1                   # read-only
    with pytest.raises(ValueError):
        frag.holders[0, 0, 0, 0, 0] = 1


def test_fragment_checks():
    five = np.zeros((32, 1, 1, 3, 3), np.int16)                          # 5 dimensions, last two 3
    for bad in (_table(8, 16, 2, 2)[None], _table(8, 16, 2, 2)[0], five):  # 5 and 3 dimensions
        with pytest.raises(AssertionError, match="expected \\[lanes, regs, slots, 3\\]"):
            FragmentMap(table=bad, shape=(1, 8, 16), elem_bits=16)
    with pytest.raises(AssertionError, match="not a bijection"):               # nothing held
        FragmentMap(table=np.full((32, 2, 2, 3), -1, np.int16), shape=(1, 8, 16), elem_bits=16)
    with pytest.raises(AssertionError, match="^2 slots of 32 bits exceed a 32-bit register$"):
        FragmentMap(table=_table(8, 16, 2, 2), shape=(1, 8, 16), elem_bits=32)
    t = _table(8, 16, 2, 2)
    t[:, 0, 0] = -1                                   # element (0, 0) and others unheld
    with pytest.raises(AssertionError, match="not a bijection"):
        FragmentMap(table=t, shape=(1, 8, 16), elem_bits=16)


def test_who_holds_bounds_and_messages():
    one = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("C").fragment
    with pytest.raises(layoutsim.LayoutsimError) as e:
        one.who_holds(0, 0, -1)
    assert "matrix" not in str(e.value).split("outside")[0]
    four = layoutsim.get("ldmatrix.x4").operand("R").fragment
    for bad in ((0, 0, -1), (0, 0, 4), (8, 0, 0), (0, -1, 0)):
        with pytest.raises(layoutsim.LayoutsimError, match="outside"):
            four.who_holds(*bad)
    with pytest.raises(layoutsim.LayoutsimError, match="matrix 4 "):
        four.who_holds(0, 0, 4)


def test_several_matrices_of_any_row_count_and_bit_ranges():
    # three 3x4 matrices (not a power of two: the inverse must index m*rows + r, not m*rows | r)
    t = np.zeros((36, 1, 1, 3), np.int16)
    for lane in range(36):
        t[lane, 0, 0] = (lane // 12, (lane % 12) // 4, lane % 4)
    frag = FragmentMap(table=t, shape=(3, 3, 4), elem_bits=32)
    assert [frag.who_holds(r, c, m) for m, r, c in ((1, 1, 0), (2, 2, 3), (1, 0, 3))] == [
        [(16, 0, 0)], [(35, 0, 0)], [(15, 0, 0)]]
    a = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("A").fragment
    assert [a.bit_range(s) for s in (0, 1)] == [(0, 15), (16, 31)]
    i4 = layoutsim.get("mma.m16n8k64.s32.s4.s4.s32").operand("A").fragment
    assert [i4.bit_range(s) for s in (0, 1, 7)] == [(0, 3), (4, 7), (28, 31)]
