"""Bad input: one LayoutsimError naming the instruction (and lane and address where the hardware
would fault), and the machine state exactly as before that instruction."""
import re

import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.sim import Warp, Warpgroup, regs
from layoutsim import smem
from layoutsim.smem import Descriptor
from sim_exact import encode, exact_mma

MMA = "mma.m16n8k16.f32.f16.f16.f32"


def _warp():
    """A warp with some state everywhere: registers, shared memory, a global buffer, a trace."""
    w = Warp("sm_90", mma=exact_mma)
    w.global_alloc("g", np.arange(256, dtype=np.uint32))
    w.smem_write(0, np.arange(4096, dtype=np.uint16))
    for n in ("r0", "r1", "r2", "r3"):
        w.mov(n, w.lane * 3 + int(n[1]))
    ins = layoutsim.get(MMA)
    rng = np.random.default_rng(0)
    w.set_fragment(ins, "A", "a", encode("f16", rng.integers(-3, 4, (16, 16))))
    w.set_fragment(ins, "B", "b", encode("f16", rng.integers(-3, 4, (16, 8))))
    w.set_fragment(ins, "C", "c", encode("f32", rng.integers(-3, 4, (16, 8))))
    w.ld_shared("s", 4 * w.lane)
    return w


def _fails(w, fn, *patterns):
    before = w.snapshot()
    with pytest.raises(LayoutsimError) as e:
        fn(w)
    msg = str(e.value)
    assert "\n" not in msg
    for p in patterns:
        assert re.search(p, msg), (p, msg)
    assert w.snapshot() == before, "state changed by a failing instruction"
    return msg


bad_lane5 = lambda base, bad: np.where(np.arange(32) == 5, bad, base)


