"""Launch options: CTAs in several processes (same outputs and counts as one), kernels with global
atomics kept in one process, and PTX compiled for sm_80 run as sm_80."""
import numpy as np
from ptx_kernels import ptx

import layoutsim.ptx as P

N = 64


def _transpose(**kw):
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    return x, P.run(ptx("transpose"), "transpose_conflicts", (2, 2), (32, 8),
                    [x, np.zeros((N, N), np.float32), np.int32(N)], **kw)


def test_jobs_give_the_same_run():
    x, one = _transpose()
    _, two = _transpose(jobs=2)
    assert np.array_equal(two.buffers[1], x.T)
    assert two.shared_wavefronts == one.shared_wavefronts
    assert [s.executions for s in two.instructions] == [s.executions for s in one.instructions]


def test_global_atomics_stay_in_one_process():
    keys = np.arange(64, dtype=np.uint32)
    args = [keys, np.zeros(16, np.uint32), np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.uint32),
            np.zeros(4, np.uint32), np.zeros(4, np.uint32), np.zeros(2, np.float32), np.zeros(2),
            np.zeros(3, np.uint32), np.zeros(1, np.uint32), np.zeros(65, np.uint32), np.zeros(16, np.uint32)]
    r = P.run(ptx("memory"), "atomics", 2, 32, args, jobs=2)
    assert any("jobs=2 ignored" in n for n in r.notes)
    assert np.array_equal(r.buffers[1], np.bincount(keys % 16, minlength=16))


def test_sm_80_ptx():
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    r80 = P.run(ptx("transpose", "sm_80"), "transpose_conflicts", (2, 2), (32, 8),
                [x, np.zeros((N, N), np.float32), np.int32(N)], arch="sm_80")
    _, r90 = _transpose()
    assert np.array_equal(r80.buffers[1], x.T) and r80.arch == "sm_80"
    assert r80.shared_wavefronts == r90.shared_wavefronts


def test_arguments_sharing_memory_are_one_buffer():
    """transpose_conflicts(in, out, n) with out a view overlapping in (the same memory on a GPU): the
    model places the two as one buffer, so each buffer's final content is that memory's. Views that
    touch nothing else keep buffers of their own."""
    from layoutsim.ptx.launch import overlapping_arrays
    mem = np.zeros(2 * N * N, np.float32)
    mem[:N * N] = np.arange(N * N)
    src, dst = mem[:N * N].reshape(N, N), mem[N * N // 2:N * N * 3 // 2].reshape(N, N)
    spans = overlapping_arrays([src, dst, mem[N * N * 3 // 2:], np.int32(N)])
    assert sorted(spans) == [0, 1] and spans[0] == spans[1]
    r = P.run(ptx("transpose"), "transpose_conflicts", (2, 2), (32, 8), [src, dst, np.int32(N)])
    got_src, got_dst = r.buffers[0].reshape(-1), r.buffers[1].reshape(-1)
    assert np.array_equal(got_src[N * N // 2:], got_dst[:N * N // 2])    # one memory seen twice
    same = [np.arange(N * N, dtype=np.float32).reshape(N, N)] * 2        # the same array twice
    r = P.run(ptx("transpose"), "transpose_conflicts", (2, 2), (32, 8), [*same, np.int32(N)])
    assert np.array_equal(r.buffers[0], r.buffers[1])
