"""tcgen05.ld/st register maps and tcgen05.mma's TMEM accumulator layouts (issue 27).

Expected values: PTX ISA 9.x (v9.2) 9.7.16.2.3.1 'Matrix fragments for shape ...' (Figures
183-187) and 9.7.16.10 'Data path layout organization' (Layouts A-G), and, independently,
CUTLASS 4.2's SM100 TMEM load atoms (cute/atom/copy_traits_sm100.hpp), printed by the host
program tests/isa/cute_sm100/print_tmem_atoms.cu into tests/data/cute_sm100/tmem_load_atoms.npz
(rebuilt by tests/isa/cute_sm100/rebuild.py from the PyPI wheel nvidia-cutlass==4.2.0.0).
"""
import re
from pathlib import Path

import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.isa import ptx_tcgen05 as T
from layoutsim.isa import registry

CUTE = Path(__file__).resolve().parents[1] / "data" / "cute_sm100" / "tmem_load_atoms.npz"
CUTE_SHAPE = {"16dp256b": "16x256b", "16dp128b": "16x128b", "16dp64b": "16x64b",
              "16dp32b": "16x32bx2", "32dp32b": "32x32b"}


def _cute_atoms():
    with np.load(CUTE) as z:
        return {k: z[k] for k in z.files if k != "source"}


def _ptx_form(cute_name):
    """CuTe SM100_TMEM_LOAD_<shape><N>x[_16b] -> (PTX shape, .xN, packed). The PTX spelling is
    each atom's asm in cute/arch/copy_sm100.hpp: the same .xN, .pack::16b for _16b, and for
    16x32bx2 immHalfSplitoff = the columns one half spans (N, or 2N packed)."""
    m = re.fullmatch(r"SM100_TMEM_LOAD_(\d+dp\d+b)(\d+)x(_16b)?", cute_name)
    return CUTE_SHAPE[m.group(1)], int(m.group(2)), bool(m.group(3))


def _expected_codes(shape, num, packed):
    """Our map in CuTe's terms: [lane, reg, 2] of TMEM lane * 65536 + 16-bit half-column."""
    frag = T.ldst_fragment(shape, num, packed)
    t = frag.table.astype(np.int64)                       # [lane, reg, slot, (m, row, col)]
    split = frag.shape[2]                                   # columns one half spans
    col = t[..., 2] + t[..., 0] * split
    if packed:                                              # slot s: the low half of column col
        return t[..., 1] * 65536 + 2 * col
    lo = t[..., 0, 1] * 65536 + 2 * col[..., 0]
    return np.stack([lo, lo + 1], -1)


# The cross-checks below are also counted by tests/blackwell_crosscheck.py: each returns rows
# (what was compared, whether it agrees, how many values: thread/register slots or elements).
def cute_load_atoms():
    """Each CuTe SM100 TMEM load atom against the catalog's tcgen05.ld map."""
    rows = []
    for name, codes in _cute_atoms().items():
        want = _expected_codes(*_ptx_form(name))
        rows.append((name, codes.shape == want.shape and np.array_equal(codes, want), codes.size))
    return rows


def test_every_cute_tmem_load_atom_equals_the_catalog_map():
    rows = cute_load_atoms()
    assert len(rows) == 74                  # 5 shapes x every .xN x {b32, 16b} CuTe defines
    assert [name for name, agrees, _ in rows if not agrees] == []


def test_cute_covers_every_load_shape_and_num_the_catalog_has_but_x128_of_16x256b():
    ours = {(s, n) for s, (_, _, top) in T.SHAPES.items() for n in T.NUMS if n <= top}
    theirs = {_ptx_form(k)[:2] for k in _cute_atoms()}
    assert theirs == ours


@pytest.mark.parametrize("name", ["tcgen05.ld.16x256b.x1", "tcgen05.ld.sync.aligned.16x256b.x1.b32"])
def test_names(name):
    inst = layoutsim.get(name, arch="sm_100a")
    assert inst.name == "tcgen05.ld.sync.aligned.16x256b.x1.b32"
    assert inst.arch_specific and inst.archs == ("sm_100",)


