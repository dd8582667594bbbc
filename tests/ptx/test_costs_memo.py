"""costs.memo_rows: the bank and coalescing counts of a warp access pattern, looked up once
costed. Its premises are checked here against the models themselves (no hardware figure is
involved: the memo must give exactly what the model gives):
  * coalesce_batch's requests, sectors and ideal sectors do not change when a warp's addresses
    all move by a multiple of 128 bytes (whole lines move together), so distinct_patterns may
    fold such rows together for global accesses as it does for shared ones;
  * memo_rows returns, for every row, what the model returns for it, on first sight and on
    every later lookup."""
import numpy as np
import pytest

from layoutsim import banks
from layoutsim.memory import coalesce_batch
from layoutsim.ptx import costs as K

OPS = ["ld.global.b32", "ld.global.v4.b32", "st.global.b16", "ld.global.b8", "atom.global.add.u32",
       "red.global.add.f32", "ld.global.nc.v2.b32", "st.global.v4.b32"]
FIELDS = ("requests", "sectors", "ideal_sectors")


def _patterns(rng, width, n=8):
    kind = rng.integers(3)
    if kind == 0:
        O = rng.integers(0, 4096 // width, (n, 32)) * width
    elif kind == 1:
        O = (np.arange(32) * rng.integers(0, 64) + rng.integers(0, 64)) * width + np.zeros((n, 1), np.int64)
    else:
        O = rng.integers(0, 64, (n, 32)) * width
    return O.astype(np.int64), rng.random((n, 32)) < 0.8


@pytest.mark.parametrize("op", OPS)
def test_coalescing_counts_keep_under_128_byte_shifts(op):
    rng = np.random.default_rng(hash(op) % 2**32)
    width = {"b8": 1, "b16": 2}.get(op.split(".")[-1], 4) * (4 if ".v4." in op else 2 if ".v2." in op else 1)
    for _ in range(100):
        O, M = _patterns(rng, width)
        a = coalesce_batch(op, O, active=M)
        b = coalesce_batch(op, O + rng.integers(1, 1 << 20, (O.shape[0], 1)) * 128, active=M)
        for f in FIELDS:
            assert np.array_equal(a[f], b[f]), (op, f)


def test_memo_rows_gives_what_the_models_give():
    rng = np.random.default_rng(7)
    for _ in range(20):
        O, M = _patterns(rng, 4, 16)
        Z, A, counts, _ = K.distinct_patterns(O, M)
        for key, compute in ((("coalesce-test", "ld.global.b32", "sm_90"),
                              lambda z, a: [coalesce_batch("ld.global.b32", z, active=a)[f] for f in FIELDS]),
                             (("banks-test", "ld.shared.b32", "sm_90"),
                              lambda z, a: (banks.wavefronts_batch("ld.shared.b32", z % 4096, "sm_90", active=a),
                                            banks.ideal_batch("ld.shared.b32", z % 4096, "sm_90", active=a)))):
            want = compute(Z, A)
            for _ in range(2):                       # first sight, then every row looked up
                got = K.memo_rows(key, Z, A, compute)
                assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_warp_rows_sorted_and_unsorted_threads_agree():
    """costs.warp_rows groups sorted threads without a sort; the rows equal np.unique's grouping."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        t = np.unique(rng.integers(0, 512, rng.integers(1, 300)))
        off = rng.integers(0, 1 << 20, t.size)
        uw, O, M = K.warp_rows(t, off)
        perm = rng.permutation(t.size)                  # the same accesses, unsorted: np.unique's path
        uw2, O2, M2 = K.warp_rows(t[perm], off[perm])
        assert np.array_equal(uw, uw2) and np.array_equal(O, O2) and np.array_equal(M, M2)
        assert np.array_equal(uw, np.unique(t // 32))


def test_warp_rows_of_whole_warps_are_the_accesses_as_given():
    """The whole-warp shortcut of costs.warp_rows gives the rows the general grouping gives."""
    rng = np.random.default_rng(6)
    warps = np.unique(rng.integers(0, 64, 20))
    t = (warps[:, None] * 32 + np.arange(32)).reshape(-1)
    off = rng.integers(0, 1 << 20, t.size)
    uw, O, M = K.warp_rows(t, off)
    uw2, O2, M2 = K.warp_rows(t[::-1], off[::-1])      # the same accesses unsorted: the general path
    assert np.array_equal(uw, uw2) and np.array_equal(O, O2) and np.array_equal(M, M2) and M.all()


def test_distinct_patterns_with_every_lane_active_equals_the_masked_reading():
    rng = np.random.default_rng(8)
    O = rng.integers(0, 4096, (200, 32)) * 4
    O[100:] = O[:100] + rng.integers(0, 50, (100, 1)) * 128        # repeats shifted by lines
    M = np.ones(O.shape, bool)
    Z, A, counts, inv = K.distinct_patterns(O, M)
    M2 = M.copy()
    M2[:, 0] = False                                   # the masked path, lane 0 off in every row
    O2 = O.copy()
    O2[:, 0] = O.min(axis=1)                           # keeps each row's 128-byte base
    Z2, A2, counts2, _ = K.distinct_patterns(O2, M2)
    assert counts.sum() == counts2.sum() == 200 and len(counts) == len(counts2) == 100


def test_each_row_maps_to_its_pattern():
    """distinct_patterns' inverse: row i is pattern inv[i] shifted by a multiple of 128 bytes."""
    rng = np.random.default_rng(9)
    for n in (5, 100):                                 # the row-by-row path and the grouped one
        O = rng.integers(0, 64, (n, 32)) * 4
        O[n // 2:] = O[:n - n // 2] + rng.integers(0, 50, (n - n // 2, 1)) * 128
        M = rng.random((n, 32)) < 0.9
        M[n // 2:] = M[:n - n // 2]
        Z, A, counts, inv = K.distinct_patterns(O, M)
        assert np.array_equal(A[inv], M) and counts.sum() == n
        d = np.where(M, O - Z[inv], 0)
        base = np.where(M, d, d.max()).min(axis=1, keepdims=True)
        assert not (d[M] % 128).any() and np.array_equal(np.where(M, d - base, 0), np.zeros_like(d))
