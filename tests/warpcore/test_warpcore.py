"""The warp-collective core (layoutsim.warpcore) against the catalog directly: every expected value
here is read from a FragmentMap table or an Addressing, never through layoutsim.packing."""
import numpy as np
import pytest

import layoutsim
from layoutsim import smem
from layoutsim.ptx import wmma as WM
from layoutsim.warpcore import ldmatrix, mma, registers, wgmma, wmma

RNG = np.random.default_rng(23)


def _table_words(frag, mats):
    """uint32 [batch, lanes, regs] holding mats [batch, m, r, c] (raw bits) where the table says."""
    t = frag.table
    out = np.zeros((mats.shape[0], frag.lanes, frag.regs), np.uint64)
    for lane in range(frag.lanes):
        for reg in range(frag.regs):
            for slot in range(frag.slots):
                m, r, c = t[lane, reg, slot]
                if m >= 0:
                    out[:, lane, reg] |= mats[:, m, r, c].astype(np.uint64) << np.uint64(slot * frag.elem_bits)
    return out.astype(np.uint32)


def _table_mats(frag, words):
    """raw bits [batch, m, r, c] read from words [batch, lanes, regs] where the table says."""
    mats = np.zeros((words.shape[0], *frag.shape), np.uint64)
    mask = (1 << frag.elem_bits) - 1
    for lane in range(frag.lanes):
        for reg in range(frag.regs):
            for slot in range(frag.slots):
                m, r, c = frag.table[lane, reg, slot]
                if m >= 0:
                    mats[:, m, r, c] = (words[:, lane, reg].astype(np.uint64) >> np.uint64(slot * frag.elem_bits)) & mask
    return mats