def test_lane_13_after_16x256b_x4():
    # PTX ISA 9.7.16.2.3.1.4 (Figure 186): lane 13 holds rows 13//4 = 3 and 11, columns
    # 2*(13%4) = 2, 3 of each 8-column repetition; 4 registers per repetition, 16 in all.
    r = layoutsim.get("tcgen05.ld.16x256b.x4").operand("R").lane(13)
    assert len(r) == 16
    assert r[:4] == [(0, 0, 0, 3, 2), (1, 0, 0, 3, 3), (2, 0, 0, 11, 2), (3, 0, 0, 11, 3)]
    assert r[12:] == [(12, 0, 0, 3, 26), (13, 0, 0, 3, 27), (14, 0, 0, 11, 26), (15, 0, 0, 11, 27)]


def test_32x32b_is_lane_per_thread_and_16x64b_spreads_two_threads_per_lane():
    # 9.7.16.2.3.1.1: thread t reads TMEM lane t, register r = column r.
    assert layoutsim.get("tcgen05.ld.32x32b.x2").operand("R").lane(7) == [(0, 0, 0, 7, 0), (1, 0, 0, 7, 1)]
    # 9.7.16.2.3.1.2: lanes 0 and 2 share TMEM lane 0 (columns 0, 1), lane 1 reads lane 8.
    r = layoutsim.get("tcgen05.ld.16x64b.x1").operand("R")
    assert [r.lane(l)[0][3:] for l in range(4)] == [(0, 0), (8, 0), (0, 1), (8, 1)]


def test_16x32bx2_halves_and_pack():
    r = layoutsim.get("tcgen05.ld.16x32bx2.x1").operand("R")
    assert r.lane(3) == [(0, 0, 0, 3, 0)] and r.lane(19) == [(0, 0, 1, 3, 0)]
    p = layoutsim.get("tcgen05.ld.32x32b.x1.pack::16b").operand("R")
    assert p.fmt == "b16" and p.lane(5) == [(0, 0, 0, 5, 0), (0, 1, 0, 5, 1)]


def test_every_ld_st_entry_is_a_bijection_and_st_mirrors_ld():
    for e in registry.all_entries():
        if e.family in ("tcgen05.ld", "tcgen05.st"):
            inst = e.instruction()
            assert inst.operand("R").fragment.replication == 1
    ld = layoutsim.get("tcgen05.ld.16x128b.x8.pack::16b").operand("R").table
    st = layoutsim.get("tcgen05.st.16x128b.x8.unpack::16b").operand("R").table
    assert np.array_equal(ld, st)


def test_ld_refused_before_sm_100():
    with pytest.raises(LayoutsimError, match="introduced with sm_100"):
        layoutsim.get("tcgen05.ld.16x256b.x1", arch="sm_90")


# ---- D in TMEM: the data-path layouts ------------------------------------------------------
# PTX ISA 9.7.16.10 'Data path layout organization'; the same atoms as CUTLASS 4.2's
# cute::UMMA::tmem_frg (mma_traits_sm100.hpp): M=64 1-SM "(16,4):(1,32)" rows, M=128 identity,
# 2-SM M=64-per-CTA "(64,(N/2,2)):(1,(128,64))".
@pytest.mark.parametrize("name, row, col, want", [
    ("tcgen05.mma.cta_group::1.kind::f16.m128n256k16", 77, 200, (77, 200)),        # Layout D
    ("tcgen05.mma.cta_group::1.kind::f16.m64n64k16", 17, 5, (33, 5)),              # Layout F
    ("tcgen05.mma.cta_group::1.kind::f16.m64n64k16", 63, 63, (111, 63)),
    ("tcgen05.mma.cta_group::2.kind::f16.m128n256k16", 70, 200, (128 + 70, 72)),   # Layout B
    ("tcgen05.mma.cta_group::2.kind::f16.m256n128k16", 200, 3, (200, 3)),          # Layout A
    ("tcgen05.mma.ws.cta_group::1.kind::f16.m32n128k16", 5, 100, (5 + 96, 4)),     # Layout G
    ("tcgen05.mma.ws.cta_group::1.kind::tf32.m64n64k8", 9, 40, (9 + 64, 8)),       # Layout E
    ("tcgen05.mma.sp.cta_group::2.kind::f16.m128n64k32", 80, 1, (128 + 32 + 0, 1)),  # Layout C
])
def test_which_tmem_cell_holds_d(name, row, col, want):
    assert layoutsim.get(name).operand("D").who_holds(row, col) == [(*want, 0)]


