"""Warp-level instructions (shfl.sync in every mode and segment width, vote, match, redux,
activemask under divergence) and CTA barriers with reductions (bar.red via __syncthreads_count/
and/or); references computed lane by lane from the PTX ISA definitions."""
import numpy as np
import pytest
from ptx_kernels import in_out, ptx

import layoutsim.ptx as P

SRC = ptx("warp")


def shfl_ref(v, mode, b, width):
    """What CUDA's __shfl_sync/_up_sync/_down_sync/_xor_sync(mask, v, b, width) return, as the
    CUDA C++ Programming Guide ("Warp Shuffle Functions") states it for segments of `width` lanes
    (a second reading, beside the executor's PTX ISA 9.7.9.6 pseudocode):
    idx reads lane b % width of the caller's segment; up reads lane - b unless that leaves the
    segment at its start, down reads lane + b unless it leaves the segment at its end (then the
    caller keeps its own value); xor reads lane ^ b unless that lies in a later segment."""
    lane = np.arange(32)
    start = lane // width * width
    if mode == "idx":
        src, keep = start + np.asarray(b) % width, np.zeros(32, bool)
    elif mode == "up":
        src = lane - b
        keep = lane - start < b
    elif mode == "down":
        src = lane + b
        keep = lane - start + b >= width
    else:
        src = lane ^ b
        keep = src >= start + width
    return np.asarray(v, np.int64)[np.where(keep, lane, src)]


@pytest.mark.parametrize("width", [32, 16, 8, 4])
def test_shuffles(width):
    v = (np.arange(64, dtype=np.int32) * 37) ^ 0x5A5A
    r = P.run(SRC, "shuffles", 1, 64, [v, np.zeros(4 * 64, np.int32), np.int32(width)])
    out = r.buffers[1].reshape(4, 64)
    for w in range(2):
        lv = v[32 * w:32 * w + 32]
        idx = (np.arange(32 * w, 32 * w + 32) * 7 + 3) & 31
        for row, (mode, b) in enumerate((("idx", idx), ("up", 3), ("down", 5), ("bfly", 6))):
            assert np.array_equal(out[row, 32 * w:32 * w + 32], shfl_ref(lv, mode, b, width)), (mode, width)


def test_votes_match_and_reductions():
    rng = np.random.default_rng(3)
    v = rng.integers(-99, 100, 64).astype(np.int32)
    v[32:] = 4000 + (v[32:] % 7)                  # warp 1: match_all over v/1000 holds
    v[5] = 1500                                   # warp 0: it does not
    r = P.run(SRC, "votes", 1, 64, [v, np.zeros(10 * 64, np.uint32)])
    out = r.buffers[1].reshape(10, 64)
    for w in range(2):
        s = slice(32 * w, 32 * w + 32)
        lv = v[s].astype(np.int64)
        bits = lambda m: int(sum(1 << i for i in range(32) if m[i]))
        assert (out[0, s] == bits(lv > 0)).all()
        assert (out[1, s] == int((lv > -100).all())).all()
        assert (out[2, s] == int((lv > 90).any())).all()
        odd = lv & 1
        assert (out[3, s] == int((odd == odd[0]).all())).all()
        rem = np.fmod(lv, 5)                          # C's % truncates
        for i in range(32):
            assert out[4, 32 * w + i] == bits(rem == rem[i])
        q = np.trunc(lv / 1000)
        same = bool((q == q[0]).all())
        assert same == bool(w)
        assert (out[5, s] == (0xFFFFFFFF ^ 0x10000 if same else 0x20000)).all()
        assert (out[6, s] == int(lv.sum()) % (1 << 32)).all()
        assert (out[7, s] == np.uint32(np.int32(lv.max()))).all()
        assert (out[8, s] == np.bitwise_xor.reduce(v[s].astype(np.uint32))).all()
        oddm = bits(odd == 1)
        for i in range(32):
            want = oddm if odd[i] else bits((odd == 0) & (lv > 10))
            assert out[9, 32 * w + i] == want, (w, i)


def test_block_reduce_and_barrier_reductions():
    rng = np.random.default_rng(8)
    x = rng.standard_normal(3 * 256).astype(np.float32)
    r = P.run(SRC, "block_reduce", 3, 256, [x, np.zeros(3, np.float32), np.zeros(9, np.int32)])
    xs = x.reshape(3, 8, 32)
    for b in range(3):
        parts = []
        for w in range(8):
            v = xs[b, w].copy()
            for o in (16, 8, 4, 2, 1):                # butterfly, in the kernel's order
                v = (v + v[np.arange(32) ^ o]).astype(np.float32)
            parts.append(v[0])
        p = np.zeros(32, np.float32)
        p[:8] = parts
        for o in (16, 8, 4, 2, 1):                    # shfl_down: lanes past the end keep their value
            src = np.arange(32) + o
            p = (p + np.where(src < 32, p[np.minimum(src, 31)], p)).astype(np.float32)
        assert r.buffers[1][b] == p[0]
        xb = x[256 * b:256 * b + 256]
        assert list(r.buffers[2][3 * b:3 * b + 3]) == [int((xb > 0).sum()), int((xb > -3).all()),
                                                        int((xb > 2.5).any())]


def _constant_shuffles():
    """A kernel of shfl.sync forms with b, c and the membermask immediates (ops_warp's
    _shfl_constant), each storing the value and the predicate of every thread."""
    forms = [(m, b, w) for m in ("idx", "up", "down", "bfly") for b in (0, 1, 3, 6, 17, 31) for w in (32, 16, 8, 4)]
    body = []
    for i, (mode, b, width) in enumerate(forms):
        c = ((32 - width) << 8) | (0 if mode == "up" else 31)
        body += [f"shfl.sync.{mode}.b32 %r5|%p1, %r4, {b}, {c:#x}, -1;",
                 "selp.u32 %r6, 1, 0, %p1;",
                 f"st.global.v2.u32 [%rd4+{i * 512}], {{%r5, %r6}};"]
    src = in_out(".reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<6>;", """
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.s64 %rd3, %rd1, %rd3;
  ld.global.u32 %r4, [%rd3];
  mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd2, %rd3;
""" + "\n".join("  " + x for x in body))
    return forms, src


def test_shuffles_with_immediate_operands():
    forms, src = _constant_shuffles()
    v = (np.arange(64, dtype=np.int32) * 37) ^ 0x5A5A
    r = P.run(src, "k", 1, 64, [v, np.zeros(len(forms) * 128, np.uint32)])
    out = r.buffers[1].reshape(len(forms), 64, 2)
    for i, (mode, b, width) in enumerate(forms):
        for w in range(2):
            lv = v[32 * w:32 * w + 32]
            got = out[i, 32 * w:32 * w + 32]
            assert np.array_equal(got[:, 0], shfl_ref(lv, mode, b, width).astype(np.uint32)), (mode, b, width)
            lane = np.arange(32)
            start = lane // width * width
            inside = {"idx": np.ones(32, bool), "up": lane - b >= start, "down": lane + b < start + width,
                      "bfly": (lane ^ b) < start + width}[mode]
            assert np.array_equal(got[:, 1], inside), (mode, b, width)


def test_immediate_membermask_without_the_lane_faults():
    src = _constant_shuffles()[1].replace("-1;", "0xfffffffe;", 1)
    with pytest.raises(P.PtxFault, match="not in the membermask"):
        P.run(src, "k", 1, 64, [np.zeros(64, np.int32), np.zeros(96 * 128, np.uint32)])
