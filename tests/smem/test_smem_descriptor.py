"""wgmma matrix descriptors (layoutsim.smem): the 64-bit value and the address of every element.

Expected values come from the vendor documents, written out here independently of the model:
  * the bit positions of PTX ISA 9.7.15.5.1.2.2 'Matrix Descriptor Format';
  * CuTe's canonical GMMA layouts, in uint128_t units, from make_gmma_desc
    (cute/atom/mma_traits_sm90_gmma.hpp), evaluated with a small CuTe-style layout function, and
    Swizzle<B,4,3> applied to the byte address (B = 0, 1, 2, 3 for none, 32B, 64B, 128B);
  * the swizzle figures' rule (chunk c of row r of a 128B atom is stored at chunk c ^ (r % 8)).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.smem import Descriptor, Reading, addresses, candidate_readings, operand_addresses

F16 = "wgmma.m64n128k16.f32.f16.f16"


# ---- the 64-bit value ----------------------------------------------------------------------
def test_fields_sit_where_the_ptx_table_puts_them():
    d = Descriptor(start=0x12340, lbo=0x50, sbo=0x2000, swizzle="64B", base_offset=5)
    v = d.encode()
    assert v & 0x3FFF == 0x1234                       # bits 0-13: start >> 4
    assert (v >> 16) & 0x3FFF == 0x5                  # bits 16-29: LBO >> 4
    assert (v >> 32) & 0x3FFF == 0x200                # bits 32-45: SBO >> 4
    assert (v >> 49) & 7 == 5                         # bits 49-51: base offset
    assert v >> 62 == 2                               # bits 62-63: 2 = 64B
    assert {n: Descriptor(0, swizzle=n).encode() >> 62 for n in ("none", "128B", "64B", "32B")} == \
        {"none": 0, "128B": 1, "64B": 2, "32B": 3}
    assert Descriptor(start=0x400, lbo=16, sbo=1024, swizzle="128B").encode() == 0x4000004000010040


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 64) - 1))
def test_every_64_bit_value_round_trips(v):
    d = Descriptor.decode(v)
    assert d.encode() == v
    assert d.start == (v & 0x3FFF) << 4 and d.lbo == ((v >> 16) & 0x3FFF) << 4
    assert Descriptor.of(v) == d and Descriptor.of(d) is d


@pytest.mark.parametrize("kw, text", [
    (dict(start=8), "multiple of 16"), (dict(start=1 << 18), "14-bit field"), (dict(start=0, lbo=-16), "multiple of 16"),
    (dict(start=0, base_offset=8), "0..7"), (dict(start=0, swizzle="96B"), "unknown swizzle mode"),
    (dict(start=0, swizzle=7), "valid 0 \\(none\\), 1 \\(128B\\)"), (dict(start=0, reserved=1), "only the unused bits"),
    (dict(start=1.5), "integer number of bytes"),
])
def test_bad_fields_are_one_line_errors(kw, text):
    with pytest.raises(LayoutsimError, match=text):
        Descriptor(**kw)


def test_bad_raw_values():
    for v in (-1, 1 << 64, "0x10", 1.0):
        with pytest.raises(LayoutsimError):
            Descriptor.decode(v)
    with pytest.raises(LayoutsimError, match="Descriptor"):
        Descriptor.of("b")


# ---- CuTe's canonical layouts ------------------------------------------------------------------
def _cute(shape, stride, coord):
    """CuTe layout evaluation for a hierarchical (shape, stride) and a flat coordinate per mode."""
    out = 0
    for s_mode, d_mode, c in zip(shape, stride, coord):
        s_mode = s_mode if isinstance(s_mode, tuple) else (s_mode,)
        d_mode = d_mode if isinstance(d_mode, tuple) else (d_mode,)
        for s, d in zip(s_mode, d_mode):              # colexicographic split of c over the sub-shape
            out += (c % s) * d
            c //= s
    return out


def _cute_address(mode_bits, major, start, lbo, sbo, e, mn, k):
    """make_gmma_desc's canonical layouts (in uint128_t units), then Swizzle<B,4,3> on bytes."""
    T = 16 // e
    L, S = lbo // 16, sbo // 16
    if major == "K":            # ((8,n),2):((W,SBO),LBO or 1)
        W = 1 << mode_bits
        chunk = _cute(((8, 64), 2), ((W, S), L if mode_bits == 0 else 1), (mn, k // T))
        inner = (k % T) * e
    else:                       # ((W,n),(8,k)):((1,LBO),(W,SBO)); INTERLEAVE ((1,n),(8,k)):((X,SBO),(1,LBO))
        W = 1 << mode_bits
        if mode_bits == 0:
            chunk = _cute(((1, 64), (8, 64)), ((0, S), (1, L)), (mn // T, k))
        else:
            chunk = _cute(((W, 64), (8, 64)), ((1, L), (W, S)), (mn // T, k))
        inner = (mn % T) * e
    a = start + 16 * chunk + inner
    if mode_bits:
        a ^= ((a >> 7) & ((1 << mode_bits) - 1)) << 4
    return a


MODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


@pytest.mark.parametrize("swizzle", list(MODES))
@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("elem_bits", [8, 16, 32])
def test_addresses_are_cutes_canonical_layouts(swizzle, major, elem_bits):
    rng = np.random.default_rng(MODES[swizzle] * 10 + elem_bits)
    mn_n, k_n = 64, 256 // elem_bits
    for _ in range(6):
        start = 1024 * int(rng.integers(0, 64)) + 16 * int(rng.integers(0, 8))
        lbo, sbo = (16 * int(rng.integers(0, 512)) for _ in range(2))
        d = Descriptor(start, lbo, sbo, swizzle)
        got = addresses(d, mn_n, k_n, elem_bits, major)
        want = np.array([[_cute_address(MODES[swizzle], major, start, lbo, sbo, elem_bits // 8, m, k)
                          for k in range(k_n)] for m in range(mn_n)])
        assert np.array_equal(got, want), (swizzle, major, elem_bits, d)


def test_128B_k_major_rows_follow_the_ptx_figure():
    """PTX ISA 'K major 128B swizzling': row r of an atom stores its 16-byte chunk c at c ^ (r % 8)."""
    d = Descriptor(0x2000, 16, 1024, "128B")
    a = operand_addresses(F16, "A", d)                  # [64, 16] f16: k 0-7 chunk 0, k 8-15 chunk 1
    for r in range(64):
        for c in (0, 1):
            assert a[r, 8 * c] == 0x2000 + 1024 * (r // 8) + 128 * (r % 8) + 16 * (c ^ (r % 8))
    assert a[1, 0] == 0x2000 + 144 and a[7, 8] == 0x2000 + 896 + 96


def test_k_advance_inside_a_128B_row_reads_the_next_chunks():
    """CuTe's DescriptorIterator adds k-block offsets to the start address (32 bytes per k16 block):
    the XOR works on the address, so block j reads chunks 2j, 2j+1 of every row, swizzled."""
    tile = addresses(Descriptor(0x4000, 16, 1024, "128B"), 64, 64, 16)      # a 64x64 f16 tile
    for j in range(4):
        step = addresses(Descriptor(0x4000 + 32 * j, 16, 1024, "128B"), 64, 16, 16)
        assert np.array_equal(step, tile[:, 16 * j:16 * j + 16])


def test_b_is_k_by_n_and_a_is_m_by_k():
    d = Descriptor.dense(0, 128, 16, 16)
    assert operand_addresses(F16, "A", Descriptor.dense(0, 64, 16, 16)).shape == (64, 16)
    b = operand_addresses(F16, "B", d)
    assert b.shape == (16, 128)
    assert np.array_equal(b, addresses(d, 128, 16, 16).T)
    batch = operand_addresses(F16, "B", np.array([d.encode(), d.encode() + 64], np.uint64))
    assert batch.shape == (2, 16, 128) and np.array_equal(batch[1], b + 1024)


def test_transpose_is_for_16_bit_types_only():
    with pytest.raises(LayoutsimError, match=r"only for \.f16/\.bf16"):
        operand_addresses("wgmma.m64n64k8.f32.tf32.tf32", "B", 0, trans=True)
    with pytest.raises(LayoutsimError, match="not a wgmma"):
        operand_addresses("mma.m16n8k16.f32.f16.f16.f32", "A", 0)
    with pytest.raises(LayoutsimError, match="valid: A, B"):
        operand_addresses(F16, "D", 0)


def test_dense_tiles_cover_their_bytes_once():
    for e_bits, k in ((8, 32), (16, 16), (32, 8)):
        for sw in MODES:
            for major in (("K", "MN") if e_bits == 16 else ("K",)):
                d = Descriptor.dense(0x8000, 64, k, e_bits, sw, major)
                a = addresses(d, 64, k, e_bits, major)
                assert np.unique(a).size == a.size
                assert (a - 0x8000).max() < 64 * 32 * (8 if (sw != "none" and major == "K") else 1) + 8192


# ---- the readings ------------------------------------------------------------------------------
def test_documented_reading_ignores_lbo_for_swizzled_k_major():
    a = [addresses(Descriptor(0x1000, lbo, 1024, "64B"), 64, 16, 16) for lbo in (0, 16, 4096)]
    assert np.array_equal(a[0], a[1]) and np.array_equal(a[0], a[2])
    core = Reading(strides="core-matrix")
    b = [addresses(Descriptor(0x1000, lbo, 1024, "64B"), 64, 16, 16, reading=core) for lbo in (16, 4096)]
    assert not np.array_equal(b[0], b[1])


def test_base_offset_moves_the_pattern_by_128_bytes_per_unit():
    """'subtract': a pattern starting 128*b bytes past a repeat boundary; the start address and the
    rows stay, only the XOR phase changes (PTX: base offset = (pattern start >> 7) & 7)."""
    plain = addresses(Descriptor(0x4000 + 384, 16, 1024, "128B"), 64, 16, 16)
    based = addresses(Descriptor(0x4000 + 384, 16, 1024, "128B", base_offset=3), 64, 16, 16)
    aligned = addresses(Descriptor(0x4000, 16, 1024, "128B"), 64, 16, 16)
    assert not np.array_equal(plain, based)
    assert np.array_equal(based - 384, aligned)        # as if the tile sat on the boundary
    # no-swizzle ignores it (PTX: valid for every mode except no-swizzle)
    assert np.array_equal(addresses(Descriptor(0x4180, 128, 256, "none", 3), 64, 16, 16),
                          addresses(Descriptor(0x4180, 128, 256, "none"), 64, 16, 16))


def test_the_candidate_readings_differ_where_they_should():
    rs = candidate_readings()
    assert len(rs) == len(set(rs)) == 28
    d = np.array([Descriptor(0x4000 + 16 * i, 16 * (i + 1), 1024 + 16 * i, sw, i % 8).encode()
                  for i, sw in enumerate(["32B", "64B", "128B", "none"] * 4)], np.uint64)
    seen = {tuple(addresses(d, 64, 16, 16, major, r).reshape(-1)) for r in rs for major in ("MN",)}
    assert len(seen) > 8


def test_catalog_wgmma_every_input_type():
    for name in ("wgmma.m64n8k16.f32.bf16.bf16", "wgmma.m64n8k8.f32.tf32.tf32", "wgmma.m64n8k32.f32.e4m3.e5m2",
                 "wgmma.m64n8k32.s32.u8.s8"):
        ins = layoutsim.get(name)
        M, N, K = ins.shape
        e = layoutsim.formats.bits(ins.formats["a"]) // 8
        a = operand_addresses(ins, "A", Descriptor.dense(0, M, K, 8 * e, "32B"))
        assert a.shape == (M, K)
        assert (a[:, 1:16 // e] - a[:, :16 // e - 1] == e).all()      # a chunk holds 16/e contiguous elements
