"""TMA boxes (layoutsim.smem.tma), the swizzle modes and the TMA-vs-descriptor check.

Expected values: cuda.h's cuTensorMapEncodeTiled rules (box dims 1..256, inner bytes a multiple
of 16 and at most the swizzle span), the swizzle of CuTe Swizzle<B,4,3> on the address
(layoutsim.address.Swizzle, which has its own tests against CuTe), and the H200 TMA corpus
(tests/data/descriptors/tma_sm_90.npz: span-wide rows when swizzled, the innermost coordinate on
16 bytes)."""
import numpy as np
import pytest

from layoutsim.banks import Swizzle, Tile
from layoutsim.errors import LayoutsimError
from layoutsim.smem import MODES, Descriptor, TensorMap, TmaReading, box_addresses, box_fault, consistency, mode
from layoutsim.smem.swizzle import cxx_index, for_cute
from layoutsim.smem.tma import box_coords, check_coords, coords_problem, operand_box_coords, tile_mode

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


def test_box_lands_row_by_row_then_swizzled():
    t = TensorMap((64, 8), 2, "none")
    a = box_addresses(t, 0x400)
    assert a.shape == (8, 64) and np.array_equal(a, 0x400 + 2 * np.arange(512).reshape(8, 64))
    t = TensorMap((64, 8), 2, "128B")
    assert np.array_equal(box_addresses(t, 0x400), MODES["128B"].apply(a))
    t3 = TensorMap((16, 4, 3), 4, "64B")
    a3 = box_addresses(t3, 0)
    assert a3.shape == (3, 4, 16)
    assert a3[2, 1, 0] == MODES["64B"].apply((2 * 4 + 1) * 64)


def test_a_swizzled_row_narrower_than_the_span_takes_a_whole_span():
    """Measured (tests/data/descriptors/tma_sm_90.npz, e.g. its box (16, 8) x 1 B in 32B mode at a
    1024-byte boundary: row 1 starts at byte 32, bytes 16..31 hold nothing of the box); without
    swizzle the rows stay dense. The old reading (pitch=dense) put row 1 at byte 16."""
    a = box_addresses(TensorMap((16, 8), 1, "32B"), 0x400)
    assert a[1, 0] == 0x400 + 32 and a[0, 15] == 0x400 + 15
    assert a[4, 0] == 0x400 + 4 * 32 + 16                                  # chunk 0 of row 4 XOR bit 7 -> 16
    assert box_addresses(TensorMap((16, 8), 1, "32B"), 0x400, TmaReading(pitch="dense"))[1, 0] == 0x400 + 16
    assert box_addresses(TensorMap((16, 8), 1, "none"), 0x400)[1, 0] == 0x400 + 16
    span = box_addresses(TensorMap((16, 4), 2, "128B"), 0)
    assert span[1, 0] == 128 ^ 16
    assert TensorMap((16, 4), 2, "128B").bytes() == 4 * 128 and TensorMap((16, 4), 2).bytes() == 4 * 32


def test_a_narrow_tma_box_is_the_dense_descriptor_tile():
    """Why the hardware pads: a k16 f16 slice of a 128B tile (32-byte rows) is what wgmma reads with
    the mode's dense descriptor (rows 128 bytes apart)."""
    for name in ("32B", "64B", "128B"):
        d = Descriptor.dense(0x8000, 64, 16, 16, name, "K")
        assert consistency(TensorMap((16, 64), 2, name), 0x8000, F16, "A", d) == []


@pytest.mark.parametrize("box, e, swizzle, coords", [
    ((16, 8), 1, "none", (3, 2)), ((8, 8), 2, "none", (4, 1)), ((32, 8), 4, "128B", (1, 1))])
