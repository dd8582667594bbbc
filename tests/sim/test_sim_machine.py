"""layoutsim.sim: registers, loads and stores of every width, masks, ldmatrix/stmatrix, mma data
movement over the whole catalog, wgmma with shared-memory descriptors, traces."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import layoutsim
from layoutsim.sim import Machine, Warp, Warpgroup, regs
from layoutsim.smem import Descriptor
from sim_exact import encode, exact_mma, stable_seed


# ------------------------------------------------------------------ registers and mov
def test_mov_and_reg_keep_32_raw_bits():
    w = Warp("sm_90")
    w.mov("r0", -1)
    w.mov(3, np.arange(32, dtype=np.uint32) * 0x01010101)
    w.mov("f", np.float32(1.5 + np.arange(32)).view(np.uint32))
    assert (w.reg("r0") == 0xFFFFFFFF).all()
    assert w.reg("r3")[5] == 0x05050505
    assert (w.reg("f").view(np.float32) == 1.5 + np.arange(32)).all()
    assert w.reg("r0").dtype == np.uint32
    assert w.registers() == ["r0", "r3", "f"]
    assert [e.op for e in w.trace] == ["mov.b32"] * 3


def test_thread_indices():
    g = Warpgroup("sm_90")
    assert g.threads == 128 and (g.lane == np.arange(128) % 32).all() and (g.warp_id == np.arange(128) // 32).all()
    w = Warp("gfx1201", wave=64)
    assert w.threads == 64 and w.smem.size == 64 << 10
    assert Warp("sm_90").smem.size == 227 << 10 and Warp("sm_80").smem.size == 163 << 10


# ------------------------------------------------------------------ loads and stores
@pytest.mark.parametrize("bits", [8, 16, 32, 64, 128])
def test_global_load_every_width(bits):
    nb = bits // 8
    data = np.arange(32 * nb * 2, dtype=np.uint32).astype(np.uint8) * 7
    w = Warp("sm_90")
    w.global_alloc("g", data)
    offs = ((np.arange(32) * 5) % 32) * nb                 # permuted lanes
    nw = max(1, bits // 32)
    dst = regs("v", nw) if nw > 1 else "v"
    w.ld_global(dst, "g", offs, bits=bits)
    raw = data[offs[:, None] + np.arange(nb)]
    raw = np.concatenate([raw, np.zeros((32, max(0, 4 - nb)), np.uint8)], axis=1)
    want = raw.view("<u4")
    got = np.stack([w.reg(n) for n in (dst if nw > 1 else [dst])], axis=1)
    assert (got == want).all()
    assert w.trace[-1].op == {8: "ld.global.u8", 16: "ld.global.u16", 32: "ld.global.b32",
                              64: "ld.global.v2.b32", 128: "ld.global.v4.b32"}[bits]


@pytest.mark.parametrize("bits", [8, 16, 32, 64, 128])
def test_shared_store_then_load_every_width(bits):
    nb, nw = bits // 8, max(1, bits // 32)
    w = Warp("sm_90")
    src = regs("s", nw)
    for j, n in enumerate(src):
        w.mov(n, (np.arange(32, dtype=np.uint64) * 0x10203 + j * 0x9E3779B9) & 0xFFFFFFFF)
    offs = np.arange(32)[::-1] * nb + 64
    w.st_shared(offs, src if nw > 1 else src[0], bits=bits)
    # memory holds the low nb bytes of each lane's words, little-endian
    words = np.stack([w.reg(n) for n in src], axis=1).astype("<u4")
    want = words.view(np.uint8)[:, :nb]
    assert (w.smem[offs[:, None] + np.arange(nb)] == want).all()
    w.ld_shared(regs("l", nw), offs, bits=bits)
    for j in range(nw):
        mask = 0xFFFFFFFF if bits >= 32 else (1 << bits) - 1
        assert (w.reg(f"l{j}") == (w.reg(src[j]) & mask)).all()


def test_masked_load_and_store_touch_only_active_lanes():
    w = Warp("sm_90")
    w.global_alloc("g", np.arange(64, dtype=np.uint32) + 100)
    w.mov("r", 7)
    w.ld_global("r", "g", 4 * w.lane, mask=w.lane % 2 == 0)
    assert (w.reg("r")[0::2] == 100 + np.arange(0, 32, 2)).all() and (w.reg("r")[1::2] == 7).all()
    # inactive lanes' addresses are not checked (here far out of range)
    w.st_global("g", np.where(w.lane < 4, 4 * w.lane, 1 << 40), "r", mask=0b1111)
    g = w.global_array("g")
    assert list(g[:4]) == [100, 7, 102, 7] and (g[4:] == np.arange(4, 64) + 100).all()
    assert w.trace[-1].active == 4


def test_global_array_roundtrip_keeps_dtype_and_shape():
    w = Warp("sm_90")
    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    w.global_alloc("a", a)
    assert w.global_array("a").dtype == np.float16 and (w.global_array("a") == a).all()
    assert w.global_array("a", np.uint16).shape == (12,)


@given(st.lists(st.integers(0, 255), min_size=32, max_size=32, unique=True),
       st.sampled_from([8, 16, 32, 64, 128]))
def test_store_load_roundtrip_distinct_addresses(slots, bits):
    nb, nw = bits // 8, max(1, bits // 32)
    w = Warp("sm_90", smem_bytes=256 * 16)
    rng = np.random.default_rng(len(slots) + bits)
    src = regs("s", nw)
    for n in src:
        w.mov(n, rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32))
    offs = np.array(slots) * nb
    w.st_shared(offs, src, bits=bits) if nw > 1 else w.st_shared(offs, src[0], bits=bits)
    w.ld_shared(regs("d", nw), offs, bits=bits)
    mask = 0xFFFFFFFF if bits >= 32 else (1 << bits) - 1
    for j in range(nw):
        assert (w.reg(f"d{j}") == (w.reg(src[j]) & mask)).all()


# ------------------------------------------------------------------ ldmatrix / stmatrix
def _ids_smem(w, n_halfs=4096):
    """Shared memory filled with 16-bit ids: the half at byte address a holds a // 2."""
    w.smem_write(0, np.arange(n_halfs, dtype=np.uint16))


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches_the_ptx_rule(count, trans):
    """Independent statement of the PTX rule: lanes 8j..8j+7 give rows of matrix j; register j,
    half s of lane L holds row L/4, col 2(L%4)+s of matrix j (row and col swapped by .trans)."""
    w = Warp("sm_90")
    _ids_smem(w)
    pitch = 144                                         # bytes between rows (a padded tile)
    row_addr = (w.lane % 8) * pitch + (w.lane // 8) * 16 + 32
    name = f"ldmatrix.x{count}{'.trans' if trans else ''}"
    w.ldmatrix(name, "r", np.where(w.lane < 8 * count, row_addr, 1 << 30))   # ignored lanes: garbage
    for j in range(count):
        v = w.reg(f"r{j}")
        for L in range(32):
            for s in range(2):
                r, c = (L // 4, 2 * (L % 4) + s)
                if trans:
                    r, c = c, r
                addr = row_addr[8 * j + r] + 2 * c
                assert (v[L] >> (16 * s)) & 0xFFFF == addr // 2, (j, L, s)
    assert w.trace[-1].op == name


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_inverts_ldmatrix(count, trans):
    w = Warp("sm_90")
    _ids_smem(w)
    addr = (w.lane % 8) * 80 + (w.lane // 8) * 16
    t = ".trans" if trans else ""
    w.ldmatrix(f"ldmatrix.x{count}{t}", "r", addr)
    before = w.smem.copy()
    w.smem[:] = 0
    w.stmatrix(f"stmatrix.x{count}{t}", addr + 4096, "r")
    rows = (addr[:8 * count, None] + np.arange(16))
    assert (w.smem[rows + 4096] == before[rows]).all()
    assert w.smem.sum() == before[rows].sum()           # nothing else written


def test_ldmatrix_on_a_warpgroup_runs_every_warp():
    g = Warpgroup("sm_90")
    _ids_smem(g, 8192)
    addr = g.warp_id * 2048 + (g.lane % 8) * 128 + (g.lane // 8) * 16
    g.ldmatrix("ldmatrix.x4", "r", addr)
    w = Warp("sm_90")
    _ids_smem(w, 8192)
    for warp in range(4):
        w.ldmatrix("ldmatrix.x4", "q", addr[32 * warp:32 * warp + 32])
        for j in range(4):
            assert (g.reg(f"r{j}")[32 * warp:32 * warp + 32] == w.reg(f"q{j}")).all()


# ------------------------------------------------------------------ mma data movement
def _mma_names():
    return [e.name for e in layoutsim.listing(family="mma")]


def _random_operand(rng, fmt, shape):
    if fmt in ("s8", "s4"):
        lo, hi = (-8, 8) if fmt == "s4" else (-128, 128)
    elif fmt in ("u8", "u4"):
        lo, hi = 0, (16 if fmt == "u4" else 256)
    else:
        lo, hi = -4, 5
    return rng.integers(lo, hi, shape)


@pytest.mark.parametrize("name", _mma_names())
def test_mma_moves_fragments_through_the_catalog(name):
    """Every catalog mma: registers written from A/B/C (set_fragment), mma, D read back equals
    exact A B + C; the registers of D are what the catalog's D map says. (A round trip through
    the catalog: it cannot see a wrong map; test_fragment_registers_hold_the_ptx_elements and the
    H200 layout replay can.)"""
    ins = layoutsim.get(name)
    arch = "sm_90" if "sm_90" in ins.archs else ins.archs[-1]
    M, N, K = ins.shape
    rng = np.random.default_rng(stable_seed(name))
    f = ins.formats
    A, B, C = (_random_operand(rng, f[k], s) for k, s in (("a", (M, K)), ("b", (K, N)), ("c", (M, N))))
    w = Warp(arch, mma=exact_mma)
    ea, eb, ec = encode(f["a"], A), encode(f["b"], B), encode(f["c"], C)
    w.set_fragment(ins, "A", "a", ea)
    w.set_fragment(ins, "B", "b", eb)
    w.set_fragment(ins, "C", "c", ec)
    w.mma(name, d="d", a="a", b="b", c="c")
    got = w.fragment(ins, "D", "d")[0, 0]
    want = exact_mma(ins, ea, eb, ec)
    assert (got == want.view(np.dtype(f"u{want.dtype.itemsize}"))).all()
    # the same through fragment(): A's registers give A back
    assert (w.fragment(ins, "A", "a")[0, 0] == ea).all()


def test_mma_c_none_is_zero_and_d_may_alias_c():
    ins = layoutsim.get("mma.m16n8k8.f32.f16.f16.f32")
    rng = np.random.default_rng(1)
    A, B = rng.integers(-3, 4, (16, 8)), rng.integers(-3, 4, (8, 8))
    w = Warp("sm_90", mma=exact_mma)
    w.set_fragment(ins, "A", "a", encode("f16", A))
    w.set_fragment(ins, "B", "b", encode("f16", B))
    w.mma(ins, d="acc", a="a", b="b", c=None)
    w.mma(ins, d="acc", a="a", b="b", c="acc")
    got = w.fragment(ins, "D", "acc")[0, 0].view(np.float32)
    assert (got == 2 * (A @ B)).all()


def test_f64_mma_uses_register_pairs():
    ins = layoutsim.get("mma.m8n8k4.f64.f64.f64.f64")
    w = Warp("sm_90", mma=exact_mma)
    A = np.arange(32, dtype=np.float64).reshape(8, 4) / 4
    B = np.arange(32, dtype=np.float64).reshape(4, 8) - 3
    w.set_fragment(ins, "A", ["alo", "ahi"], A.view(np.uint64))
    w.set_fragment(ins, "B", ["blo", "bhi"], B.view(np.uint64))
    w.mma(ins, d=regs("d", 4), a=["alo", "ahi"], b=["blo", "bhi"], c=None)
    # lane L holds A[L/4][L%4]: low word in alo, high word in ahi
    L = 13
    bits = int(w.reg("alo")[L]) | (int(w.reg("ahi")[L]) << 32)
    assert np.uint64(bits).view(np.float64) == A[L // 4, L % 4]
    assert (w.fragment(ins, "D", regs("d", 4))[0, 0].view(np.float64) == A @ B).all()


# ------------------------------------------------------------------ wgmma
def _k_major_store(m, start, mat, elem_bits, lbo, sbo):
    """Host-side: write mat[mn, k] into shared memory as no-swizzle K-major core matrices
    (independent of layoutsim.smem.addresses: loops over core matrices)."""
    e = elem_bits // 8
    per = 16 // e
    raw = np.ascontiguousarray(mat).view(np.dtype(f"u{e}"))
    MN, K = raw.shape
    for cm in range(MN // 8):
        for ck in range(K // per):
            core = np.ascontiguousarray(raw[8 * cm:8 * cm + 8, per * ck:per * ck + per])   # 8 x 16 bytes
            m.smem_write(start + cm * sbo + ck * lbo, core)


@pytest.mark.parametrize("name", ["wgmma.m64n8k16.f32.f16.f16", "wgmma.m64n32k16.f16.f16.f16",
                                  "wgmma.m64n16k8.f32.tf32.tf32", "wgmma.m64n24k32.s32.s8.s8",
                                  "wgmma.m64n16k32.f32.e4m3.e5m2"])
@pytest.mark.parametrize("a_from", ["registers", "descriptor"])
def test_wgmma_register_a_and_descriptor_b(name, a_from):
    ins = layoutsim.get(name)
    M, N, K = ins.shape
    f = ins.formats
    rng = np.random.default_rng(7)
    A, B, C = (_random_operand(rng, f[k], s) for k, s in (("a", (M, K)), ("b", (K, N)), ("d", (M, N))))
    ea, eb, ec = encode(f["a"], A), encode(f["b"], B), encode(f["d"], C)
    g = Warpgroup("sm_90", mma=exact_mma)
    wb = layoutsim.formats.bits(f["b"])
    # B^T (N x K): core matrices along N first (lbo = N/8 cores apart), to exercise both offsets
    b_desc = Descriptor(start=1024, lbo=128 * (N // 8), sbo=128)
    _k_major_store(g, 1024, np.ascontiguousarray(eb.T), wb, b_desc.lbo, b_desc.sbo)
    if a_from == "descriptor":
        a_desc = Descriptor.dense(start=32768, mn=M, k=K, elem_bits=layoutsim.formats.bits(f["a"]))
        _k_major_store(g, 32768, ea, layoutsim.formats.bits(f["a"]), a_desc.lbo, a_desc.sbo)
        a_arg = a_desc.encode()                         # a raw 64-bit descriptor works too
    else:
        g.set_fragment(ins, "A", "a", ea)
        a_arg = "a"
    g.set_fragment(ins, "D", "d", ec)
    g.wgmma(name, d="d", a=a_arg, b=b_desc)
    got = g.fragment(ins, "D", "d")[0, 0]
    want = exact_mma(ins, ea, eb, ec)
    assert (got == want.view(np.dtype(f"u{want.dtype.itemsize}"))).all()
    assert "descriptor" in g.trace[-1].note
    # scale_d=False ignores D
    g.wgmma(name, d="d", a=a_arg, b=b_desc, scale_d=False)
    want0 = exact_mma(ins, ea, eb, np.zeros_like(ec))
    assert (g.fragment(ins, "D", "d")[0, 0] == want0.view(np.dtype(f"u{want0.dtype.itemsize}"))).all()


def test_descriptor_encode_decode():
    d = Descriptor(start=0x1230, lbo=256, sbo=1024)
    v = d.encode()
    assert v == (0x123 | (16 << 16) | (64 << 32))
    assert Descriptor.decode(v) == d
    assert Descriptor.dense(0, 64, 16, 16) == Descriptor(0, 128, 256)


# ------------------------------------------------------------------ traces and runs
def test_run_returns_result_and_the_trace_of_that_run():
    w = Warp("sm_90")
    w.mov("x", 1)

    def prog(m, k):
        m.st_shared(4 * m.lane, "x")
        m.ld_shared("y", 4 * m.lane)
        return k + 1
    run = w.run(prog, 41)
    result, trace = run
    assert result == 42 and [e.op for e in trace] == ["st.shared.b32", "ld.shared.b32"]
    assert len(w.trace) == 3
    text = trace.format(summary=False)
    assert "st.shared.b32" in text and "wavefronts" in text
    assert trace.as_json()[0]["op"] == "st.shared.b32"


def test_amd_spellings_in_the_trace():
    w = Machine("gfx1201", warps=1)
    w.mov("x", 5)
    w.st_shared(4 * w.lane, "x")
    w.ld_shared(regs("v", 4), 16 * w.lane, bits=128)
    w.global_alloc("g", np.zeros(64, np.uint8))
    w.st_global("g", w.lane, "x", bits=8)
    assert [e.op for e in w.trace] == ["mov.b32", "ds_write_b32", "ds_read_b128", "global_store_b8"]


# ------------------------------------------------------------------ bank costs in the trace



@pytest.mark.parametrize("bits", [8, 16, 32, 64, 128])
def test_shared_access_cost_is_the_bank_models(bits):
    # a round trip (the trace against the function it calls): the measured values are checked in
    # test_simulated_bank_cost_equals_the_h200_measurement
    from layoutsim import banks
    rng = np.random.default_rng(bits)
    nb = bits // 8
    w = Warp("sm_90")
    for n in regs("s", 4):
        w.mov(n, 0)
    for trial in range(5):
        offs = rng.integers(0, 512, 32) * nb
        mask = rng.random(32) < 0.8 if trial else None
        w.ld_shared(regs("d", max(1, bits // 32)) if bits > 32 else "d", offs, bits=bits, mask=mask)
        e = w.trace[-1]
        r = banks.analyze(e.op, [int(o) for o in offs], arch="sm_90",
                          **({} if mask is None else {"active": [bool(m) for m in mask]}))
        assert (e.wavefronts, e.ideal, e.conflicts) == (r.wavefronts, r.ideal, r.conflicts)
        assert e.per_warp == ((r.wavefronts, r.ideal, r.conflicts),)


def test_bank_cost_strides():
    w = Warp("sm_90")
    w.mov("x", 0)
    for stride, want in ((1, 1), (2, 2), (32, 32), (33, 1)):
        w.st_shared(4 * stride * w.lane, "x")
        assert w.trace[-1].wavefronts == want, stride


def test_warpgroup_cost_sums_its_warps_and_wave64_costs_two_halves():
    g = Warpgroup("sm_90")
    g.mov("x", 0)
    # warp w: stride 1 + w words -> 1, 2, 1, 4 wavefronts
    g.st_shared(4 * (1 + g.warp_id) * g.lane, "x")
    e = g.trace[-1]
    assert [p[0] for p in e.per_warp] == [1, 2, 1, 4] and e.wavefronts == 8
    # a warp with no active lane issues nothing
    g.st_shared(4 * g.lane, "x", mask=g.warp_id != 2)
    assert len(g.trace[-1].per_warp) == 3
    w = Warp("gfx1201", wave=64)
    w.mov("y", 0)
    w.ld_shared("z", 4 * w.lane)
    e = w.trace[-1]
    assert e.op == "ds_read_b32" and len(e.per_warp) == 2 and e.conflicts == 0


def test_ldmatrix_cost_uses_only_the_row_lanes():
    w = Warp("sm_90")
    w.smem_write(0, np.arange(4096, dtype=np.uint16))
    # x1: lanes 8-31 give wild addresses, which the hardware (and the bank model) ignore
    w.ldmatrix("ldmatrix.x1", "r", np.where(w.lane < 8, 144 * w.lane, 1 << 40))
    assert (w.trace[-1].wavefronts, w.trace[-1].conflicts) == (1, 0)
    w.ldmatrix("ldmatrix.x1", "r", 128 * w.lane % 4096)
    assert w.trace[-1].wavefronts == 8


# ------------------------------------------------------------------ values, not round trips
# The tests above go registers -> catalog -> registers: a wrong catalog map would pass them.
# These check the registers against the PTX ISA's own numbers, and the bank cost against what
# the H200 measured.
def test_fragment_registers_hold_the_ptx_elements():
    # PTX ISA 9.7.14.5.8 (m16n8k16 .f16 A): lane 13 (groupID 3, threadID_in_group 1) holds
    # a0,a1 = A[3][2], A[3][3] in its first .f16x2 register (a0 in the low half), a2,a3 =
    # A[11][2..3], a4,a5 = A[3][10..11], a6,a7 = A[11][10..11]
    A = (np.arange(16)[:, None] * 256 + np.arange(16)[None, :]).astype(np.uint16)   # A[r][c] = r<<8|c
    w = Warp("sm_90")
    w.set_fragment("mma.m16n8k16.f32.f16.f16.f32", "A", regs("a", 4), A)
    got = [int(w.reg(f"a{i}")[13]) for i in range(4)]
    assert got == [(3 << 8 | 3) << 16 | (3 << 8 | 2), (11 << 8 | 3) << 16 | (11 << 8 | 2),
                   (3 << 8 | 11) << 16 | (3 << 8 | 10), (11 << 8 | 11) << 16 | (11 << 8 | 10)]


def test_simulated_bank_cost_equals_the_h200_measurement():
    # tests/data/banks/bank_corpus.json: wavefronts that ncu measured on the H200 for 510 warp
    # accesses; the simulator's trace must give the same for the same addresses and lanes
    import json
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "data" / "banks" / "bank_corpus.json"
    assert path.exists(), f"{path} is missing: the H200 measurement this test replays"
    pats = [p for p in json.loads(path.read_text())["patterns"] if p.get("measured") is not None]
    assert len(pats) == 510
    bad = []
    for p in pats:
        w = Warp("sm_90")
        w.smem_write(0, np.zeros(1 << 16, np.uint8))
        op, offs = p["op"], np.asarray(p["offsets"], np.int64)
        mask = ((int(p["active"]) >> np.arange(32)) & 1).astype(bool)
        if op.startswith(("ldmatrix", "stmatrix")):
            count = int(op.split(".x")[1][0])
            for j in range(count):
                w.mov(f"m{j}", 0)
            if op.startswith("ldmatrix"):
                w.ldmatrix(op, regs("m", count), offs)
            else:
                w.stmatrix(op, offs, regs("m", count))
        else:
            direction, _, width = op.split(".", 2)
            bits = {"b8": 8, "b16": 16, "b32": 32, "v2.b32": 64, "v4.b32": 128}[width]
            names = regs("v", max(1, bits // 32)) if bits > 32 else "v"
            for n in ([names] if isinstance(names, str) else names):
                w.mov(n, 0)
            if direction == "ld":
                w.ld_shared(names, offs, bits=bits, mask=mask)
            else:
                w.st_shared(offs, names, bits=bits, mask=mask)
        if w.trace[-1].wavefronts != p["measured"]:
            bad.append((p["id"], op, w.trace[-1].wavefronts, p["measured"]))
    assert not bad, bad[:10]
