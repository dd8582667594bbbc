"""Address expressions (safe parser), tile layouts and the addresses of fragments and fills.

Expected values: CuTe's Swizzle definition (cute/swizzle.hpp), the PTX ISA fragment figures
(through the catalog), and arithmetic on the tile shapes of issue #3.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import layoutsim
from layoutsim import banks
from layoutsim.banks import Expr, Swizzle, Tile, XorSwizzle
from layoutsim.address import fill_count, parse_swizzle, parse_variables
from layoutsim.errors import LayoutsimError

LANE = np.arange(32)
A = "mma.m16n8k16.f32.f16.f16.f32:A"
B = "mma.m16n8k16.f32.f16.f16.f32:B"


def test_expressions():
    assert list(banks.lane_offsets("(lane % 8) * 144 + (lane // 8) * 16")) == list((LANE % 8) * 144 + (LANE // 8) * 16)
    assert list(banks.lane_offsets("lane ^ (lane >> 3) << 2 & 0xff | 1")) == \
        list(LANE ^ (LANE >> 3) << 2 & 0xff | 1)
    assert list(banks.lane_offsets("-~lane * 4 - 4")) == list(LANE * 4)
    assert list(banks.lane_offsets("row * stride + lane * 4", row=3, stride=144)) == list(3 * 144 + LANE * 4)
    assert parse_variables(["stride=128+16", "half=stride//2"]) == {"stride": 144, "half": 72}


@pytest.mark.parametrize("text,needle", [
    ("__import__('os').system('true')", "not allowed"),
    ("lane.real", "not allowed"),
    ("(lambda: 1)()", "not allowed"),
    ("[x for x in ()]", "not allowed"),
    ("'a' * 3", "not an integer"),
    ("lane * 1.5", "not an integer"),
    ("lane ** 2", "**"),
    ("lane / 2", "use //"),
    ("lane if lane else 0", "not allowed"),
    ("lane < 3", "not allowed"),
    ("open", "unknown name"),
    ("strid * lane", "unknown name 'strid'"),
    ("lane // 0", "division by zero"),
    ("lane % (lane - lane)", "division by zero"),
    ("1 << 60", "shift count"),
    ("lane << -1", "shift count"),
    ("99999999999999999999", "too large"),
    ("(1 << 40) * (1 << 40)", "out of range"),
    ("lane +", "cannot parse"),
    ("(" * 300 + "lane" + ")" * 300, ""),
    ("lane" + " + lane" * 2000, "limit"),
])
def test_expression_parser_rejects(text, needle):
    with pytest.raises(LayoutsimError) as e:
        banks.lane_offsets(text)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_expression_parser_never_evaluates_user_text(monkeypatch):
    import builtins
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: pytest.fail("eval called"))
    assert int(Expr("lane * 4")(lane=np.int64(3))) == 12


def test_cute_swizzle_definition():
    sw = Swizzle(3, 3, 3)                   # CuTe: x ^ ((x & 0b111000000) >> 3)
    x = np.arange(1024)
    assert list(sw(x)) == list(x ^ ((x & (0b111 << 6)) >> 3))
    assert sorted(sw(np.arange(512))) == list(range(512))            # a bijection on whole blocks
    assert list(Swizzle(2, 4, -3)(x)) == list(x ^ ((x & (0b11 << 4)) << 3))
    assert list(XorSwizzle(Swizzle(3, 4, 3).pairs())(x)) == list(Swizzle(3, 4, 3)(x))
    assert parse_swizzle("Swizzle<3,4,3>") == Swizzle(3, 4, 3)
    assert parse_swizzle("xor:7->4,8->5") == XorSwizzle(((7, 4), (8, 5)))
    for bad in ("3,3", "Swizzle<3,3,1>", "xor:4->4", "xor:a->b"):
        with pytest.raises(LayoutsimError):
            parse_swizzle(bad)


def test_tile_offsets():
    t = Tile(64, 32, "f16", pad=8)
    assert t.row_pitch == 40 and t.bytes == 64 * 80 and t.wasted_bytes == 64 * 16
    assert t.offset(1, 0) == 80 and t.offset(16, 16) == 16 * 80 + 32
    assert Tile(64, 32, "f16", pitch=40) == Tile(64, 32, "f16", pitch=40)
    assert Tile(8, 64, "f16", swizzle=Swizzle(3, 3, 3)).offset(1, 0) == 128 + 16    # row 1: chunk 0 -> 1
    assert Tile(8, 64, "f16", swizzle=Swizzle(3, 4, 3), unit="byte").offset(1, 0) == 128 + 16
    assert Tile(4, 4, "f32", base=256).offset(3, 3) == 256 + 60
    with pytest.raises(LayoutsimError, match="outside"):
        t.offset(64, 0)
    with pytest.raises(LayoutsimError, match="splits the 16-byte"):
        Tile(8, 64, "f16", swizzle=Swizzle(3, 2, 3)).vector_offsets(0, 32, 16)   # bit 2 flips inside
    with pytest.raises(LayoutsimError, match="whole bytes"):
        Tile(8, 8, "s4")


def test_matrix_origins_from_the_catalog():
    # ldmatrix.x4 loads the mma A fragment: matrices (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)
    assert banks.matrix_origins("ldmatrix.x4", A) == [(0, 0), (8, 0), (0, 8), (8, 8)]
    # B (k x n) stored k-major rows (row-major K x N): ldmatrix.x2.trans
    assert banks.matrix_origins("ldmatrix.x2.trans", B) == [(0, 0), (8, 0)]
    # B stored n x k (the .col operand in memory): plain ldmatrix.x2
    assert banks.matrix_origins("ldmatrix.x2", B, stored="col") == [(0, 0), (0, 8)]
    with pytest.raises(LayoutsimError, match="try ldmatrix.x2.trans"):
        banks.matrix_origins("ldmatrix.x2", B)
    with pytest.raises(LayoutsimError, match="use ldmatrix.x4"):
        banks.matrix_origins("ldmatrix.x2", A)
    # a FragmentMap object instead of its name: one line naming what to write, not its repr
    frag = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operand("B").fragment
    with pytest.raises(LayoutsimError, match="^fragment a FragmentMap: write INSTRUCTION:OPERAND, e.g. "
                       "mma.m16n8k16.f32.f16.f16.f32:A$"):
        banks.matrix_origins("ldmatrix.x4", frag)
    with pytest.raises(LayoutsimError, match="32-bit"):
        banks.matrix_origins("ldmatrix.x4", "mma.m16n8k8.f32.tf32.tf32.f32:A")


def test_issue_example_fragment_of_padded_tile():
    """The ldmatrix.x4 loading the mma A fragment of rows 16..31, cols 16..31 of a 64x(32+8) f16 tile."""
    t = Tile(64, 32, "f16", pad=8)
    offs = banks.fragment_offsets(t, "ldmatrix.x4", A, 16, 16)
    # lane 8j+r gives row r of matrix j: rows 16+r (+8 for j odd), column 16 (+8 for j >= 2)
    expect = [(16 + r + 8 * (j % 2)) * 80 + (16 + 8 * (j // 2)) * 2 for j in range(4) for r in range(8)]
    assert offs == expect
    assert banks.wavefronts("ldmatrix.x4", offs) == 4
    plain = banks.fragment_offsets(Tile(64, 32, "f16"), "ldmatrix.x4", A, 16, 16)
    assert banks.wavefronts("ldmatrix.x4", plain) == 16         # 64-byte rows: rows r, r+2, r+4, r+6 share banks


def test_fill_offsets():
    t = Tile(64, 32, "f16", pad=8)
    fills = banks.fill_offsets(t, 16)
    assert len(fills) == fill_count(t, 16) == 8
    assert fills[0][:5] == [0, 16, 32, 48, 80]                  # 4 lanes per 64-byte row, pitch 80
    assert banks.fill_offsets(t, 16, 7, 1)[0][-1] == 63 * 80 + 48
    assert [banks.wavefronts("st.shared.v4.b32", f) for f in fills] == [8] * 8
    assert [banks.wavefronts("st.shared.v4.b32", f) for f in banks.fill_offsets(Tile(64, 32, "f16"), 16)] == [4] * 8
    partial = banks.fill_offsets(Tile(2, 40, "f16"), 16)          # 10 vectors: lanes 10-31 idle
    assert partial[0][9] == 80 + 64 and partial[0][10] is None
    with pytest.raises(LayoutsimError, match="do not divide a row"):
        banks.fill_offsets(Tile(4, 36, "f16"), 16)


@given(st.integers(1, 3), st.integers(0, 4), st.integers(3, 6))
def test_swizzles_are_bijections(b, m, s):
    sw = Swizzle(b, m, s)
    n = 1 << (b + m + s)
    assert sorted(sw(np.arange(n))) == list(range(n))


def test_a_fragment_name_with_two_colons_is_one_clear_error():
    # INSTRUCTION:OPERAND splits at the last colon: the rest is looked up as an instruction
    from layoutsim.banks import Tile, fragment_offsets
    with pytest.raises(LayoutsimError, match="^unknown instruction 'a:mma.m16n8k16.f32.f16.f16.f32'"):
        fragment_offsets(Tile(64, 64, "f16"), "ldmatrix.x4", "a:mma.m16n8k16.f32.f16.f16.f32:A")


def test_xor_swizzle_bits_reach_bit_40():
    # bits 0..40 (a shared-memory offset never needs more; bounding keeps 1 << bit in int64)
    assert XorSwizzle(((40, 0), (39, 1))).pairs == ((40, 0), (39, 1))
    assert XorSwizzle(((3, 40),)).pairs == ((3, 40),)
    for bad in (((41, 0),), ((0, 41),), ((-1, 0),)):
        with pytest.raises(LayoutsimError, match="XOR swizzle bit"):
            XorSwizzle(bad)