def test_innermost_coordinate_off_16_bytes_is_refused(box, e, swizzle, coords):
    """The three boxes that faulted on the H200 (tests/data/descriptors/tma_sm_90.npz notes)."""
    t = TensorMap(box, e, swizzle)
    why = coords_problem(t, coords)
    assert why.startswith(f"TMA coordinate c0={coords[0]} x {e} B = {coords[0] * e} bytes") and "\n" not in why
    assert "multiple of 16 bytes" in why
    with pytest.raises(LayoutsimError, match="innermost coordinate must start on a multiple of 16 bytes"):
        check_coords(t, coords)


def test_box_coords_name_the_global_element_of_each_slot():
    t = TensorMap((16, 4, 2), 2)
    c = box_coords(t, (16, 3, 5))
    assert c.shape == (3, 2, 4, 16) and list(c[:, 1, 2, 3]) == [5 + 1, 3 + 2, 16 + 3]
    with pytest.raises(LayoutsimError, match="takes 3 coordinates"):
        box_coords(t, (16, 3))


def test_innermost_coordinate_on_16_bytes_is_fine():
    assert coords_problem(TensorMap((16, 8), 1), (16, 2)) is None          # the control that landed
    assert coords_problem(TensorMap((8, 8), 2), (-8, 5)) is None            # negative: out of bounds, filled
    check_coords(TensorMap((16, 8, 2), 4), (4, 0, 1))
    assert "takes 2 coordinates" in coords_problem(TensorMap((16, 8), 1), (16, 2, 0))
    assert "32-bit signed" in coords_problem(TensorMap((16, 8), 1), (16, 2**31))


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


# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": compute
# capability 9.0 gives a block at most 227 KB of shared memory.
SM90_BLOCK = 227 * 1024


def test_a_box_that_lands_past_shared_memory_faults():
    t = TensorMap((64, 64), 2, "128B")                     # 64 rows of 128 B = 8192 bytes
    last = SM90_BLOCK - 8192                               # 0x36c00: its last byte is 0x38bff
    assert int(box_addresses(t, last).max()) + 2 == SM90_BLOCK and box_fault(t, last) is None
    why = box_fault(t, last + 128)
    assert why == ("TMA destination 0x36c80: the 64x64 box of 2-byte elements (128B swizzle) lands on bytes up to "
                   "0x38c7f, outside shared memory (232448 bytes per block on sm_90: 0..0x38bff): the copy would "
                   "fault")
    with pytest.raises(LayoutsimError) as e:
        box_addresses(t, 0x38c00)                          # the audit's case: the box starts at the end
    assert str(e.value).startswith("TMA destination 0x38c00: ") and "\n" not in str(e.value)
    # the caller's shared-memory size (the PTX executor passes its CTA's)
    assert box_fault(t, 0, smem_bytes=8192) is None
    with pytest.raises(LayoutsimError, match=r"outside shared memory \(4096 bytes: 0..0xfff\)"):
        box_addresses(t, 0, smem_bytes=4096)
    with pytest.raises(LayoutsimError, match="outside shared memory"):
        consistency(t, 0, F16, "A", Descriptor.dense(0, 64, 16, 16, "128B"), smem_bytes=4096)


def test_a_narrow_swizzled_box_needs_its_span_wide_rows_inside():
    """Measured on the H200 (tma_sm_90.npz): a swizzled row takes a whole span-wide row, so a
    16 x 2 B = 32-byte box row in 128B mode occupies 128 bytes; 8 rows need 1024 bytes, not 256."""
    t = TensorMap((16, 8), 2, "128B")
    assert box_fault(t, SM90_BLOCK - 1024) is None
    # dst 0x38880: row 7 starts at 0x38c00, a 1024-byte boundary (no XOR), and takes 0x38c00-0x38c1f
    assert "lands on bytes up to 0x38c1f, outside" in box_fault(t, SM90_BLOCK - 1024 + 128)
    assert box_fault(TensorMap((16, 8), 2, "none"), SM90_BLOCK - 256) is None      # dense rows: 256 bytes
    with pytest.raises(LayoutsimError, match="not 128-byte aligned"):
        box_fault(t, 0x40)