def test_mma_shapes_table_39():
    names = {e.name for e in registry.all_entries() if e.family == "tcgen05.mma"}
    assert "tcgen05.mma.cta_group::1.kind::f16.m64n8k16" in names
    assert "tcgen05.mma.cta_group::2.kind::f16.m256n16k16" in names
    assert "tcgen05.mma.cta_group::2.kind::f16.m256n8k16" not in names      # ::2 steps of 16
    assert "tcgen05.mma.ws.cta_group::1.kind::f8f6f4.m32n256k32" in names
    assert "tcgen05.mma.sp.ws.cta_group::1.kind::f16.m64n256k32" not in names   # sparse .ws: N <= 128
    assert not any(".ws.cta_group::2" in n for n in names)
    inst = layoutsim.get("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16.m128n256k64")
    assert inst.name.endswith("scale_vec::4X.m128n256k64") and inst.formats["scale"] == "ue8m0"
    assert any("assumed" in n for n in inst.notes)


def test_list_arch_sm_100a_lists_tcgen05():
    fams = {e.family for e in registry.listing("sm_100a")}
    assert {"tcgen05.ld", "tcgen05.st", "tcgen05.mma"} <= fams
    assert len(registry.listing("sm_100a", "tcgen05")) == len(
        [e for e in registry.all_entries() if e.family.startswith("tcgen05")])


def cute_accumulators():
    """CUTLASS 4.2 UMMA::tmem_frg_1sm/2sm<float> printed by print_umma_frg.cu (the per-CTA rows of D,
    CTA 0 of a pair -> TMEM lane << 16 | column) against the catalog's D holders."""
    with np.load(CUTE.with_name("umma_tmem_frg.npz")) as z:
        layouts = {k: z[k] for k in z.files if k != "source" and not k.startswith(("sf", "ws", "e"))}
    rows = []
    for key, offsets in layouts.items():
        sms, m, n = (int(x) for x in key.split())
        name = f"tcgen05.mma.cta_group::{sms}.kind::f16.m{m * sms}n{n}k16"
        holders = layoutsim.get(name).operand("D").holders[0, :m, :, 0].astype(np.int64)   # [m, n, (lane, col, slot)]
        rows.append((name, np.array_equal(holders[..., 0] * 65536 + holders[..., 1], offsets), offsets.size))
    return rows


def test_accumulator_layouts_equal_cute_umma_tmem_frg():
    rows = cute_accumulators()
    assert len(rows) == 8
    assert [name for name, agrees, _ in rows if not agrees] == []


def test_weight_stationary_accumulator_layouts_equal_cute_tmem_frg_ws():
    # CUTLASS 4.2 UMMA::tmem_frg_ws_1sm<float> (print_umma_frg.cu), an implementation independent of
    # the TVM TIRx closed forms of the PTX ISA's Layouts G (M=32), E (M=64), D (M=128) the catalog uses
    with np.load(CUTE.with_name("umma_tmem_frg.npz")) as z:
        layouts = {k: z[k] for k in z.files if k.startswith("ws")}
    assert len(layouts) == 5
    for key, offsets in layouts.items():
        m, n = (int(x) for x in key.split()[1:])
        d = layoutsim.get(f"tcgen05.mma.ws.cta_group::1.kind::f16.m{m}n{n}k16").operand("D")
        holders = d.holders[0, :m, :, 0].astype(np.int64)
        assert np.array_equal(holders[..., 0] * 65536 + holders[..., 1], offsets), key


# ---- Triton's own choice (tests/data/triton_sm100, from tests/isa/triton_sm100/rebuild.py) ---
def _linear(bases, r, l, w):
    """(row, col) of register r, lane l, warp w of a #ttg.linear layout (bases XORed per bit)."""
    out = np.zeros(2, np.int64)
    for key, v in (("register", r), ("lane", l), ("warp", w)):
        for bit, b in enumerate(bases[key]):
            if v >> bit & 1:
                out ^= np.array(b)
    return tuple(out)


