"""The encoding of shared::cta and shared::cluster addresses on the GPU (issues 24 and 27).

    python -m gpu_check.clusters.addresses --out DIR

Runs gpu_check/clusters/cluster_addr.sm_90.ptx (hand-written; what each of its 16 words is, in its
header) on the cluster shapes of CASES and writes DIR/addresses.npz (the output buffer of case NAME
under NAME) and DIR/addresses.json (device, driver, date, the cases). The words are the values of
mov/cvta/mapa/getctarank on shared addresses and loads through addresses built by hand (the rank
field at bit 24 set, cleared or replaced), so they show the encoding the GPU uses; the executor's
replay (tests/ptx/test_ptx_cluster_addr.py) must give the same bytes. Commit the two files under
tests/data/clusters/addresses/. The launch is measure.py's (cuLaunchKernelEx with the cluster
attribute); nothing else is needed but pycuda and the driver.
"""
from pathlib import Path

import numpy as np

from .measure import finish, run_case, start

ROOT = Path(__file__).resolve().parents[2]
PTX = "gpu_check/clusters/cluster_addr.sm_90.ptx"      # relative to the repository root
KERNEL, ARCH, WORDS = "cluster_addr", "sm_90", 16
# (name, grid, cluster shape or None: no cluster attribute)
CASES = (("pair_2", (4, 1, 1), (2, 1, 1)), ("ranks_4", (8, 1, 1), (4, 1, 1)), ("square_2x2", (4, 2, 1), (2, 2, 1)),
         ("ranks_8", (8, 1, 1), (8, 1, 1)), ("none", (2, 1, 1), None))
BLOCK = (32, 1, 1)


def buffer(grid):
    """The case's output buffer (zeros): 16 words per CTA."""
    return np.zeros(int(np.prod(grid)) * WORDS, np.uint32)


def main(argv=None):
    drv, D, out = start(argv, __doc__)
    kernel = D.Kernel((ROOT / PTX).read_bytes() + b"\0", KERNEL)
    arrays, meta = {}, []
    for name, grid, cluster in CASES:
        got = run_case(drv, kernel, {"args": [buffer(grid)], "grid": grid, "block": BLOCK, "cluster": cluster})
        arrays[name] = got[0]
        meta.append({"name": name, "grid": list(grid), "block": list(BLOCK), "cluster": cluster and list(cluster)})
        print(name, " ".join(f"{int(w):#x}" for w in got[0][:WORDS]), flush=True)
    finish(drv, out, "addresses", arrays, PTX, "python -m gpu_check.clusters.addresses --out DIR", meta)


if __name__ == "__main__":
    main()
