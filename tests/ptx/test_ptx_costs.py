"""Shared-memory costs of whole launches and --racecheck: a 32x32 transpose through shared memory
with pitch 32 (every column read hits one bank) and 33 (none does), the totals as ncu would sum
them, and the hazards of the variant without a barrier."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from layoutsim import banks

SRC = ptx("transpose")
N = 64


@pytest.mark.parametrize("kernel,pitch", [("transpose_conflicts", 32), ("transpose_padded", 33)])
def test_transpose_costs(kernel, pitch):
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    r = P.run(SRC, kernel, (N // 32, N // 32), (32, 8), [x, np.zeros((N, N), np.float32), np.int32(N)])
    assert np.array_equal(r.buffers[1], x.T)
    lane = np.arange(32)
    # per warp and loop step: the store writes a row (lane = column), the load reads a column
    st = banks.wavefronts("st.shared.b32", 4 * lane)
    ld = banks.wavefronts("ld.shared.b32", 4 * lane * pitch)
    accesses = (N // 32) ** 2 * 32                 # CTAs x (8 warps x 4 steps)
    assert r.shared_wavefronts == {"ld": ld * accesses, "st": st * accesses}
    assert (ld, st) == ((32, 1) if pitch == 32 else (1, 1))
    loads = [s for s in r.instructions if s.text.startswith("ld.shared")]   # the unrolled loop's copies
    assert all(s.cuda[1] == 9 for s in loads)
    assert sum(s.excess for s in loads) == (ld - 1) * accesses
    if pitch == 32:
        assert r.hotspots()[0] in loads             # the report leads with the conflicting reads


def test_racecheck_finds_the_missing_barrier():
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    r = P.run(SRC, "transpose_racy", (N // 32, N // 32), (32, 8), [x, np.zeros((N, N), np.float32),
                                                                   np.int32(N)], racecheck=True)
    kinds = {h["kind"] for h in r.hazards}
    assert "RAW" in kinds
    h = next(h for h in r.hazards if h["kind"] == "RAW")
    assert h["first_text"].startswith("st.shared") and h["second_text"].startswith("ld.shared")
    assert h["warps"][0] != h["warps"][1] and h["count"] > 0
    ok = P.run(SRC, "transpose_padded", (N // 32, N // 32), (32, 8), [x, np.zeros((N, N), np.float32),
                                                                      np.int32(N)], racecheck=True)
    assert ok.hazards == []
    assert "racecheck: no shared-memory hazards" in ok.format()


def test_cta_sample_extrapolates_and_says_so():
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    full = P.run(SRC, "transpose_conflicts", (2, 2), (32, 8), [x, np.zeros((N, N), np.float32), np.int32(N)])
    part = P.run(SRC, "transpose_conflicts", (2, 2), (32, 8), [x, np.zeros((N, N), np.float32), np.int32(N)],
                 ctas=2)
    assert part.shared_wavefronts == full.shared_wavefronts
    assert part.sampled["of"] == 4 and len(part.sampled["ctas"]) == 2
    assert any("sampled 2 of 4 CTAs" in n for n in part.notes)
    done = part.sampled["ctas"]
    for (cx, cy, _) in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]:
        block = part.buffers[1][32 * cx:32 * cx + 32, 32 * cy:32 * cy + 32]
        assert np.array_equal(block, x.T[32 * cx:32 * cx + 32, 32 * cy:32 * cy + 32]) == ((cx, cy, 0) in done)


def test_global_accesses_are_costed_by_the_coalescing_model():
    """Each warp's global access goes to layoutsim.memory and is counted under its ncu op: every
    warp of the transpose reads and writes 32 consecutive floats, 128 aligned bytes: one request,
    four 32-byte sectors (CUDA C++ Best Practices Guide, coalesced access)."""
    x = np.arange(N * N, dtype=np.float32).reshape(N, N)
    r = P.run(SRC, "transpose_padded", (2, 2), (32, 8), [x, np.zeros((N, N), np.float32), np.int32(N)])
    accesses = 4 * 8 * 4                              # CTAs x warps x loop steps, for each direction
    none = {"requests": 0, "sectors": 0}
    assert r.global_totals == {"requests": 2 * accesses, "sectors": 8 * accesses, "ideal_sectors": 8 * accesses,
                               "atom": none, "red": none,
                               "ld": {"requests": accesses, "sectors": 4 * accesses},
                               "st": {"requests": accesses, "sectors": 4 * accesses}}
    loads = [s for s in r.instructions if s.text.startswith("ld.global") and s.executions]
    assert sum(s.sectors for s in loads) == 4 * accesses and all(s.requests == s.executions for s in loads)
    assert {s.global_kind for s in loads} == {"ld"}
