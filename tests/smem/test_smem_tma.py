"""TMA boxes (layoutsim.smem.tma), the swizzle modes and the TMA-vs-descriptor check.

Expected values: cuda.h's cuTensorMapEncodeTiled rules (box dims 1..256, inner bytes a multiple
of 16 and at most the swizzle span) and the swizzle of CuTe Swizzle<B,4,3> on the address
(layoutsim.banks.address.Swizzle, which has its own tests against CuTe)."""
import numpy as np
import pytest

from layoutsim.banks import Swizzle, Tile
from layoutsim.errors import LayoutsimError
from layoutsim.smem import MODES, Descriptor, TensorMap, TmaReading, box_addresses, consistency, mode
from layoutsim.smem.swizzle import cxx_index, for_cute
from layoutsim.smem.tma import operand_box_coords, tile_mode

F16 = "wgmma.m64n128k16.f32.f16.f16"


def test_mode_table():
    assert [(m.name, m.desc_code, m.tma_code, m.span, m.repeat) for m in MODES.values()] == [
        ("none", 0, 0, 16, 128), ("32B", 3, 1, 32, 256), ("64B", 2, 2, 64, 512), ("128B", 1, 3, 128, 1024)]
    assert str(MODES["128B"].cute) == "Swizzle<3,4,3>" and str(MODES["32B"].cute_elements(2)) == "Swizzle<1,3,3>"
    assert for_cute(Swizzle(3, 3, 3), 2) is MODES["128B"] and for_cute(Swizzle(2, 2, 3), 4) is MODES["64B"]
    assert for_cute(Swizzle(3, 3, 3), 1) is None
    for text in ("128B", "128", "sw128", "SWIZZLE_128B", "B128"):
        assert mode(text) is MODES["128B"]
    with pytest.raises(LayoutsimError, match="numeric codes differ"):
        mode(1)
    with pytest.raises(LayoutsimError, match="valid: none, 32B, 64B, 128B"):
        mode("96B")


@pytest.mark.parametrize("name", list(MODES))
def test_swizzle_identities(name):
    m = MODES[name]
    x = np.arange(0, 8 * 1024, 16)
    y = m.apply(x)
    assert np.array_equal(m.apply(y), x)                                   # an involution
    assert np.array_equal(m.apply(x + m.repeat), y + m.repeat)             # periodic
    assert sorted(y[:m.repeat // 16]) == list(range(0, m.repeat, 16))      # permutes each repeat
    assert np.array_equal((y >> 7) << 7, (x >> 7) << 7) or m.bits == 0    # stays in its 128-byte line
    assert np.array_equal(m.apply(x + 3), y + 3)                           # bytes in a chunk stay put
    assert np.array_equal(m.apply(x, anchor=384), m.cute(x - 384) + 384)


def test_box_lands_densely_then_swizzled():
    t = TensorMap((64, 8), 2, "none")
    a = box_addresses(t, 0x400)
    assert a.shape == (8, 64) and np.array_equal(a, 0x400 + 2 * np.arange(512).reshape(8, 64))
    t = TensorMap((64, 8), 2, "128B")
    assert np.array_equal(box_addresses(t, 0x400), MODES["128B"].apply(a))
    t3 = TensorMap((16, 4, 3), 4, "64B")
    a3 = box_addresses(t3, 0)
    assert a3.shape == (3, 4, 16)
    assert a3[2, 1, 0] == MODES["64B"].apply((2 * 4 + 1) * 64)
    span = box_addresses(TensorMap((16, 4), 2, "128B"), 0, TmaReading(pitch="span"))
    assert span[1, 0] == 128 ^ 16                                         # rows padded to the span


@pytest.mark.parametrize("kw, text", [
    (dict(box=(0, 8), elem_bytes=2), "1..256"), (dict(box=(64, 257), elem_bytes=2), "1..256"),
    (dict(box=(4, 8), elem_bytes=2), "multiple of 16 bytes"),
    (dict(box=(64, 8), elem_bytes=2, swizzle="64B"), "at most 64 bytes"),
    (dict(box=(8,) * 6, elem_bytes=2), "rank must be 1..5"), (dict(box=(8, 8), elem_bytes=3), "valid 1, 2, 4"),
])
def test_tensor_maps_the_driver_rejects(kw, text):
    with pytest.raises(LayoutsimError, match=text):
        TensorMap(**kw)


def test_destination_alignment():
    with pytest.raises(LayoutsimError, match="128-byte aligned"):
        box_addresses(TensorMap((64, 8), 2), 0x410)


def test_tma_tile_and_descriptor_agree_for_the_canonical_tiles():
    for name, m in MODES.items():
        inner = 64 if m.bits == 0 else m.span // 2                 # f16 elements per row of the box
        box = TensorMap((inner, 64), 2, name)
        d = Descriptor.dense(0x8000, 64, 16, 16, name, "K")
        if m.bits:
            assert consistency(box, 0x8000, F16, "A", d) == []
            if m.span >= 64:                                          # the next k16 block: start + 32
                d2 = Descriptor(0x8000 + 32, d.lbo, d.sbo, name)
                assert consistency(box, 0x8000, F16, "A", d2, at=(16, 0)) == []
        wrong = Descriptor(0x8000, d.lbo, d.sbo, "none" if m.bits else "128B")
        assert consistency(box, 0x8000, F16, "A", wrong)


def test_mn_major_tile_from_a_2d_box():
    box = TensorMap((64, 16), 2, "128B")                   # 64 n x 16 k, rows of 128 bytes
    d = Descriptor.dense(0x2000, 64, 16, 16, "128B", "MN")
    assert consistency(box, 0x2000, "wgmma.m64n64k16.f32.f16.f16", "B", d, trans=True) == []


def test_operand_box_coords():
    assert operand_box_coords(3, 70, "K", (64, 128, 2)) == (6, 3, 1)
    assert operand_box_coords(3, 5, "MN", (64, 16), at=(1, 2)) == (4, 7)


def test_tile_spellings():
    t = Tile(64, 64, "f16", swizzle=Swizzle(3, 3, 3))
    assert tile_mode(t) is MODES["128B"] and tile_mode(Tile(64, 64, "f16", pad=8)) is None
    assert tile_mode(Tile(64, 64, "f16")) is MODES["none"]
    for tile in (t, Tile(64, 64, "f16", pad=8), Tile(32, 64, "f16", swizzle=Swizzle(3, 4, 3), unit="byte"),
                 Tile(16, 16, "f32", base=256, swizzle=Swizzle(1, 2, 3))):
        expr = cxx_index(tile).replace("/", "//")
        r, c = np.meshgrid(np.arange(tile.rows), np.arange(tile.cols), indexing="ij")
        assert np.array_equal(eval(expr, {"row": r, "col": c}) * tile.elem_bytes, tile.offset(r, c)), expr
    assert cxx_index(t) == "(row * 64 + col) ^ (((row * 64 + col) >> 3) & 0x38)"
