"""PTX catalog: spot values from the PTX ISA fragment figures/formulas, bijection, inverse."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import layoutsim
from layoutsim.isa.registry import listing

NVIDIA = [e for e in listing() if e.vendor == "nvidia" and e.family != "wmma.load"]


def holds(name, operand, lane):
    return {layoutsim.get(name).operand(operand).fragment.name(reg, slot): (m, r, c)
            for reg, slot, m, r, c in layoutsim.get(name).operand(operand).lane(lane)}


# Expected values: PTX ISA 9.0, 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating
# point type" (formulas with groupID = lane>>2, threadID_in_group = lane%4, and its figures).
def test_m16n8k16_f16_C_lane13_from_issue_and_ptx():
    got = holds("mma.m16n8k16.f32.f16.f16.f32", "C", 13)
    assert got == {"c0": (0, 3, 2), "c1": (0, 3, 3), "c2": (0, 11, 2), "c3": (0, 11, 3)}


def test_m16n8k16_f16_A_lane0_and_lane13():
    assert holds("mma.m16n8k16.f32.f16.f16.f32", "A", 0) == {
        "a0": (0, 0, 0), "a1": (0, 0, 1), "a2": (0, 8, 0), "a3": (0, 8, 1),
        "a4": (0, 0, 8), "a5": (0, 0, 9), "a6": (0, 8, 8), "a7": (0, 8, 9)}
    got = holds("mma.m16n8k16.f32.f16.f16.f32", "A", 13)
    assert got["a0"] == (0, 3, 2) and got["a7"] == (0, 11, 11)


def test_m16n8k16_f16_B_lane0():
    assert holds("mma.m16n8k16.f32.f16.f16.f32", "B", 0) == {
        "b0": (0, 0, 0), "b1": (0, 1, 0), "b2": (0, 8, 0), "b3": (0, 9, 0)}


def test_f16_accumulator_is_packed_pairs():
    # PTX ISA: the .f16 C/D of m16n8k16 are two .f16x2 registers holding c0,c1 and c2,c3.
    frag = layoutsim.get("mma.m16n8k16.f16.f16.f16.f16").operand("D").fragment
    assert (frag.regs, frag.slots) == (2, 2)
    assert [tuple(e) for e in frag.lane_entries(13)] == [(0, 0, 0, 3, 2), (0, 1, 0, 3, 3),
                                                         (1, 0, 0, 11, 2), (1, 1, 0, 11, 3)]


def test_tf32_m16n8k8_A():
    # PTX ISA 9.7.14.5.7 (m16n8k8, .tf32): row = groupID for a0,a2, +8 for a1,a3;
    # col = threadID_in_group for a0,a1, +4 for a2,a3.
    assert holds("mma.m16n8k8.f32.tf32.tf32.f32", "A", 0) == {
        "a0": (0, 0, 0), "a1": (0, 8, 0), "a2": (0, 0, 4), "a3": (0, 8, 4)}
    assert holds("mma.m16n8k4.f32.tf32.tf32.f32", "A", 6) == {"a0": (0, 1, 2), "a1": (0, 9, 2)}


def test_int8_m16n8k32_A_and_B():
    # PTX ISA 9.7.14.5.10 (m16n8k32, .s8/.u8/.e4m3/.e5m2): four bytes per .b32 register.
    got = holds("mma.m16n8k32.s32.s8.s8.s32", "A", 0)
    assert [got[f"a{i}"] for i in range(16)] == (
        [(0, 0, c) for c in range(4)] + [(0, 8, c) for c in range(4)]
        + [(0, 0, c) for c in range(16, 20)] + [(0, 8, c) for c in range(16, 20)])
    got = holds("mma.m16n8k32.s32.s8.s8.s32", "B", 5)     # groupID 1, threadID_in_group 1
    assert [got[f"b{i}"] for i in range(8)] == [(0, r, 1) for r in (4, 5, 6, 7, 20, 21, 22, 23)]
    # fp8 m16n8k32 shares the 8-bit layout
    assert holds("mma.m16n8k32.f32.e4m3.e5m2.f32", "B", 5) == got


def test_int4_m16n8k64_A():
    # PTX ISA 9.7.14.5.11 (m16n8k64, .s4/.u4): eight nibbles per register.
    got = holds("mma.m16n8k64.s32.s4.s4.s32", "A", 1)
    assert got["a0"] == (0, 0, 8) and got["a7"] == (0, 0, 15)
    assert got["a8"] == (0, 8, 8) and got["a16"] == (0, 0, 40) and got["a31"] == (0, 8, 47)


def test_m8n8k16_int8_and_m8n8k4_f64():
    # PTX ISA 9.7.14.5.2 (m8n8k16) and 9.7.14.5.1 (m8n8k4 .f64).
    assert holds("mma.m8n8k16.s32.s8.s8.s32", "A", 5) == {f"a{i}": (0, 1, 4 + i) for i in range(4)}
    assert holds("mma.m8n8k16.s32.s8.s8.s32", "C", 5) == {"c0": (0, 1, 2), "c1": (0, 1, 3)}
    f64 = layoutsim.get("mma.m8n8k4.f64.f64.f64.f64")
    assert f64.operand("A").fragment.reg_bits == 64
    assert holds("mma.m8n8k4.f64.f64.f64.f64", "A", 5) == {"a0": (0, 1, 1)}
    assert holds("mma.m8n8k4.f64.f64.f64.f64", "C", 5) == {"c0": (0, 1, 2), "c1": (0, 1, 3)}


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_x4(trans):
    # PTX ISA 9.7.14.5.15 ldmatrix: lane L gets row L/4, elements 2(L%4), 2(L%4)+1 of each
    # matrix; with .trans the matrix is transposed on the way into registers.
    frag = layoutsim.get("ldmatrix.x4" + (".trans" if trans else "")).operand("R").fragment
    seen = 0
    for lane in range(32):
        for reg, slot, m, r, c in frag.lane_entries(lane):
            a, b = lane // 4, 2 * (lane % 4) + slot
            want = (reg, b, a) if trans else (reg, a, b)
            assert (m, r, c) == want
            seen += 1
    assert seen == 4 * 8 * 8          # every element of the four 8x8 matrices was compared
    # lane 13 written out (row 13/4 = 3, elements 2 and 3), so a wrong formula above cannot agree
    lo, hi = ((2, 3), (3, 3)) if trans else ((3, 2), (3, 3))
    assert holds("ldmatrix.x4" + (".trans" if trans else ""), "R", 13) == {
        f"r{j}.{h}": (j, *rc) for j in range(4) for h, rc in (("lo", lo), ("hi", hi))}
    assert layoutsim.get("ldmatrix.x2").addressing.lanes.tolist() == [list(range(8)), list(range(8, 16))]


def test_wgmma_D_and_A():
    # PTX ISA 9.7.15.5.1: warp w of the warpgroup owns rows 16w..16w+15; inside a warp the
    # mma m16n8 accumulator pattern repeats every 8 columns.
    inst = layoutsim.get("wgmma.m64n256k16.f32.bf16.bf16")
    d = inst.operand("D").fragment
    assert (d.lanes, d.regs) == (128, 128)
    got = {d.name(reg, slot): (r, c) for reg, slot, _, r, c in d.lane_entries(45)}
    assert got["d0"] == (16 + 3, 2) and got["d2"] == (16 + 11, 2) and got["d4"] == (19, 10)
    assert got["d127"] == (27, 8 * 31 + 3)
    a = inst.operand("A").fragment
    got = {a.name(reg, slot): (r, c) for reg, slot, _, r, c in a.lane_entries(97)}
    assert got["a0"] == (48, 2) and got["a7"] == (56, 11)


@pytest.mark.parametrize("entry", NVIDIA[::7], ids=lambda e: e.name)
def test_every_entry_is_a_bijection(entry):
    # or tcgen05.cp's multicast: PTX ISA 9.7.16.9.2, each row into 2 (.warpx2) or 4 (.warpx4) warps' lanes
    inst = entry.instruction()
    cast = 4 if ".warpx4" in entry.name else 2 if ".warpx2" in entry.name else 1
    for op in inst.operands.values():
        frag = op.fragment
        assert frag.replication == cast
        nm, r, c = frag.shape
        used = (frag.table[..., 0] >= 0).sum()
        assert used == nm * r * c * cast


ALL = [e for e in listing()]


@given(st.data())
def test_inverse_undoes_forward(data):
    inst = data.draw(st.sampled_from(ALL)).instruction()
    op = inst.operands[data.draw(st.sampled_from(sorted(inst.operands)))]
    frag = op.fragment
    lane = data.draw(st.integers(0, frag.lanes - 1))
    for reg, slot, m, r, c in frag.lane_entries(lane):
        assert (lane, reg, slot) in frag.who_holds(r, c, m)
    m = data.draw(st.integers(0, frag.shape[0] - 1))
    r = data.draw(st.integers(0, frag.shape[1] - 1))
    c = data.draw(st.integers(0, frag.shape[2] - 1))
    for lane, reg, slot in frag.who_holds(r, c, m):
        assert tuple(frag.table[lane, reg, slot]) == (m, r, c)


def test_names_resolve():
    full = layoutsim.get("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
    assert layoutsim.get("mma.m16n8k16.f32.f16.f16.f32") is full
    assert layoutsim.get("MMA.M16N8K16.F32.F16.F16.F32") is full
    assert layoutsim.get("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") is layoutsim.get("ldmatrix.x4.trans")
    assert layoutsim.get("mma.m16n8k32.satfinite.s32.s8.u8.s32").options["satfinite"]


@pytest.mark.parametrize("name,arch,msg", [
    ("mma.m16n8k16.f32.f16.f16.f3", None, "did you mean"),
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_80", "introduced with sm_89"),
    ("stmatrix.x4", "sm_80", "introduced with sm_90"),
    ("mma.m16n8k16.f64.f64.f64.f64", "sm_89", "introduced with sm_90"),
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_99", "unknown arch"),
])
def test_lookup_errors(name, arch, msg):
    with pytest.raises(layoutsim.LayoutsimError, match=msg):
        layoutsim.get(name, arch=arch)


def test_query_errors():
    op = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("C")
    with pytest.raises(layoutsim.LayoutsimError, match="lanes 0-31"):
        op.lane(32)
    with pytest.raises(layoutsim.LayoutsimError, match="outside the 16x8"):
        op.who_holds(16, 0)
    with pytest.raises(layoutsim.LayoutsimError, match="operands are A, B, C, D"):
        layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("E")
    assert np.asarray(op.table).shape == (32, 4, 1, 3)


def test_measured_wmma_fragments_load_as_recorded():
    # nvcuda::wmma layouts are undocumented: the catalog holds what gpu-check discover measured
    # on the H200 (layoutsim/isa/data/nvcuda_wmma_sm_90.json); the loader must keep it intact.
    # (A round trip: it cannot see a wrong measurement; the values are checked below.)
    import json
    from layoutsim.isa import ptx_wmma
    doc = json.loads(ptx_wmma.DATA.read_text())
    assert "H200" in doc["environment"]["gpu"]
    for e in doc["entries"]:
        frag = layoutsim.get(e["name"], arch="sm_90").operand(e["operand"]).fragment
        assert frag.replication == e["replication"]
        t = np.asarray(e["table"])
        flat = frag.table.reshape(32, -1, 3)
        assert (flat[..., 1:] == t).all() and (flat[..., 0] == 0).all()
    # the f16 m16n16k16 matrix_a fragment is the mma.m16n8k16 A layout, held twice
    a = layoutsim.get("wmma.load.a.row.m16n16k16.f16").operand("A").fragment
    mma_a = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("A").fragment
    assert (a.table[:, :4] == mma_a.table).all() and (a.table[:, 4:] == mma_a.table).all()


def test_measured_wmma_accumulator_values_match_the_ptx_mma_tiles():
    # Values, from the PTX ISA: the measured m16n16k16 f32 accumulator of lane 13 holds, in x0..x3,
    # the mma.m16n8k16 C elements of lane 13 (9.7.14.5.8: C[3][2], C[3][3], C[11][2], C[11][3])
    # and in x4..x7 the same 8 columns to the right; the f16 matrix_b (col) holds the mma
    # m16n8k16 B elements of lane 13 (B[2][3], B[3][3], B[10][3], B[11][3]), then those of the
    # second n8 tile (column 11), twice (replication 2).
    c = holds("wmma.load.c.row.m16n16k16.f32", "C", 13)
    assert [c[f"x{i}"] for i in range(8)] == [(0, 3, 2), (0, 3, 3), (0, 11, 2), (0, 11, 3),
                                              (0, 3, 10), (0, 3, 11), (0, 11, 10), (0, 11, 11)]
    b = holds("wmma.load.b.col.m16n16k16.f16", "B", 13)
    once = [(0, 2, 3), (0, 3, 3), (0, 10, 3), (0, 11, 3), (0, 2, 11), (0, 3, 11), (0, 10, 11), (0, 11, 11)]
    assert [b[f"x{i}"] for i in range(16)] == once + once


def test_confirmed_entries_come_from_the_committed_gpu_report():
    # layoutsim/isa/data/confirmed.json is written by `gpu-check report --confirmed` from
    # docs/validation/h200.json: every name in it is a catalog entry, and those entries say so.
    import json
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    done = json.loads((root / "layoutsim" / "isa" / "data" / "confirmed.json").read_text())
    report = json.loads((root / done["report"]).read_text())
    assert report["environment"]["gpu"] == done["gpu"] and report["totals"]["mismatches"] == 0
    names = {e.name for e in listing()}
    assert set(done["layouts"]) <= names and len(done["layouts"]) >= 60
    assert "confirmed on NVIDIA H200" in layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").confirmed
    assert "confirmed" in layoutsim.get("ldmatrix.x4.trans").confirmed