def triton_loads():
    """Triton 3.6 compiles tl.dot for sm_100a: MMA D in TMEM (the data-path layout of M), read
    by warp w from its slab (lanes 32*(w%4)...) with the tcgen05.ld it emits; warps beyond 4
    read the next columns (Triton's address: + the columns one load covers). Prediction: the
    catalog's ld map composed with the catalog's D layout, every element of every thread. An
    f16 accumulator: Triton's TMEM colStride 2 (one 16-bit element per 32-bit column) and
    .pack::16b, as the catalog's 16-bit D note says."""
    import json
    doc = json.loads((CUTE.parents[1] / "triton_sm100" / "tmem_loads.json").read_text())
    rows = []
    for cfg in doc["configs"]:
        (ld,) = cfg["tcgen05_ld"]
        m = re.match(r"tcgen05\.ld\.sync\.aligned\.(\w+)\.x(\d+)(\.pack::16b)?\.b32 \{\.\.\.\}, "
                     r"\[%r \+ 0\](?:, (\d+))?;", ld)
        shape, num, packed = m.group(1), int(m.group(2)), bool(m.group(3))
        agrees = packed == (cfg["acc"] == "fp16") and cfg["col_stride"] == (2 if packed else 1)
        frag = layoutsim.get(f"tcgen05.ld.{shape}.x{num}" + (".pack::16b" if packed else "")).operand("R").fragment
        split = int(m.group(4) or 0)
        agrees &= shape != "16x32bx2" or split == frag.shape[2]
        mma = layoutsim.get(f"tcgen05.mma.cta_group::1.kind::f16.m{cfg['block_m']}n{cfg['block_n']}k16")
        d = mma.operand("D").fragment.table
        cols = frag.shape[2] * frag.shape[0]
        n = 0
        for w in range(cfg["num_warps"]):
            for l in range(32):
                for r in range(frag.regs):
                    for slot in range(frag.slots):
                        mat, row, col = frag.table[l, r, slot]
                        lane = 32 * (w % 4) + row
                        column = (w // 4) * cols + col + mat * split
                        want = tuple(d[lane, column, 0, 1:])
                        agrees &= _linear(cfg["linear"], r * frag.slots + slot, l, w) == want
                        n += 1
        rows.append((f"tl.dot {cfg['block_m']}x{cfg['block_n']} {cfg['num_warps']} warps {cfg['acc']}: {ld}",
                     bool(agrees), n))
    return rows


def test_triton_accumulator_loads_equal_the_catalog():
    rows = triton_loads()
    assert len(rows) == 6
    assert [name for name, agrees, _ in rows if not agrees] == []


SCALE_FACTORS = [
    ("sfa 128 32 1", "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n64k32"),
    ("sfa 128 16 4", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.m128n64k64"),
    ("sfb 256 32 2", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X.m128n256k64"),
    ("sfb 64 16 4", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.m128n64k64")]


def cute_scale_factor(key, name):
    """(agrees, values): CUTLASS 4.2 UMMA::tmem_sf_frg (ScaleFactorDuplicated4by1) printed by
    print_umma_frg.cu ([(row, replica), scale] -> lane * 65536 + byte column) against the catalog's
    SFA/SFB holders, and each replica in its slab (CuTe's replica x // MN)."""
    with np.load(CUTE.with_name("umma_tmem_frg.npz")) as z:
        cute = z[key]
    which, mn, _, nsf = key.split()
    mn, nsf = int(mn), int(nsf)
    op = layoutsim.get(name).operand(which.upper())
    agrees = True
    for x in range(4 * mn):
        row = x % 32 + 32 * ((x // 32) % (mn // 32))
        for s in range(nsf):
            lane, byte = divmod(int(cute[x, s]), 65536)
            held = op.who_holds(row, s) if which == "sfa" else op.who_holds(s, row)
            agrees &= held == [(lane % 32, byte // 4, byte % 4)] and lane // 32 == x // mn
    return agrees, 4 * mn * nsf


# the CTA pair's M = 128 (64 rows per CTA, D in Layout B): CUTLASS's SFB there is ScaleFactorDuplicated2by2, the
# halves of round_up(N, 128) in lanes 0-63 / 64-127; the catalog follows JAX's Mosaic GPU (halves of N), the same
# cells where N is 128 or 256 (isa/ptx_tcgen05.sf_fragment)
PAIR_SCALE_FACTORS = [
    ("sfb2 128 32 1", "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n128k32"),
    ("sfb2 128 16 4", "tcgen05.mma.cta_group::2.kind::mxf4nvf4.block_scale.scale_vec::4X.m128n128k64"),
    ("sfb2 256 32 2", "tcgen05.mma.cta_group::2.kind::mxf4.block_scale.scale_vec::2X.m128n256k64")]


def cute_pair_scale_factor(key, name):
    """(agrees, values): CUTLASS 4.2 UMMA::tmem_sf_frg<.., 2, false, ScaleFactorDuplicated2by2> printed by
    print_umma_frg.cu ([(column, half, replica), scale] -> lane * 65536 + byte column, mode 0 of size 2 * N)
    against the catalog's SFB of the pair's M = 128 MMA (the even CTA's lanes) and its copy 32 lanes on."""
    with np.load(CUTE.with_name("umma_tmem_frg.npz")) as z:
        cute = z[key]
    _, mn, _, nsf = key.split()
    mn, nsf = int(mn), int(nsf)
    op = layoutsim.get(name).operand("SFB")
    agrees = True
    for x in range(2 * mn):
        col, replica = x % mn, x // mn
        for s in range(nsf):
            lane, byte = divmod(int(cute[x, s]), 65536)
            agrees &= op.who_holds(s, col) == [(lane - 32 * replica, byte // 4, byte % 4)]
    return agrees, 2 * mn * nsf


def cute_scale_factors():
    return ([(f"{name} {key.split()[0].upper()}", *cute_scale_factor(key, name)) for key, name in SCALE_FACTORS]
            + [(f"{name} SFB", *cute_pair_scale_factor(key, name)) for key, name in PAIR_SCALE_FACTORS])


@pytest.mark.parametrize("key, name", PAIR_SCALE_FACTORS)
def test_pair_m128_sfb_equals_cute_duplicated_2by2_where_n_is_128_or_256(key, name):
    assert cute_pair_scale_factor(key, name)[0]


def test_pair_m128_sfb_follows_jax_where_cute_differs():
    # N = 64: JAX's Mosaic GPU (B200 test test_mma_block_scaled_collective_m128) stages columns 0-31 as half 0
    # and 32-63 as half 1 (copied to lanes 64..127); CUTLASS's 2by2 would split round_up(64, 128) at 64
    op = layoutsim.get("tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n64k32").operand("SFB")
    assert op.who_holds(0, 5) == [(5, 0, 0)] and op.who_holds(0, 37) == [(64 + 5, 0, 0)]
    sfa = layoutsim.get("tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale.scale_vec::1X.m128n64k32").operand("SFA")
    assert sfa.who_holds(37, 0) == [(5, 1, 0)] and sfa.who_holds(64 + 37, 0) == [(128 + 5, 1, 0)]


@pytest.mark.parametrize("key, name", SCALE_FACTORS)
def test_scale_factor_layouts_equal_cute_tmem_sf_frg(key, name):
    assert cute_scale_factor(key, name)[0]


def cute_sparse_metadata():
    """CUTLASS 4.2 UMMA::tmem_e_frg (M = 128) and tmem_e_frg_ws (M = 128, 64, 32) printed by print_umma_frg.cu
    (the TMEM lane and bit of every logical A element's metadata, each copy) against where the executor
    reads tcgen05.mma.sp's metadata (layoutsim/ptx/ops_tcgen05_sparse.meta_cells): the 4-bit field of a
    chunk holds its elements' bits in order (tf32: 2 bits an element, the others 1)."""
    from layoutsim.ptx.ops_tcgen05_sparse import meta_cells
    with np.load(CUTE.with_name("umma_tmem_frg.npz")) as z:
        layouts = {k: z[k] for k in z.files if k.split()[0] in ("e", "ews")}
    rows = []
    for key, cute in layouts.items():
        tag, m, k, width = key.split()
        kind = {"32": "tf32", "16": "f16", "8": "f8f6f4"}[width]
        size = 2 if kind == "tf32" else 4
        lanes, cols, bit = meta_cells(kind, int(m), int(k), cute.shape[0])
        kk = np.arange(int(k))
        want = (lanes[..., kk // size] * 65536 + 32 * cols[..., kk // size] + bit[..., kk // size]
                + (kk % size) * (4 // size))
        rows.append((f"tcgen05.mma.sp{'.ws' * (tag == 'ews')} M={m} .kind::{kind} metadata", np.array_equal(want, cute),
                     cute.size))
    return rows


def test_sparse_metadata_layouts_equal_cute_tmem_e_frg():
    rows = cute_sparse_metadata()
    assert len(rows) == 12
    assert [name for name, agrees, _ in rows if not agrees] == []
