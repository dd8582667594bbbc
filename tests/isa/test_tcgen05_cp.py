"""tcgen05.cp catalog entries (isa/ptx_tcgen05.cp_fragment: which TMEM lane, column and byte each byte
of a source row lands in) against CUTLASS 4.2's SM100 UTCCP copy atoms (cute/atom/copy_traits_sm100.hpp
Copy_Traits<SM100_UTCCP_*_1cta>, printed by the host-only program tests/isa/cute_sm100/print_utccp.cu
into tests/data/cute_sm100/utccp.npz; rebuilt by tests/isa/cute_sm100/rebuild.py --only print_utccp).

CuTe's comment on those traits: ValID maps a logical bit index, numbered [core_matrix_strided (the row),
core_matrix_leading (the bit of the row), broadcast, repeat], to the TMEM address offset (lane * DP_b +
bit), and SrcLayout maps that index to the bit of the source (its broadcast mode stride 0); for
SM100_UTCCP_4dp256bit ("a TMEM refresh") SrcLayout maps the source's copy bits to the logical bits
instead. The source bit o of a copy is row o % R + R (o // (R bits)), bit (o // R) % bits, R the rows of
one block (32 for the .64x128b.warpx2::01_23 atom, whose repeat mode holds two blocks of 32 rows)."""
import numpy as np
import pytest
from pathlib import Path

import layoutsim

DATA = Path(__file__).resolve().parents[1] / "data" / "cute_sm100" / "utccp.npz"
# catalog shape -> (CuTe atom, rows of one source block, bits of a row)
ATOMS = {"128x256b": ("128dp256bit", 128, 256), "128x128b": ("128dp128bit", 128, 128),
         "4x256b": ("4dp256bit", 4, 256), "32x128b.warpx4": ("4x32dp128bit", 32, 128),
         "64x128b.warpx2::02_13": ("2x64dp128bitlw0213", 64, 128),
         "64x128b.warpx2::01_23": ("2x64dp128bitlw0123", 32, 128)}


def _cute_cells(z, atom, rpb, bits):
    """{(source row, bit): {(TMEM lane, bit)}} of one CuTe atom."""
    dp, valid, src = int(z["dp_b"]), z[f"{atom} valid"].astype(np.int64), z[f"{atom} src"].astype(np.int64)
    if atom == "4dp256bit":
        o, t = np.arange(len(src)), valid[src]                 # copy bit -> logical refresh bit -> TMEM
    else:
        o, t = src, valid[np.arange(len(src))]
    row = o % rpb + rpb * (o // (rpb * bits))
    out = {}
    for r, b, lane, tb in zip(row.tolist(), ((o // rpb) % bits).tolist(), (t // dp).tolist(), (t % dp).tolist()):
        out.setdefault((r, b), set()).add((lane, tb))
    return out


def _catalog_cells(shape):
    """The same from the catalog: byte c of a row in bits 8 (c % 4) .. of column c // 4 of each of its lanes."""
    frag = layoutsim.get(f"tcgen05.cp.{shape}").operand("S").fragment
    _, rows, nbytes = frag.shape
    out = {}
    for r in range(rows):
        for c in range(nbytes):
            for lane, col, slot in frag.who_holds(r, c):
                for k in range(8):
                    out.setdefault((r, 8 * c + k), set()).add((lane, 32 * col + 8 * slot + k))
    return out


def cute_utccp():
    """[(shape, agrees, source bits compared)] of every tcgen05.cp shape against its CuTe atom."""
    with np.load(DATA) as z:
        assert "CUTLASS 4.2" in str(z["source"])
        return [(shape, _catalog_cells(shape) == _cute_cells(z, atom, rpb, bits), len(_cute_cells(z, atom, rpb, bits)))
                for shape, (atom, rpb, bits) in ATOMS.items()]


def test_every_tcgen05_cp_shape_equals_cute_sm100_utccp():
    rows = cute_utccp()
    assert [r[0] for r in rows if not r[1]] == [] and len(rows) == 6


@pytest.mark.parametrize("fmt", ["b8x16.b4x16_p64", "b8x16.b6x16_p32"])
def test_decompressing_forms_have_their_shape_map_and_say_what_is_assumed(fmt):
    for shape in ATOMS:
        plain, dec = (layoutsim.get(f"tcgen05.cp.{shape}{t}") for t in ("", f".{fmt}"))
        assert np.array_equal(plain.operand("S").table, dec.operand("S").table)
        assert any("warning: assumed: element order" in n for n in dec.notes)
        assert dec.formats["s"] == fmt.split(".")[1]


def test_query_answers_which_lanes_a_row_reaches():
    inst = layoutsim.get("tcgen05.cp.cta_group::2.64x128b.warpx2::01_23")
    assert inst.operand("S").who_holds(33, 5) == [(65, 1, 1), (97, 1, 1)]      # row 33 -> lanes 65 and 97
    assert layoutsim.get("tcgen05.cp.32x128b.warpx4").operand("S").fragment.replication == 4
    names = [e.name for e in layoutsim.isa.registry.listing("sm_100", "tcgen05.cp")]
    assert len(names) == 18 and "tcgen05.cp.cta_group::1.4x256b.b8x16.b6x16_p32" in names