def _rows_for(ins, batch, image_bytes):
    """Distinct 16-byte-aligned row addresses [batch, count, 8]."""
    count = ins.addressing.lanes.shape[0]
    slots = RNG.permutation(image_bytes // 16)[: batch * count * 8]
    return (slots * 16).reshape(batch, count, 8).astype(np.int64)


@pytest.mark.parametrize("name", ["ldmatrix.x1", "ldmatrix.x2.trans", "ldmatrix.x4", "ldmatrix.x4.trans"])
def test_ldmatrix_gives_each_lane_the_words_its_fragment_map_says(name):
    ins = layoutsim.get(name)
    frag = ins.operand("R").fragment
    image = RNG.integers(0, 256, 4096, dtype=np.uint8)
    rows = _rows_for(ins, 3, image.size)
    words = ldmatrix.load(ins, image, rows)
    assert words.shape == (3, 32, frag.regs) and words.dtype == np.uint32
    for g in range(3):
        for lane in range(32):
            for reg in range(frag.regs):
                want = 0
                for slot in range(frag.slots):
                    m, r, c = frag.table[lane, reg, slot]
                    a = rows[g, m, r] + 2 * c                 # col c: the c-th b16 of the row
                    want |= (int(image[a]) | int(image[a + 1]) << 8) << (16 * slot)
                assert int(words[g, lane, reg]) == want, (g, lane, reg)


@pytest.mark.parametrize("name", ["stmatrix.x1", "stmatrix.x2", "stmatrix.x4.trans"])
def test_stmatrix_writes_each_element_where_the_map_and_the_addressing_say(name):
    ins = layoutsim.get(name)
    frag = ins.operand("R").fragment
    rows = _rows_for(ins, 2, 4096)
    words = RNG.integers(0, 2 ** 32, (2, 32, frag.regs), dtype=np.uint64).astype(np.uint32)
    idx, data = ldmatrix.store(ins, rows, words)
    image = np.zeros(4096, np.uint8)
    image[idx] = data
    for g in range(2):
        for lane in range(32):
            for reg in range(frag.regs):
                for slot in range(frag.slots):
                    m, r, c = frag.table[lane, reg, slot]
                    a = rows[g, m, r] + 2 * c
                    got = int(image[a]) | int(image[a + 1]) << 8
                    assert got == (int(words[g, lane, reg]) >> (16 * slot)) & 0xFFFF


def test_ldmatrix_row_lanes_are_the_addressing_lanes():
    ins = layoutsim.get("ldmatrix.x2")
    rows = _rows_for(ins, 2, 4096)
    O, M = ldmatrix.row_lanes(ins, rows)
    lanes = np.asarray(ins.addressing.lanes)
    assert M.sum() == 2 * lanes.size and not M[:, 16:].any()   # .x2: lanes 0-15 give the rows
    for m in range(lanes.shape[0]):
        for r in range(8):
            assert (O[:, lanes[m, r]] == rows[:, m, r]).all()
    assert (ldmatrix.address_lanes(ins) == M[0]).all()
    thr = np.arange(64).reshape(2, 32)
    assert (ldmatrix.rows(ins, thr) == thr[:, lanes]).all()


def _f16(shape):
    return RNG.standard_normal(shape).astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("name", ["mma.m16n8k16.f32.f16.f16.f32", "mma.m16n8k8.f16.f16.f16.f16"])
def test_mma_through_the_core_equals_layoutsim_mma_on_the_matrices(name):
    ins = layoutsim.get(name)
    M, N, K = ins.shape
    A, B = _f16((4, 1, M, K)), _f16((4, 1, K, N))
    cfmt = ins.formats["c"]
    C = (RNG.standard_normal((4, 1, M, N)).astype(np.float32 if cfmt == "f32" else np.float16)
         .view(np.uint32 if cfmt == "f32" else np.uint16))
    words = {k: _table_words(ins.operand(k).fragment, X) for k, X in (("A", A), ("B", B), ("C", C))}
    D = mma.run(ins, words, arch="sm_90")
    want = layoutsim.mma(ins, A[:, 0], B[:, 0], C[:, 0], arch="sm_90", raw=True)
    assert (_table_mats(ins.operand("D").fragment, D)[:, 0] == want).all()
    # a batch of four is four batches of one
    for i in range(4):
        one = mma.run(ins, {k: w[i:i + 1] for k, w in words.items()}, arch="sm_90")
        assert (one[0] == D[i]).all()
    # no C: C = 0
    zero = mma.run(ins, {"A": words["A"], "B": words["B"]}, arch="sm_90")
    want0 = layoutsim.mma(ins, A[:, 0], B[:, 0], np.zeros_like(C[:, 0]), arch="sm_90", raw=True)
    assert (_table_mats(ins.operand("D").fragment, zero)[:, 0] == want0).all()


def test_mma_result_of_the_wrong_shape_is_refused():
    ins = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32")
    words = {k: np.zeros((1, 32, registers.n_words(ins.operand(k).fragment)), np.uint32) for k in "ABC"}
    with pytest.raises(AssertionError, match="expected"):
        mma.run(ins, words, compute=lambda A, B, C: np.zeros((1, 8, 8), np.float32))


WG = "wgmma.m64n16k16.f32.f16.f16"


def test_wgmma_descriptor_operand_is_the_bytes_at_the_descriptor_addresses():
    ins = layoutsim.get(WG)
    image = RNG.integers(0, 256, 16384, dtype=np.uint8)
    for which, (mn, k) in (("A", (64, 16)), ("B", (16, 16))):
        for swz in ("none", "32B", "128B"):
            d = smem.Descriptor.dense(1024, mn, k, 16, swz)
            addr = smem.operand_addresses(ins, which, d)
            got = wgmma.gather(ins, which, image, addr)
            want = image[addr].astype(np.uint16) | image[addr + 1].astype(np.uint16) << 8
            assert got.dtype == np.uint16 and (got == want).all(), (which, swz)
            # batched over descriptor values: one table per warpgroup
            two = wgmma.addresses(ins, which, np.array([d.encode(), d.encode()], np.uint64))
            assert two.shape == (2, *addr.shape) and (two == addr).all()


def test_wgmma_with_register_a_scale_d_and_imm_scale_equals_layoutsim_mma():
    ins = layoutsim.get(WG)
    M, N, K = ins.shape
    A, B = _f16((2, M, K)), _f16((2, K, N))
    C = RNG.standard_normal((2, M, N)).astype(np.float32).view(np.uint32)
    aw = _table_words(ins.operand("A").fragment, A[:, None])
    dw = _table_words(ins.operand("D").fragment, C[:, None])
    assert (wgmma.register_a(ins, aw) == A).all()
    fd = ins.operand("D").fragment
    D = wgmma.run(ins, wgmma.register_a(ins, aw), B, dw, scale_d=np.array([True, False]), arch="sm_90")
    want = layoutsim.mma(ins, A, B, np.stack([C[0], np.zeros_like(C[1])]), arch="sm_90", raw=True)
    assert (_table_mats(fd, D)[:, 0] == want).all()
    neg = wgmma.run(ins, A, B, dw, neg_a=True, arch="sm_90")
    minus_a = (-A.view(np.float16)).view(np.uint16)
    assert (_table_mats(fd, neg)[:, 0] == layoutsim.mma(ins, minus_a, B, C, arch="sm_90", raw=True)).all()
    assert (wgmma.negate(np.array([0x3C00], np.uint16)) == 0xBC00).all()


def test_wmma_element_addresses_row_and_col():
    base, stride = np.array([0, 1000]), np.array([24, 40])
    row = wmma.element_addresses("row", 16, 8, base, stride, 2)
    col = wmma.element_addresses("col", 16, 8, base, stride, 2)
    assert row[1, 3, 5] == 1000 + (3 * 40 + 5) * 2
    assert col[1, 3, 5] == 1000 + (5 * 40 + 3) * 2
    assert row.shape == col.shape == (2, 16, 8)


def test_wmma_load_and_store_follow_the_measured_fragment_map():
    frag = WM.fragment("a", "row", "m16n16k16", "f16")
    unit = RNG.integers(0, 2 ** 16, 4096, dtype=np.uint64).astype(np.uint16)
    flat = wmma.element_addresses("row", 16, 16, np.array([0, 2048]), np.array([32, 16]), 2)
    words = wmma.load(frag, unit, flat, 2)
    mats = unit[flat // 2]
    assert (_table_mats(frag, words)[:, 0] == mats).all()
    pos = wmma.element_positions(frag)                        # lane 5's x[i] is A[pos[5, i]]
    assert pos.shape == (32, frag.regs * frag.slots, 2)
    out = np.zeros_like(unit)
    wmma.store(frag, out, flat, 2, words)
    assert (out[flat // 2] == mats).all()
    assert (wmma.register_positions(frag, 1) == frag.table[:, 1].reshape(-1, 3)).all()


def test_wmma_tile_sequence_equals_the_mma_sync_tiles_it_names():
    plan = WM.mma_plan("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32")
    A, B = _f16((2, 16, 16)), _f16((2, 16, 16))
    C = RNG.standard_normal((2, 16, 16)).astype(np.float32).view(np.uint32)
    got = wmma.tiled(plan, A, B, C, "sm_90")
    want = np.concatenate([layoutsim.mma(plan.tile, A, B[:, :, j:j + 8], C[:, :, j:j + 8], arch="sm_90", raw=True)
                           for j in (0, 8)], axis=2)
    assert (got == want).all()
