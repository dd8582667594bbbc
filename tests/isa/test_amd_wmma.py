"""AMD WMMA / SWMMAC catalog (layoutsim/isa/amd_wmma.py).

Expected values come from AMD's documents, never from the module under test:
* CALC: AMD matrix instruction calculator, ROCm/amd_matrix_instruction_calculator,
  matrix_calculator.py v1.3.1 (InstCalcGfx11: __get_input_reg_lanes / __get_output_reg_lanes;
  InstCalcGfx12: __get_input_reg, __get_input_lane, __get_compression_bits,
  __get_output_reg_lanes, get_num_compression_sets). `calc_*` below restate its element ->
  (VGPR, bits, lane) formulas and every element of every operand is compared with them.
* README: the calculator's README examples (RDNA3 OPSEL D table, RDNA3 B negation table,
  RDNA4 compression-index example).
* GPUOPEN: the sample kernel of GPUOpen "How to accelerate AI applications on RDNA 3 using WMMA"
  (and its gfx12 ENABLE_TEST variant).
* BUILTINS: clang/include/clang/Basic/BuiltinsAMDGPU.def (builtin names and vector sizes).
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import layoutsim
from layoutsim.archs import GFX11, GFX12
from layoutsim.errors import LayoutsimError
from layoutsim.isa import amd_wmma
from layoutsim.isa.registry import all_entries

ENTRIES = [e for e in all_entries() if e.vendor == "amd" and e.family != "mfma"]   # MFMA: test_amd_mfma.py
BY_NAME = {e.name: e for e in ENTRIES}
W = {"f16": 16, "bf16": 16, "f32": 32, "i32": 32, "iu8": 8, "iu4": 4, "fp8": 8, "bf8": 8}


def inst_of(entry):
    return entry.instruction()


def gen_of(entry):
    return "gfx12" if entry.archs == GFX12 else "gfx11"


# ---- the calculator's formulas, restated ---------------------------------------------------------
# Each returns a set of (lane, vgpr, lo_bit, width) holding one element.

def calc_gfx11_input(w, i, k, wave):
    per = 32 // w
    return {(i + 16 * t, k // per, w * (k % per), w) for t in range(wave // 16)}


def calc_gfx11_output(w, i, j, wave, opsel):
    rows_per_vgpr = wave // 16
    return {((16 * i + j) % wave, i // rows_per_vgpr, 16 * opsel if w == 16 else 0, w)}


def calc_gfx12_dense_input(w, K, i, k, wave):
    per = 32 // w
    if wave == 32:
        reg = {16: 2 * (k // 8) + (k // 2) % 2, 8: (k // 4) % 2, 4: (k // 8) % 2 if K == 32 else 0}[w]
        if w == 16:
            lane = 16 * ((k // 4) % 2) + i
        elif w == 8 or K == 16:
            lane = 16 * (k // 8) + i
        else:
            lane = 16 * (k // 16) + i
    else:
        reg = (k // 2) % 2 if w == 16 else 0
        if w == 16:
            lane = 32 * ((k // 8) % 2) + 16 * ((k // 4) % 2) + i
        elif w == 8:
            lane = 32 * ((k // 4) % 2) + 16 * ((k // 8) % 2) + i
        elif K == 16:
            lane = 16 * (k // 8) + i              # only half of the wave64 is enabled
        else:
            lane = 32 * ((k // 8) % 2) + 16 * ((k // 16) % 2) + i
    return {(lane, reg, w * (k % per), w)}


def calc_gfx12_sparse_lane(matrix, w, K, i, k, wave):
    if wave == 32:
        if w == 16:
            return 16 * ((k // 8) % 2) + i
        if w == 8 or K == 32:
            return 16 * (k // 16) + i
        return 16 * (k // 32) + i
    if w == 16:
        return 16 * (k // 8) + i
    if w == 8 or K == 32:
        if w == 4 and matrix in "AK":
            return 16 * (k // 16) + i             # 4-bit K=32 sparse A uses 32 of 64 lanes
        return 32 * ((k // 8) % 2) + 16 * (k // 16) + i
    return 32 * ((k // 16) % 2) + 16 * (k // 32) + i


def calc_gfx12_sparse_a(w, K, i, k, wave):
    """(lane, vgpr, lo, width) of the 2 stored values of the group of logical column k."""
    if wave == 32:
        reg = {16: 2 * (k // 16) + (k // 4) % 2, 8: (k // 8) % 2, 4: (k // 16) % 2 if K == 64 else 0}[w]
    else:
        reg = (k // 4) % 2 if w == 16 else 0
    lo, width = (0, 32) if w == 16 else (2 * w * ((k // 4) % (16 // w)), 2 * w)
    return calc_gfx12_sparse_lane("A", w, K, i, k, wave), reg, lo, width


def calc_gfx12_sparse_b(w, K, j, k, wave):
    if wave == 32:
        reg = {16: 4 * (k // 16) + (k // 2) % 4, 8: (k // 4) % 4, 4: (k // 8) % 2 if K == 32 else (k // 8) % 4}[w]
    else:
        reg = {16: (k // 2) % 4, 8: (k // 4) % 2, 4: 0 if K == 32 else (k // 8) % 2}[w]
    return {(calc_gfx12_sparse_lane("B", w, K, j, k, wave), reg, w * (k % (32 // w)), w)}


def calc_gfx12_index(w, K, i, k, wave, index_key=0):
    if wave == 32:
        if w == 16:
            lo = 8 * (k // 16) + 4 * ((k // 4) % 2)
        elif w == 8 or K == 32:
            lo = 4 * ((k // 4) % 4)
        else:
            lo = 4 * ((k // 4) % 8)
        sets = 1 if (w == 4 and K == 64) else 2
    else:
        lo = 4 * ((k // 4) % 2) if w in (8, 16) else 4 * ((k // 4) % 4)
        sets = 4 if w in (8, 16) else 2
    return {(calc_gfx12_sparse_lane("K", w, K, i, k, wave), 0, lo + index_key * (32 // sets), 4)}


def calc_gfx12_output(w, i, j, wave):
    if wave == 32:
        reg = i % 8 if w == 32 else (i // 2) % 4
        lane = 16 * (i // 8) + j
    else:
        reg = i % 4 if w == 32 else (i // 2) % 2
        lane = 32 * ((i // 4) % 2) + 16 * (i // 8) + j
    return {(lane, reg, 16 * (i % 2) if w == 16 else 0, w)}


def holders(op, row, col):
    w = op.fragment.elem_bits
    return {(lane, reg, slot * w, w) for lane, reg, slot in op.who_holds(row, col)}


# ---- every entry -------------------------------------------------------------------------------

def test_catalog_counts():
    # 22 gfx12 mnemonics (11 WMMA, 11 SWMMAC) and 6 gfx11 ones, each wave32 and wave64, plus the
    # OPSEL[2]=1 entries of the two gfx11 16-bit-output instructions.
    assert len(ENTRIES) == 22 * 2 + 6 * 2 + 2 * 2
    assert len({e.name for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_entry_fields(entry):
    inst = inst_of(entry)
    family, d, a, b, shape = amd_wmma.parse(inst.name.split(".")[0])
    assert inst.name == entry.name and inst.family == entry.family == family
    assert inst.vendor == "amd" and inst.threads == entry.wave in (32, 64)
    assert inst.archs in (GFX11, GFX12) and inst.shape == shape and shape[:2] == (16, 16)
    assert set(inst.formats) == {"a", "b", "c", "d"}
    assert inst.source and "not run on AMD hardware" in inst.confirmed
    assert list(inst.operands)[:4] == ["A", "B", "C", "D"]
    assert ("IDX" in inst.operands) == (family == "swmmac")
    for name, op in inst.operands.items():
        frag = op.fragment
        assert frag.lanes == entry.wave
        gfx11_ab = gen_of(entry) == "gfx11" and name in "AB"
        assert frag.replication == (entry.wave // 16 if gfx11_ab else 1)
        # used positions = elements x replication (the rest are -1: unused halves, idle lanes, other index sets)
        used = frag.table[..., 0] >= 0
        assert used.sum() == np.prod(frag.shape) * frag.replication


# clang's builtin signatures (return, A, B, C, ...), which fix the VGPR counts; their source is in the file.
BUILTINS = json.loads((Path(__file__).resolve().parents[1] / "data" / "isa" / "amd_wmma_builtins.json").read_text())
SIG = {(k.split(".")[0], int(k.split(".wave")[1])): v for k, v in BUILTINS["signatures"].items()}


def vgprs(vtype):
    m = re.fullmatch(r"(?:V(\d+))?([hsfi])", vtype)
    return int(m.group(1) or 1) * (16 if m.group(2) in "hs" else 32) // 32


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_register_counts_match_builtins(entry):
    inst = inst_of(entry)
    mnemonic = inst.name.split(".")[0]
    sig = SIG[(gen_of(entry), entry.wave)][mnemonic[2:]]
    ret, a, b, c = re.findall(r"V\d+[hsfi]|[hsfi]", sig.replace("Ib", ""))[:4]
    assert ret == c
    assert [inst.operand(x).fragment.regs for x in "ABCD"] == [vgprs(a), vgprs(b), vgprs(c), vgprs(c)]


# ---- every element against the calculator --------------------------------------------------------

@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_element_matches_calculator(entry):
    inst = inst_of(entry)
    family, d, a, b, (M, N, K) = amd_wmma.parse(inst.name.split(".")[0])
    wave, wa, wd = entry.wave, W[a], W[d]
    A, B, C, D = (inst.operand(x) for x in "ABCD")
    if gen_of(entry) == "gfx11":
        opsel = inst.options.get("opsel", 0)
        for i in range(16):
            for k in range(K):
                assert holders(A, i, k) == calc_gfx11_input(wa, i, k, wave)
                assert holders(B, k, i) == calc_gfx11_input(wa, i, k, wave)
            for j in range(16):
                for op in (C, D):
                    assert holders(op, i, j) == calc_gfx11_output(wd, i, j, wave, opsel)
        return
    for i in range(16):
        for j in range(16):
            for op in (C, D):
                assert holders(op, i, j) == calc_gfx12_output(wd, i, j, wave)
    if family == "wmma":
        for i in range(16):
            for k in range(K):
                assert holders(A, i, k) == calc_gfx12_dense_input(wa, K, i, k, wave)
                assert holders(B, k, i) == calc_gfx12_dense_input(wa, K, i, k, wave)
        return
    IDX = inst.operand("IDX")
    for i in range(16):
        for k in range(K):
            assert holders(B, k, i) == calc_gfx12_sparse_b(wa, K, i, k, wave)
            g = k // 4
            lane, reg, lo, width = calc_gfx12_sparse_a(wa, K, i, k, wave)
            for s in (0, 1):               # compressed columns 2g (lower bits) and 2g+1 (upper bits)
                (hl, hr, hlo, hw), = holders(A, i, 2 * g + s)
                assert (hl, hr) == (lane, reg)
                assert hlo == lo + s * hw and hlo + hw <= lo + width
            assert holders(IDX, i, g) == calc_gfx12_index(wa, K, i, k, wave)


# ---- spot values from the vendor tables ------------------------------------------------------------

def test_readme_rdna3_opsel_d_table():
    # README "Example of Using the OPSEL Modifier to Change the C and D Matrix Storage in the AMD
    # RDNA 3 Architecture": v_wmma_f16_16x16x16_f16 --register-layout --D-matrix --opsel 4
    # (wave32): D[0][0] = v0{0}.[31:16], D[1][3] = v0{19}.[31:16], D[15][15] = v7{31}.[31:16].
    d = layoutsim.get("v_wmma_f16_16x16x16_f16.opsel1", arch="gfx1100").operand("D")
    assert d.who_holds(0, 0) == [(0, 0, 1)]
    assert d.who_holds(1, 3) == [(19, 0, 1)]
    assert d.who_holds(15, 15) == [(31, 7, 1)]
    assert d.fragment.name(7, 1) == "v7[31:16]"
    assert (d.table[:, :, 0] == -1).all()       # lower halves unused with OPSEL[2]=1
    # without OPSEL the same elements sit in bits 15:0
    d0 = layoutsim.get("v_wmma_f16_16x16x16_f16", arch="gfx1100").operand("D")
    assert d0.who_holds(1, 3) == [(19, 0, 0)]


def test_readme_rdna3_b_table():
    # README "Example of Using the NEG Modifier": rdna3 v_wmma_f32_16x16x16_f16 --matrix-layout
    # --B-matrix: lane 0 v0.[15:0] = B[0][0], lane 17 v3.[31:16] = B[7][1], lane 30 v0.[15:0] = B[0][14].
    b = layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1100").operand("B")
    assert (0, 0, 0, 0, 0) in b.lane(0)
    assert (3, 1, 0, 7, 1) in b.lane(17)
    assert (0, 0, 0, 0, 14) in b.lane(30)
    assert b.who_holds(7, 1) == [(1, 3, 1), (17, 3, 1)]


def test_readme_rdna4_compression_index():
    # README "Example of Using the OPSEL Modifier to Change the Compression Index Set in the AMD
    # RDNA 4 Architecture": rdna4 v_swmmac_f32_16x16x32_f16 --compression -I 2 -K 31:
    # K[2][31] = v0{18}.[15:12]; with --opsel 1: v0{18}.[31:28].
    idx = layoutsim.get("v_swmmac_f32_16x16x32_f16", arch="gfx1201").operand("IDX")
    (lane, reg, slot), = idx.who_holds(2, 31 // 4)
    assert (lane, reg, idx.fragment.name(reg, slot)) == (18, 0, "v0[15:12]")
    idx1 = amd_wmma.build("v_swmmac_f32_16x16x32_f16", "gfx12", 32, index_key=1).operand("IDX")
    (lane, reg, slot), = idx1.who_holds(2, 7)
    assert (lane, idx1.fragment.name(reg, slot)) == (18, "v0[31:28]")
    with pytest.raises(LayoutsimError, match="index_key 2"):
        amd_wmma.build("v_swmmac_f32_16x16x32_f16", "gfx12", 32, index_key=2)


def test_gpuopen_rdna3_sample():
    # GPUOPEN sample: a_frag[ele] = a[16*lane + ele], b_frag[ele] = b[16*ele + lane] with
    # lane = threadIdx.x % 16; c[16*r + lane] = c_frag[ele*2], r = ele*2 + threadIdx.x/16.
    inst = layoutsim.get("__builtin_amdgcn_wmma_f16_16x16x16_f16_w32")
    a, b, d = (inst.operand(x) for x in "ABD")
    for tid in range(32):
        lane = tid % 16
        for ele in range(16):
            assert tuple(a.table[tid, ele // 2, ele % 2]) == (0, lane, ele)
            assert tuple(b.table[tid, ele // 2, ele % 2]) == (0, ele, lane)
        for ele in range(8):                   # c_frag[ele*2] = lower half of VGPR ele
            assert tuple(d.table[tid, ele, 0]) == (0, ele * 2 + tid // 16, lane)


def test_gpuopen_rdna4_sample_output():
    # GPUOPEN gfx12 variant (ENABLE_TEST): c[16*(ele + laneGroup*8) + lane] = c_frag[ele], c_frag an
    # 8 x f16 vector (packed: element ele in VGPR ele//2, half ele%2).
    d = layoutsim.get("__builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12").operand("D")
    for tid in range(32):
        for ele in range(8):
            assert tuple(d.table[tid, ele // 2, ele % 2]) == (0, ele + 8 * (tid // 16), tid % 16)


def test_gfx12_isa_and_library_k_numbering_give_the_same_product():
    # The ISA numbers 16-bit K as k = 8*(v>>2) + 4*(lane>>4) + (v&3); GPUOpen's RDNA4 sample loads
    # a_frag[ele] = A[lane%16][ele + 8*(lane/16)] and b_frag[ele] = B[ele + 8*(lane/16)][lane%16].
    inst = layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201")
    assert any("8*(v>>2) + 4*(lane>>4) + (v&3)" in n for n in inst.notes)
    a, b = inst.operand("A").table, inst.operand("B").table
    # the hardware multiplies the A slot (lane i + 16h, v) with the B slot (lane j + 16h, v): both
    # hold the same k under the ISA map, for every i, j, h, v
    for h in range(2):
        for v in range(8):
            ks = {int(a[i + 16 * h, v // 2, v % 2, 2]) for i in range(16)}
            assert ks == {int(b[j + 16 * h, v // 2, v % 2, 1]) for j in range(16)}
    # so registers loaded the library way still give A @ B
    rng = np.random.default_rng(0)
    A, B = rng.integers(-4, 5, (16, 16)), rng.integers(-4, 5, (16, 16))
    lane = np.arange(32)
    regA = np.array([[A[l % 16, e + 8 * (l // 16)] for e in range(8)] for l in lane])
    regB = np.array([[B[e + 8 * (l // 16), l % 16] for e in range(8)] for l in lane])
    D = np.array([[sum(regA[i + 16 * h, v] * regB[j + 16 * h, v] for h in range(2) for v in range(8))
                   for j in range(16)] for i in range(16)])
    assert (D == A @ B).all()
    # while the ISA numbering itself differs from the library one (lane 0, v 4 holds k = 8, not 4)
    assert inst.operand("A").lane(0)[4][2:] == (0, 0, 8)


def test_wave64_half_idle_operands():
    # CALC check_valid_reg_lane / LLVM VOP3PInstructions.td: V_WMMA_I32_16X16X16_IU4 wave64 A/B and
    # V_SWMMAC_I32_16X16X32_IU4 wave64 A/IDX use lanes 0-31 only.
    w = layoutsim.get("v_wmma_i32_16x16x16_iu4", arch="gfx1201", wave=64)
    for x in "AB":
        t = w.operand(x).table
        assert (t[32:] == -1).all() and (t[:32] >= 0).all()
    s = layoutsim.get("v_swmmac_i32_16x16x32_iu4", arch="gfx1201", wave=64)
    assert (s.operand("A").table[32:] == -1).all() and (s.operand("IDX").table[32:] == -1).all()
    assert (s.operand("B").table >= 0).all()


def test_wave64_split_rule():
    # LLVM VOP3PInstructions.td: "wave32: lane n has 8 matrix elements; wave64: lane n has first 4,
    # lane n+32 has other 4 elements"
    for m in ("v_wmma_f32_16x16x16_f16", "v_wmma_i32_16x16x16_iu8", "v_swmmac_f32_16x16x32_f16"):
        for x in "ABD":
            t32 = layoutsim.get(m, arch="gfx1201").operand(x).table
            t64 = layoutsim.get(m, arch="gfx1201", wave=64).operand(x).table
            half = t32.shape[1] // 2
            assert (t64[:32] == t32[:, :half]).all() and (t64[32:] == t32[:, half:]).all()


def test_sparse_index_sets():
    # LLVM VOP3PInstructions.td IndexType: 16-bit index_key in wave32 (2 sets of 16 bits, except
    # iu4 16x16x64: one 32-bit set), 8-bit index_key in wave64 for 16/8-bit types (4 sets),
    # 16-bit for iu4 in wave64 (2 sets). Calculator get_num_compression_sets agrees.
    sets = {}
    for e in ENTRIES:
        if e.family == "swmmac":
            idx = inst_of(e).operand("IDX").table
            sets[(e.name.split(".")[0], e.wave)] = 8 // int((idx[:, 0, :, 0] >= 0).sum(axis=1).max())
    for (m, wave), n in sets.items():
        a = amd_wmma.parse(m)[2]
        if wave == 32:
            assert n == (1 if m == "v_swmmac_i32_16x16x64_iu4" else 2)
        else:
            assert n == (2 if a == "iu4" else 4)


# ---- inverse undoes forward ------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ENTRIES), st.data())
def test_inverse_undoes_forward(entry, data):
    inst = inst_of(entry)
    op = inst.operand(data.draw(st.sampled_from(list(inst.operands))))
    f = op.fragment
    lane = data.draw(st.integers(0, f.lanes - 1))
    reg = data.draw(st.integers(0, f.regs - 1))
    slot = data.draw(st.integers(0, f.slots - 1))
    m, r, c = (int(x) for x in f.table[lane, reg, slot])
    if m >= 0:
        assert (lane, reg, slot) in f.who_holds(r, c, m)
    _, nr, nc = f.shape
    r, c = data.draw(st.integers(0, nr - 1)), data.draw(st.integers(0, nc - 1))
    hs = f.who_holds(r, c)
    assert len(hs) == f.replication
    for h in hs:
        assert tuple(int(x) for x in f.table[h]) == (0, r, c)


# ---- names -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling, arch, wave, expected", [
    ("v_wmma_f32_16x16x16_f16", "gfx1201", None, "v_wmma_f32_16x16x16_f16.w32.gfx12"),
    ("v_wmma_f32_16x16x16_f16", "gfx1200", 64, "v_wmma_f32_16x16x16_f16.w64.gfx12"),
    ("v_wmma_f32_16x16x16_f16", "gfx1100", None, "v_wmma_f32_16x16x16_f16.w32.gfx11"),
    ("v_wmma_f32_16x16x16_f16", "gfx1151", 64, "v_wmma_f32_16x16x16_f16.w64.gfx11"),
    ("V_WMMA_F32_16X16X16_F16", "rdna4", None, "v_wmma_f32_16x16x16_f16.w32.gfx12"),
    ("v_wmma_f32_16x16x16_f16.w64", "gfx1201", None, "v_wmma_f32_16x16x16_f16.w64.gfx12"),
    ("v_wmma_f32_16x16x16_f16.gfx12", None, None, "v_wmma_f32_16x16x16_f16.w32.gfx12"),
    ("v_wmma_f32_16x16x16_f16.gfx11", None, 64, "v_wmma_f32_16x16x16_f16.w64.gfx11"),
    ("v_wmma_bf16_16x16x16_bf16.w64.gfx11", None, None, "v_wmma_bf16_16x16x16_bf16.w64.gfx11"),
    ("__builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12", None, None, "v_wmma_f32_16x16x16_f16.w32.gfx12"),
    ("__builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12", None, None, "v_wmma_f32_16x16x16_f16.w64.gfx12"),
    ("__builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12", None, None,
     "v_wmma_f32_16x16x16_fp8_bf8.w32.gfx12"),
    ("__builtin_amdgcn_wmma_i32_16x16x32_iu4_w64_gfx12", None, None, "v_wmma_i32_16x16x32_iu4.w64.gfx12"),
    ("__builtin_amdgcn_swmmac_f32_16x16x32_f16_w32", None, None, "v_swmmac_f32_16x16x32_f16.w32.gfx12"),
    ("__builtin_amdgcn_swmmac_i32_16x16x64_iu4_w64", None, None, "v_swmmac_i32_16x16x64_iu4.w64.gfx12"),
    ("__builtin_amdgcn_swmmac_f32_16x16x32_bf8_fp8_w32", "gfx1200", None,
     "v_swmmac_f32_16x16x32_bf8_fp8.w32.gfx12"),
    ("__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", None, None, "v_wmma_f32_16x16x16_f16.w32.gfx11"),
    ("__builtin_amdgcn_wmma_f32_16x16x16_f16_w64", None, None, "v_wmma_f32_16x16x16_f16.w64.gfx11"),
    ("__builtin_amdgcn_wmma_f16_16x16x16_f16_w32", None, None, "v_wmma_f16_16x16x16_f16.w32.gfx11"),
    ("__builtin_amdgcn_wmma_bf16_16x16x16_bf16_tied_w64", None, None, "v_wmma_bf16_16x16x16_bf16.w64.gfx11"),
    ("__builtin_amdgcn_wmma_i32_16x16x16_iu4_w32", "gfx1103", None, "v_wmma_i32_16x16x16_iu4.w32.gfx11"),
    ("v_wmma_f16_16x16x16_f16.opsel1", None, None, "v_wmma_f16_16x16x16_f16.opsel1.w32.gfx11"),
    ("v_wmma_f16_16x16x16_f16.opsel1.w64", None, None, "v_wmma_f16_16x16x16_f16.opsel1.w64.gfx11"),
    ("v_wmma_f16_16x16x16_f16.opsel1", "gfx1101", 64, "v_wmma_f16_16x16x16_f16.opsel1.w64.gfx11"),
    ("v_wmma_f16_16x16x16_f16.opsel0", None, None, "v_wmma_f16_16x16x16_f16.w32.gfx11"),
    ("v_swmmac_f32_16x16x32_f16", None, None, "v_swmmac_f32_16x16x32_f16.w32.gfx12"),
    ("v_wmma_i32_16x16x32_iu4", None, 64, "v_wmma_i32_16x16x32_iu4.w64.gfx12"),
])
def test_names_resolve(spelling, arch, wave, expected):
    assert layoutsim.get(spelling, arch=arch, wave=wave).name == expected


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_every_alias_resolves_to_its_entry(entry):
    arch = entry.archs[-1]
    for spelling in (entry.name, *entry.aliases):
        assert layoutsim.lookup(spelling, arch=arch, wave=entry.wave) is entry


def test_opsel_entries():
    inst = layoutsim.get("v_wmma_bf16_16x16x16_bf16.opsel1", arch="gfx1100")
    assert inst.options == {"opsel": 1}
    assert layoutsim.get("v_wmma_bf16_16x16x16_bf16", arch="gfx1100").options == {"opsel": 0}
    assert layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1100").options == {}
    assert any("OPSEL[2]=1" in n for n in inst.notes)
    assert amd_wmma.build("v_wmma_bf16_16x16x16_bf16", "gfx11", 32, opsel=1).name == inst.name


def test_ambiguous_without_arch():
    with pytest.raises(LayoutsimError, match="differs between gfx11, gfx12.*--arch"):
        layoutsim.get("v_wmma_f32_16x16x16_f16")
    with pytest.raises(LayoutsimError, match="differs between gfx11, gfx12"):
        layoutsim.get("v_wmma_i32_16x16x16_iu8.w64")


def test_wrong_arch_is_refused():
    with pytest.raises(LayoutsimError, match="not available on gfx1201"):
        layoutsim.get("v_wmma_f16_16x16x16_f16.opsel1", arch="gfx1201")
    with pytest.raises(LayoutsimError, match="not available on gfx1100"):
        layoutsim.get("v_swmmac_f32_16x16x32_f16", arch="gfx1100")
    with pytest.raises(LayoutsimError, match="not available on gfx1100"):
        layoutsim.get("__builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12", arch="gfx1100")
    with pytest.raises(LayoutsimError, match="not available on sm_90"):
        layoutsim.get("v_wmma_f32_16x16x16_f16", arch="sm_90")
    with pytest.raises(LayoutsimError, match="wave size"):
        layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201", wave=16)
    with pytest.raises(LayoutsimError, match="unknown instruction"):
        layoutsim.get("v_wmma_f32_16x16x16_f64", arch="gfx1201")


def test_lane_out_of_range_for_wave():
    op = layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201", wave=64).operand("D")
    op.lane(63)
    with pytest.raises(LayoutsimError, match="0-63"):
        op.lane(64)
    with pytest.raises(LayoutsimError, match="0-31"):
        layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201").operand("D").lane(32)


def test_formats_and_options():
    f = layoutsim.get("v_wmma_f32_16x16x16_bf8_fp8", arch="gfx1201")
    assert f.formats == {"a": "e5m2", "b": "e4m3", "c": "f32", "d": "f32"}
    i = layoutsim.get("v_swmmac_i32_16x16x64_iu4", arch="gfx1201")
    assert i.formats == {"a": "u4", "b": "u4", "c": "s32", "d": "s32"}
    assert i.options == {"index_key": 0, "signed_a": False, "signed_b": False, "clamp": False}
    assert i.shape == (16, 16, 64) and i.operand("A").fragment.shape == (1, 16, 32)
    assert i.operand("IDX").fragment.shape == (1, 16, 16) and i.operand("IDX").fmt == "u4"
    assert layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201").operand("A").fragment.names[:2] == \
        ("v0[15:0]", "v0[31:16]")
    assert layoutsim.get("v_wmma_i32_16x16x16_iu8", arch="gfx1201").operand("A").fragment.names[1] == "v0[15:8]"


def test_listing_by_arch():
    names = {e.name for e in layoutsim.listing("gfx1201")}
    assert "v_swmmac_f32_16x16x32_f16.w64.gfx12" in names
    assert not any(n.endswith("gfx11") for n in names if n.startswith("v_"))
    gfx11 = [e for e in layoutsim.listing("gfx1100") if e.vendor == "amd"]
    assert len(gfx11) == 6 * 2 + 2 * 2
    assert {e.family for e in layoutsim.listing("gfx1201", "swmmac")} == {"swmmac"}