CASES = {
    # misaligned addresses: the hardware faults
    "ld.shared misaligned": (lambda w: w.ld_shared("x", bad_lane5(4 * w.lane, 22)),
                             [r"ld\.shared\.b32", r"lane 5", r"\b22\b", "aligned"]),
    "ld.shared.v4 misaligned": (lambda w: w.ld_shared(regs("x", 4), bad_lane5(16 * w.lane, 8), bits=128),
                                [r"ld\.shared\.v4\.b32", r"lane 5", r"0x8", "16-byte aligned"]),
    "st.shared.v2 misaligned": (lambda w: w.st_shared(bad_lane5(8 * w.lane, 4), ["r0", "r1"], bits=64),
                                [r"st\.shared\.v2\.b32", r"lane 5", "8-byte aligned"]),
    "st.global misaligned": (lambda w: w.st_global("g", bad_lane5(4 * w.lane, 6), "r0"),
                             [r"st\.global\.b32", r"lane 5", "aligned"]),
    "ld.global.u16 misaligned": (lambda w: w.ld_global("x", "g", bad_lane5(2 * w.lane, 3), bits=16),
                                 [r"ld\.global\.u16", r"lane 5"]),
    # out of range
    "st.shared past the end": (lambda w: w.st_shared(bad_lane5(4 * w.lane, 227 * 1024), "r0"),
                               [r"st\.shared\.b32", r"lane 5", str(227 * 1024), "outside shared memory"]),
    "ld.shared negative": (lambda w: w.ld_shared("x", bad_lane5(4 * w.lane, -4)),
                           [r"lane 5", r"-4", "outside"]),
    "st.global past the buffer": (lambda w: w.st_global("g", bad_lane5(4 * w.lane, 1024), "r0"),
                                  [r"st\.global\.b32", r"lane 5", "1024", "buffer 'g'"]),
    "ld.global.v4 at the end": (lambda w: w.ld_global(regs("x", 4), "g", bad_lane5(16 * w.lane, 1024), bits=128),
                                       [r"lane 5", "1024", "outside", "valid 0..1008"]),
    "unknown buffer": (lambda w: w.ld_global("x", "h", 4 * w.lane), [r"unknown global buffer 'h'", "g"]),
    # ldmatrix / stmatrix row addresses
    "ldmatrix row misaligned": (lambda w: w.ldmatrix("ldmatrix.x4", "m", bad_lane5(16 * w.lane, 8)),
                                [r"ldmatrix\.x4", r"lane 5", "16-byte aligned"]),
    "ldmatrix row out of range": (lambda w: w.ldmatrix("ldmatrix.x2.trans", "m", bad_lane5(16 * w.lane, 1 << 20)),
                                  [r"ldmatrix\.x2\.trans", r"lane 5", "outside"]),
    "stmatrix row out of range": (lambda w: w.stmatrix("stmatrix.x4", bad_lane5(16 * w.lane, -16), "r"),
                                  [r"stmatrix\.x4", r"lane 5"]),
    # registers
    "unknown source register": (lambda w: w.st_shared(4 * w.lane, "r9"), [r"unknown register 'r9'"]),
    "unknown mma register": (lambda w: w.mma(MMA, d="d", a="a", b="bb", c="c"), [r"unknown register 'bb0'"]),
    "too few registers": (lambda w: w.mma(MMA, d="d", a=["a0", "a1", "a2"], b="b", c="c"),
                          [r"needs 4 registers, got 3"]),
    "ldmatrix register count": (lambda w: w.ldmatrix("ldmatrix.x4", ["m0", "m1"], 16 * w.lane),
                                [r"needs 4 registers, got 2"]),
    "duplicate destination": (lambda w: w.ld_shared(["x", "y", "x", "z"], 16 * w.lane, bits=128),
                              [r"register x appears twice"]),
    "bad register name": (lambda w: w.mov(None, 1), [r"register None"]),
    "mov value too wide": (lambda w: w.mov("r0", 1 << 33), [r"does not fit in 32 bits"]),
    "mov float": (lambda w: w.mov("r0", np.float32(1.0)), [r"integer bits"]),
    # shapes that do not fit
    "wrong number of addresses": (lambda w: w.ld_shared("x", np.arange(16) * 4), [r"one address per thread \(32\)"]),
    "float addresses": (lambda w: w.ld_shared("x", np.arange(32) * 4.0), [r"addresses must be integers"]),
    "bad width": (lambda w: w.ld_shared("x", 4 * w.lane, bits=24), [r"width 24", "valid: 8, 16, 32, 64, 128"]),
    "bad mask": (lambda w: w.ld_shared("x", 4 * w.lane, mask=np.ones(31, bool)), [r"mask must be 32 booleans"]),
    "mask too wide": (lambda w: w.ld_shared("x", 4 * w.lane, mask=1 << 40), [r"beyond the 32 threads"]),
    "set_fragment shape": (lambda w: w.set_fragment(MMA, "A", "a", np.zeros((16, 8), np.uint16)),
                           [r"16x16", r"\(16, 8\)"]),
    "set_fragment too wide": (lambda w: w.set_fragment(MMA, "A", "a", np.full((16, 16), 1 << 16)),
                              [r"16-bit raw bits", "0..65535"]),
    "set_fragment signed": (lambda w: w.set_fragment(MMA, "A", "a", np.full((16, 16), -1)),
                            [r"view signed"]),
    # instructions
    "unknown instruction": (lambda w: w.mma("mma.m16n8k17.f32.f16.f16.f32", "d", "a", "b", "c"),
                            [r"unknown instruction"]),
    "instruction of another family": (lambda w: w.mma("ldmatrix.x4", "d", "a", "b", "c"),
                                      [r"ldmatrix instruction", "mma or wmma"]),
    "wgmma on a warp": (lambda w: w.wgmma("wgmma.m64n8k16.f32.f16.f16", "d", "a", Descriptor(0, 128, 256)),
                        [r"warpgroup of 128 threads", "Warpgroup"]),
    "mma numerics reject": (lambda w: w.mma(MMA, d="d", a="a", b="b", c="c"), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_raises_once_and_leaves_state(case):
    fn, patterns = CASES[case]
    w = _warp()
    if patterns is None:              # the numerics raise: the error is passed on, state kept
        def reject(*a, **k):
            raise LayoutsimError("C has an unsupported value")
        w._mma = reject
        patterns = [re.escape(layoutsim.get(MMA).name), "unsupported value"]
    _fails(w, fn, *patterns)


def test_instruction_the_arch_lacks():
    w = Warp("sm_80", mma=exact_mma)
    w.mov("z", 0)
    _fails(w, lambda w: w.mma("mma.m16n8k16.f64.f64.f64.f64", "d", "a", "b", "c"),
           r"not available on sm_80", "sm_90")
    _fails(w, lambda w: w.stmatrix("stmatrix.x4", 16 * w.lane, "z"), r"not available on sm_80")
    g = Warpgroup("sm_80", mma=exact_mma)
    _fails(g, lambda g: g.wgmma("wgmma.m64n8k16.f32.f16.f16", "d", "a", Descriptor(0, 128, 256)),
           r"not available on sm_80")
    amd = Warp("gfx1201")
    _fails(amd, lambda m: m.ldmatrix("ldmatrix.x4", "r", 16 * m.lane), r"ldmatrix", r"gfx1201")


def test_wgmma_descriptor_out_of_range_and_bad_fields():
    g = Warpgroup("sm_90", mma=exact_mma, smem_bytes=4096)
    ins = layoutsim.get("wgmma.m64n8k16.f32.f16.f16")
    g.set_fragment(ins, "A", "a", np.zeros((64, 16), np.uint16))
    g.set_fragment(ins, "D", "d", np.zeros((64, 8), np.uint32))
    _fails(g, lambda g: g.wgmma(ins, "d", "a", Descriptor(start=4000 // 16 * 16, lbo=128, sbo=256)),
           r"B descriptor", r"outside shared memory", "fault")
    # a 128B-swizzled B at 0xF80: its rows of 128 bytes run past the 4096 bytes
    bad = (1 << 62) | (0xF80 >> 4) | (64 << 32)
    msg = _fails(g, lambda g: g.wgmma(ins, "d", "a", bad), r"outside shared memory")
    # one line for this fault everywhere (desc check and render --desc give it too): B[k][n] of a
    # K-major 128B B is read at start + n * 128 + ..., so n = 1..7 (112 elements) lie past 0x1000
    assert msg == smem.operand_fault(ins, "B", bad, smem_bytes=4096)
    assert "puts B[0][1] at address 0x1000" in msg and "112 of 128 elements outside" in msg and "(4096 bytes: 0..0xfff;" in msg
    with pytest.raises(LayoutsimError, match="0..7"):
        Descriptor(0, 128, 256, swizzle="128B", base_offset=8)
    with pytest.raises(LayoutsimError, match="multiple of 16"):
        Descriptor(8, 128, 256)
    _fails(g, lambda g: g.wgmma(ins, "d", "a", "b"), r"Descriptor")
    _fails(g, lambda g: g.wgmma("wgmma.m64n8k8.f32.tf32.tf32", "d", "a", Descriptor(0, 128, 256), trans_b=True),
           r"only for \.f16/\.bf16")
    _fails(g, lambda g: g.wgmma(ins, "d", "a", Descriptor(0, 128, 256), trans_a=True), r"A is in registers")


def test_warpgroup_messages_name_thread_warp_and_lane():
    g = Warpgroup("sm_90")
    g.mov("x", 0)
    addr = np.where(g.tid == 37, 6, 4 * g.tid)
    _fails(g, lambda g: g.st_shared(addr, "x"), r"thread 37 \(warp 1, lane 5\)", r"address 6")


def test_partial_store_is_not_applied():
    """Lanes 0-4 have good addresses, lane 5 a bad one: nothing at all is written."""
    w = _warp()
    before = w.smem.copy()
    with pytest.raises(LayoutsimError):
        w.st_shared(bad_lane5(4 * w.lane + 8192, 1 << 30), "r0")
    assert (w.smem == before).all()


from hypothesis import given, strategies as st  # noqa: E402


@given(st.lists(st.integers(-64, 4200), min_size=32, max_size=32), st.sampled_from([8, 16, 32, 64, 128]),
       st.integers(0, (1 << 32) - 1))
def test_random_stores_either_apply_fully_or_not_at_all(offsets, bits, mask):
    """st.shared with arbitrary addresses on a 4 KiB shared memory: when any active lane's address
    is misaligned or out of range, nothing changes; otherwise exactly the active lanes' bytes do."""
    w = Warp("sm_90", smem_bytes=4096)
    nb, nw = bits // 8, max(1, bits // 32)
    src = regs("s", nw)
    for j, n in enumerate(src):
        w.mov(n, (w.lane.astype(np.uint64) * 0x01010101 + 0x10203 * j) & 0xFFFFFFFF)
    offs = np.array(offsets)
    act = np.array([(mask >> i) & 1 for i in range(32)], bool)
    ok = ~act | ((offs % nb == 0) & (offs >= 0) & (offs + nb <= 4096))
    before = w.snapshot()
    if ok.all():
        w.st_shared(offs, src if nw > 1 else src[0], bits=bits, mask=mask)
        want = before.smem.copy()
        data = np.stack([w.reg(n) for n in src], axis=1).astype("<u4").view(np.uint8)[:, :nb]
        for lane in np.flatnonzero(act):
            want[offs[lane]:offs[lane] + nb] = data[lane]
        assert (w.smem == want).all()
    else:
        with pytest.raises(LayoutsimError):
            w.st_shared(offs, src if nw > 1 else src[0], bits=bits, mask=mask)
        assert w.snapshot() == before


def test_unknown_register_lists_at_most_twelve_defined():
    from layoutsim.sim import Warp
    w = Warp("sm_90")
    for i in range(12):
        w.mov(f"q{i}", i)
    with pytest.raises(layoutsim.LayoutsimError) as e:
        w.st_shared(0, "zz")
    assert str(e.value).endswith("defined: " + ", ".join(f"q{i}" for i in range(12)))
    w.mov("q12", 0)
    with pytest.raises(layoutsim.LayoutsimError) as e:
        w.st_shared(0, "zz")
    assert str(e.value).endswith("defined: " + ", ".join(f"q{i}" for i in range(12)) + ", ...")


def test_set_fragment_reads_a_3d_array_as_groups_or_as_matrices():
    # [groups, rows, cols] for a one-matrix operand (two warps, each its own C), [matrices, rows,
    # cols] for a several-matrix operand (ldmatrix.x4's four 8x8 blocks, every warp the same)
    from layoutsim.sim import Machine
    m = Machine("sm_90", warps=2)
    c = np.arange(2 * 16 * 8, dtype=np.uint32).reshape(2, 16, 8)
    m.set_fragment(MMA, "C", "c", c)
    assert np.array_equal(m.fragment(MMA, "C", "c"), c[:, None])
    r = np.arange(4 * 8 * 8, dtype=np.uint16).reshape(4, 8, 8)
    m.set_fragment("ldmatrix.x4", "R", "r", r)
    got = m.fragment("ldmatrix.x4", "R", "r")
    assert got.shape == (2, 4, 8, 8) and (got == r).all()


def test_smem_read_of_nothing_and_of_negative_shapes():
    w = Warp("sm_90")
    assert w.smem_read(0, "uint32", 0).shape == (0,)
    assert w.smem_read(0, "uint16", (2, 0)).shape == (2, 0)
    with pytest.raises(LayoutsimError, match="smem_read: shape dimension"):
        w.smem_read(0, "uint32", -1)
