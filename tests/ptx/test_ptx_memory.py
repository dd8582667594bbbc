"""Memory instructions: ld/st of every width and state space (global, const, local, shared static
and dynamic, generic pointers through a non-inlined function), atomics with repeated addresses,
a cp.async pipeline with zero-fill, and faults that name the thread, the line and the address."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError

SRC = ptx("memory")


def test_widths_and_constant_memory():
    rng = np.random.default_rng(1)
    n = 64
    c = rng.integers(-128, 127, n).astype(np.int8)
    s = rng.integers(-3000, 3000, n).astype(np.int16)
    f = rng.standard_normal(n).astype(np.float32)
    d2 = rng.standard_normal(2 * n)
    f4 = rng.standard_normal(4 * n).astype(np.float32)
    i2 = rng.integers(-1 << 30, 1 << 30, 2 * n).astype(np.int32)
    outs = [np.zeros(n, np.int8), np.zeros(n, np.int16), np.zeros(n, np.float32), np.zeros(2 * n),
            np.zeros(4 * n, np.float32), np.zeros(2 * n, np.int32)]
    r = P.run(SRC, "widths", 2, 32, [c, s, f, d2, f4, i2] + outs)
    assert np.array_equal(r.buffers[6], (c.astype(np.int32) + 1).astype(np.int8))
    assert np.array_equal(r.buffers[7], (s.astype(np.int32) * 3).astype(np.int16))
    ctab = 2.0 ** np.arange(8, dtype=np.float32)           # the kernel's __constant__ table
    assert np.array_equal(r.buffers[8], f * ctab[np.arange(n) & 7])
    assert np.array_equal(r.buffers[9].reshape(n, 2), d2.reshape(n, 2)[:, ::-1])
    assert np.array_equal(r.buffers[10].reshape(n, 4), f4.reshape(n, 4)[:, ::-1])
    w = i2.reshape(n, 2)
    assert np.array_equal(r.buffers[11].reshape(n, 2), np.stack([w[:, 0] ^ w[:, 1], w[:, 0] + w[:, 1]], 1))
    assert r.buffers[0] is not c and np.array_equal(r.buffers[0], c)     # inputs unchanged


def test_local_array():
    inp = np.arange(40, dtype=np.int32) * 3 - 17
    r = P.run(SRC, "local_array", 1, 40, [inp, np.zeros(40, np.int32), np.int32(40)])
    i = np.arange(40)[:, None]
    k = np.arange(32)[None, :]
    buf = inp[(i + k) % 40] * k
    want = buf[np.arange(40)[:, None], (k * 7 + i) & 31].sum(1)
    assert np.array_equal(r.buffers[1], want.astype(np.int32))


def test_generic_pointers_to_shared_and_global():
    g = np.arange(64, dtype=np.float32) * 10
    r = P.run(SRC, "generic", 1, 64, [g, np.zeros(64, np.float32)])
    i = np.arange(64)
    s = i * 0.5
    a = s[(i + 1) % 64]                      # bump(s, i+1) returns the old value ...
    s_after = s + 1.0                        # ... and every slot is bumped once
    assert np.array_equal(r.buffers[0], (g + a).astype(np.float32))
    assert np.array_equal(r.buffers[1], (s_after + g).astype(np.float32))


def test_dynamic_shared_memory():
    x = np.arange(96, dtype=np.float32)
    r = P.run(SRC, "dynamic_shared", 1, 96, [x, np.zeros(96, np.float32)], shared_bytes=96 * 4)
    i = np.arange(96)
    assert np.array_equal(r.buffers[1], x[95 - i] * (i % 3 + 1))


def test_atomics_with_repeated_addresses():
    rng = np.random.default_rng(5)
    T = 128
    keys = rng.integers(0, 1 << 31, T).astype(np.uint32)
    args = [keys, np.zeros(16, np.uint32), np.full(4, 2**31 - 1, np.int32), np.full(4, -2**31, np.int32),
            np.full(4, 0xFFFFFFFF, np.uint32), np.zeros(4, np.uint32), np.zeros(4, np.uint32),
            np.zeros(2, np.float32), np.zeros(2), np.zeros(3, np.uint32), np.zeros(1, np.uint32),
            np.zeros(T + 1, np.uint32), np.zeros(16, np.uint32)]
    r = P.run(SRC, "atomics", 2, 64, args)
    b = r.buffers
    k = keys.astype(np.int64)
    assert np.array_equal(b[1], np.bincount(k % 16, minlength=16))
    for j in range(4):
        sel = k % 4 == j
        assert b[2][j] == min(2**31 - 1, k[sel].astype(np.int32).min())
        assert b[3][j] == k[sel].astype(np.int32).max()
        assert b[4][j] == np.bitwise_and.reduce((keys[sel] | 0x0F0F0000).astype(np.uint32))
        assert b[5][j] == np.bitwise_or.reduce(keys[sel] & 0x00FF00FF)
        assert b[6][j] == np.bitwise_xor.reduce(keys[sel])
    # float sums in thread order (the model's serialization); exact in double here
    for j in range(2):
        sel = k % 2 == j
        acc = np.float32(0)
        for v in (k[sel] % 1000).astype(np.float32) * np.float32(0.25):
            acc = np.float32(acc + v)
        assert b[7][j] == acc
        assert b[8][j] == (k[sel] * 0.125).sum()
    # atomicInc wraps at 37: count modulo 38
    assert np.array_equal(b[9], np.bincount(k % 3, minlength=3) % 38)
    assert b[10][0] == 1                               # only the first CAS sees 0: thread 0 wins
    assert sorted(b[11][:T].tolist() + [b[11][T]]) == [0] + list(range(T))   # exchange chain
    sh = np.zeros(16, np.int64)
    np.add.at(sh, k % 16, k & 0xFF)
    assert np.array_equal(b[12], sh)


@pytest.mark.parametrize("valid", [16, 12, 4, 0])
def test_cp_async_pipeline_zero_fill(valid):
    rng = np.random.default_rng(valid)
    tiles = 5
    x = rng.standard_normal(tiles * 32 * 4).astype(np.float32)
    r = P.run(SRC, "cp_async_pipeline", 1, 32, [x, np.zeros(32, np.float32), np.int32(tiles), np.int32(valid)])
    v = x.reshape(tiles, 32, 4).copy()
    v[tiles - 1, 31, valid // 4:] = 0                  # the tail copies only `valid` bytes
    i = np.arange(32)
    acc = np.zeros(32, np.float32)
    for t in range(tiles):
        w = v[t, (i + 5) & 31]
        acc = (acc + (w[:, 0] + np.float32(2) * w[:, 1] + np.float32(4) * w[:, 2] + np.float32(8) * w[:, 3]))
    assert np.array_equal(r.buffers[1], acc.astype(np.float32))
    cp = [s for s in r.instructions if s.text.startswith(("cp.async.ca", "cp.async.cg")) and s.executions]
    # each tile is 32 lanes x 16 contiguous bytes: 4 wavefronts of shared writes (LDGSTS), whether
    # the last lane's copy runs on its own path or not
    assert cp and all(s.kind == "ldgsts" for s in cp)
    assert sum(s.wavefronts for s in cp) == 4 * tiles + (len(cp) > 1 and valid < 16)


def test_byte_stores_to_shared():
    x = np.arange(128, dtype=np.uint8) * 3
    r = P.run(SRC, "bytes_shared", 1, 32, [x, np.zeros(32, np.uint32)])
    b = x[np.arange(128) ^ 5]
    words = b.view(np.uint32)
    assert np.array_equal(r.buffers[1], words[(np.arange(32) * 9) & 31])
    st = [s for s in r.instructions if s.text.startswith("st.shared.u8")]
    assert st and all(s.kind == "st" for s in st)


def test_out_of_bounds_read_names_thread_line_and_address():
    x = np.arange(10, dtype=np.float32)
    idx = np.arange(32, dtype=np.int32) % 10
    idx[13] = 12                                        # 2 floats past the end
    out = np.full(32, -1, np.float32)
    with pytest.raises(P.PtxFault) as e:
        P.run(SRC, "gather", 1, 32, [x, idx, out])
    msg = str(e.value)
    assert "lane 13" in msg and "ld.global" in msg and "memory.cu" in msg
    assert "+48 bytes from the start of argument 0 (40 bytes)" in msg
    assert e.value.run is not None and np.array_equal(e.value.run.buffers[2], out)   # nothing stored


def test_misaligned_vector_load_faults():
    x = np.arange(200, dtype=np.float32)
    r = P.run(SRC, "misaligned", 1, 32, [x, np.zeros(32, np.float32), np.int32(4)])
    assert r.buffers[1][0] == 4 + 5 + 6 + 7
    with pytest.raises(P.PtxFault, match=r"not 16-byte aligned.*misaligned address"):
        P.run(SRC, "misaligned", 1, 32, [x, np.zeros(32, np.float32), np.int32(2)])


def test_bad_arguments():
    x = np.zeros(4, np.float32)
    with pytest.raises(LayoutsimError, match=r"takes 3 parameter\(s\) \(.u64, .u64, .u64\); 2"):
        P.run(SRC, "gather", 1, 32, [x, x])
    with pytest.raises(LayoutsimError, match=r"argument 2 .*array is passed as a 64-bit pointer; this parameter is 4"):
        P.run(SRC, "misaligned", 1, 32, [x, x, x])
    with pytest.raises(LayoutsimError, match=r"argument 2 .*int64 is 8 bytes; the parameter is 4"):
        P.run(SRC, "misaligned", 1, 32, [x, x, np.int64(3)])
    with pytest.raises(LayoutsimError, match=r"argument 2 .*float32 given for a .u32 parameter"):
        P.run(SRC, "misaligned", 1, 32, [x, x, np.float32(3)])
    with pytest.raises(LayoutsimError, match="kernel 'gathr' is not in the PTX .did you mean: gather"):
        P.run(SRC, "gathr", 1, 32, [x, x, x])
    with pytest.raises(LayoutsimError, match="block .2048, 1, 1.: a CTA has at most 1024 threads"):
        P.run(SRC, "gather", 1, 2048, [x, x, x])
