"""Host packing and unpacking against the catalog: every operand, every kernel word layout."""
import numpy as np
import pytest

import layoutsim
from gpu_check import families as F
from gpu_check.families import e2e, wgmma
from layoutsim import formats as V
from layoutsim.isa import moves
from layoutsim.packing import pack, replica_disagreements, slot_values, unpack, words_per_lane

RNG = np.random.default_rng(7)


def _rand_bits(frag, n):
    w = frag.elem_bits
    hi = (1 << w) if w < 64 else (1 << 63)
    return RNG.integers(0, hi, size=(n, *frag.shape), dtype=np.uint64 if w == 64 else np.int64).astype(np.uint64)


def _entries():
    out = [e for e in layoutsim.listing() if e.family != "wgmma"]
    out += [layoutsim.lookup(n) for n in wgmma.DEFAULT]
    return out


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e.name)
def test_pack_unpack_round_trip(entry):
    # a round trip (pack and unpack read the same table): no proof of a map; the values are in
    # test_pack_puts_the_ptx_elements_in_the_ptx_registers and the H200 layout replay
    inst = entry.instruction()
    for name, op in inst.operands.items():
        f = op.fragment
        m = _rand_bits(f, 3)
        words = pack(f, m)
        assert words.shape == (3, f.lanes, words_per_lane(f))
        assert np.array_equal(unpack(f, words), m), name
        assert not replica_disagreements(f, words)
        # every element lands in exactly the (lane, reg, slot) the table names
        vals = slot_values(f, words)
        for lane, reg, slot, mat, r, c in f.entries()[:: max(1, len(f.entries()) // 50)]:
            assert vals[1, lane, reg, slot] == m[1, mat, r, c]


def test_f64_registers_are_two_words_low_first():
    f = layoutsim.get("mma.m8n8k4.f64.f64.f64.f64").operands["A"].fragment
    m = np.zeros((1, 1, 8, 4), np.uint64)
    m[0, 0, 0, 0] = 0x0123456789ABCDEF
    w = pack(f, m)
    lane = f.who_holds(0, 0)[0][0]
    assert w[0, lane, 0] == 0x89ABCDEF and w[0, lane, 1] == 0x01234567


def test_packed_slots_follow_the_bit_ranges():
    f = layoutsim.get("mma.m16n8k32.s32.s8.s8.s32").operands["A"].fragment
    m = np.zeros((1, 1, 16, 32), np.uint64)
    lane, reg, slot = f.who_holds(3, 5)[0]
    m[0, 0, 3, 5] = 0xAB
    w = pack(f, m)
    assert w[0, lane, reg] == 0xAB << (8 * slot)


@pytest.mark.parametrize("name", ["mma.m16n8k16.f32.f16.f16.f32", "mma.m16n8k64.s32.s4.u4.s32",
                                  "mma.m16n8k16.f64.f64.f64.f64", "wgmma.m64n8k16.f32.f16.f16",
                                  "wgmma.m64n24k32.s32.s8.u8", "wgmma.m64n256k8.f32.tf32.tf32"])
def test_spec_input_words_round_trip(name):
    inst = layoutsim.get(name)
    spec = F.specs_for(inst)[0]
    m, n, k = inst.shape
    fa, fb, fc = (inst.formats[x] for x in "abc") if "c" in inst.formats else (inst.formats["a"], inst.formats["b"], inst.formats["d"])
    a = RNG.integers(0, 1 << min(V.bits(fa), 62), size=(4, m, k)).astype(np.uint64)
    b = RNG.integers(0, 1 << min(V.bits(fb), 62), size=(4, k, n)).astype(np.uint64)
    c = RNG.integers(0, 1 << min(V.bits(fc), 62), size=(4, m, n)).astype(np.uint64)
    inp = spec.pack_inputs(a, b, c)
    assert inp.shape == (4, spec.in_words) and inp.dtype == np.uint32
    a2, b2, c2 = spec.unpack_inputs(inp)
    assert np.array_equal(a2, a) and np.array_equal(b2, b) and np.array_equal(c2, c)
    d_words = spec.pack_d(c)
    assert np.array_equal(spec.unpack_d(d_words.reshape(4, -1)), c)


def test_wgmma_b_image_follows_the_descriptor():
    from layoutsim.smem import Descriptor
    spec = wgmma.WgmmaSpec(layoutsim.get("wgmma.m64n32k16.f32.f16.f16"))
    d = Descriptor.decode(spec.desc_template)
    assert d.start == 0 and d.lbo == 128 and d.sbo == 256 + wgmma.B_PAD_BYTES and d.swizzle == "none"
    addr = spec.b_addresses                       # [K, N] byte addresses
    assert len(np.unique(addr)) == addr.size
    assert addr.max() + 2 <= spec.b_image_bytes and spec.b_image_bytes % 16 == 0
    # core matrix: 8 rows (n) of 16 contiguous bytes (8 k values)
    assert addr[1, 0] - addr[0, 0] == 2 and addr[0, 1] - addr[0, 0] == 16
    assert addr[8, 0] - addr[0, 0] == d.lbo and addr[0, 8] - addr[0, 0] == d.sbo
    assert spec.aux.tolist() == [spec.desc_template & 0xFFFFFFFF, spec.desc_template >> 32]


def test_ldmatrix_plans_are_derived_from_the_catalog():
    inst = layoutsim.get("mma.m16n8k16.f16.f16.f16.f16")
    ld, origins = moves.find(inst.operands["A"].fragment, "ldmatrix")
    assert ld.name == "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    assert origins == [(0, 0), (8, 0), (0, 8), (8, 8)]
    ld, origins = moves.find(inst.operands["B"].fragment, "ldmatrix")
    assert ld.name.endswith("x2.trans.shared.b16") and origins == [(0, 0), (8, 0)]
    st, origins = moves.find(inst.operands["D"].fragment, "stmatrix")
    assert st.name == "stmatrix.sync.aligned.m8n8.x2.shared.b16" and origins == [(0, 0), (8, 0)]
    assert moves.find(layoutsim.get("mma.m16n8k32.s32.s8.s8.s32").operands["A"].fragment, "ldmatrix") is None


def test_e2e_words_round_trip():
    inst = layoutsim.get("mma.m16n8k16.f16.f16.f16.f16")
    spec = e2e.E2eSpec(inst)
    a = V.encode_exact("f16", RNG.integers(-3, 4, size=(2, 16, 16)))
    b = V.encode_exact("f16", RNG.integers(-3, 4, size=(2, 16, 8)))
    c = V.encode_exact("f16", RNG.integers(-3, 4, size=(2, 16, 8)))
    inp = spec.pack_inputs(a, b, c)
    a2, b2, c2 = spec.unpack_inputs(inp)
    assert np.array_equal(a2, a) and np.array_equal(b2, b) and np.array_equal(c2, c)
    # every lane address is a 16-byte aligned row inside the region
    lane = inp[:, spec.region_words:].reshape(2, 32, spec.lane_in)
    assert (lane % 16 == 0).all() and (lane < e2e.REGION_BYTES).all()


@pytest.mark.parametrize("fmt", ["f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2", "s8", "u8", "s4", "u4", "s32"])
def test_values_round_trip(fmt):
    vals = np.arange(-4, 5) if fmt not in ("u8", "u4") else np.arange(0, 9)
    raw = V.encode_exact(fmt, vals)
    assert np.array_equal(V.decode(fmt, raw), vals)
    if fmt == "f64":
        return                                   # every float64 value is exact in f64
    with pytest.raises(ValueError):
        V.encode_exact(fmt, np.array([0.1 if fmt not in ("s8", "u8", "s4", "u4", "s32") else 1 << 40]))


def test_show_prints_hex_and_value():
    assert V.show("f32", 0x41200000) == "0x41200000 (10.0)"
    assert V.show("f16", 0x3C00) == "0x3c00 (1.0)"
    assert V.show("s32", 0xFFFFFFFF) == "0xffffffff (-1)"
    assert V.show("s4", 0xF) == "0xf (-1)"


# The round trips above cannot see a wrong map (pack and unpack read the same table). These put
# known elements in and compare the 32-bit words with the PTX ISA's numbers.
def test_pack_puts_the_ptx_elements_in_the_ptx_registers():
    # PTX ISA 9.7.14.5.8 (m16n8k16 .f16 A): lane 13 = groupID 3, threadID_in_group 1; its four
    # .f16x2 registers hold (A[3][2], A[3][3]), (A[11][2], A[11][3]), (A[3][10], A[3][11]),
    # (A[11][10], A[11][11]), the lower-numbered element in the low half
    f = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32").operands["A"].fragment
    m = (np.arange(16)[:, None] * 256 + np.arange(16)[None, :]).astype(np.uint64)[None, None]
    w = pack(f, m)[0, 13]
    assert [int(x) for x in w] == [0x03030302, 0x0B030B02, 0x030B030A, 0x0B0B0B0A]
    # PTX ISA 9.7.14.5.10 (m16n8k32 .s8 A): lane 0 register a0..a3 = A[0][0..3], bytes low first;
    # register 1 = A[8][0..3]
    f = layoutsim.get("mma.m16n8k32.s32.s8.s8.s32").operands["A"].fragment
    m = ((np.arange(16)[:, None] << 4) ^ np.arange(32)[None, :]).astype(np.uint64)[None, None] & 0xFF
    w = pack(f, m)[0, 0]                        # element (r, c) = (r << 4) ^ c: row 8 is 0x80..
    assert int(w[0]) == 0x03020100 and int(w[1]) == 0x83828180
