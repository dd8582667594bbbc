"""The encoding of shared addresses in a cluster (issues 24 and 27): tests/ptx/kernels/cluster_addr.sm_90.ptx
(what each word is, in its header) in the executor, against

  - the SASS ptxas 13.0 writes for it and for the same PTX on sm_100a (nvdisasm): a shared::cta address
    is `SR_CgaCtaId << 24 | offset` (`LEA R0, R3, 0x400, 0x18`; SR_CgaCtaId is also what ptxas reads
    for %cluster_ctarank), mapa.shared::cluster puts the target rank into byte 3 (`PRMT Rd, rank,
    0x654, a`), getctarank is the address >> 24 (`SHF.L.U64.HI Rd, a, 0x8, RZ`), ld.shared::cluster and
    a generic load are one `LD.E [SR_SWINHI : address]`, and ld.shared (::cta) is `LDS` of the
    address as it is, the rank field included or not (ptxas gives LDS both `0x400 + ...` for a
    register address and `SR_CgaCtaId << 24 | 0x400` for a variable);
  - the GPU: `python -m gpu_check.clusters.addresses --out DIR` (tests/data/clusters/addresses/),
    byte for byte, once measured.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.clusters import addresses as A

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "clusters" / "addresses"
BASE = 0x400          # the first static array (archs.user_smem_base): ptxas's `MOV R4, 0x400`


def _run(grid, cluster):
    src = (ROOT / A.PTX).read_text()
    r = P.run(src, A.KERNEL, grid, A.BLOCK, [A.buffer(grid)], arch=A.ARCH, cluster=cluster)
    return r.buffers[0].reshape(-1, A.WORDS)


def _expected(n, ctas):
    """The 16 words of each CTA as ptxas's SASS reads them (module docstring)."""
    rows = []
    for c in range(ctas):
        r = c % n
        nxt = (r + 1) % n
        rows.append([r << 24 | BASE, r << 24 | BASE, r << 24 | BASE, nxt << 24 | BASE, nxt << 24 | BASE, r, nxt,
                     nxt * 1000 + 1, (r & ~1) * 1000 + 2, r * 1000 + 3,
                     4,                    # a generic address with the rank field cleared names rank 0
                     r * 1000 + 5, n * (n + 1) // 2 if r == 0 else 0, r, n, c])
    return np.asarray(rows, np.uint32)


@pytest.mark.parametrize("name,grid,cluster", A.CASES, ids=[c[0] for c in A.CASES])
def test_shared_addresses_carry_the_cluster_rank_at_bit_24(name, grid, cluster):
    got = _run(grid, cluster)
    n = int(np.prod(cluster)) if cluster else 1
    if cluster == (2, 2, 1):            # CTA (x, y) of a 2x2 cluster has rank x % 2 + 2 * (y % 2)
        ranks = [(c % 4) % 2 + 2 * ((c // 4) % 2) for c in range(8)]
        want = np.stack([_expected(n, 4)[r] for r in ranks])
        want[:, 15] = np.arange(8)
    else:
        want = _expected(n, int(np.prod(grid)))
    assert np.array_equal(got, want), np.argwhere(got != want)[:4]


MEASURED = sorted(DATA.glob("addresses.npz"))


@pytest.mark.skipif(not MEASURED, reason="tests/data/clusters/addresses/ is not measured yet: run `python -m "
                                         "gpu_check.clusters.addresses --out DIR` on the GPU and commit DIR's files")
@pytest.mark.parametrize("name,grid,cluster", A.CASES, ids=[c[0] for c in A.CASES])
def test_replay_equals_the_gpu(name, grid, cluster):
    arrays = np.load(DATA / "addresses.npz")
    meta = json.loads((DATA / "addresses.json").read_text())
    assert name in {m["name"] for m in meta["cases"]}
    got = _run(grid, cluster).reshape(-1)
    assert np.array_equal(got.view(np.uint8), arrays[name].view(np.uint8)), name
