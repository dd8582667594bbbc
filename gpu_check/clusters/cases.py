"""The cluster probe launches, one place for the H200 run (measure.py) and the executor's replay.

Each case: the kernel of tests/ptx/kernels/cluster.cu, grid, block, cluster shape (None: the
kernel's own .reqnctapercluster, or no cluster), and its arguments: numpy arrays (outputs start
as zeros; inputs are fixed), and for tma_multicast a tensor map over a float32 tensor
({"tensor": array, "box": (x, y)}) that the measurement encodes with cuTensorMapEncodeTiled and
the executor receives as a layoutsim.ptx.TensorMapArg.
"""
import numpy as np

from layoutsim.archs import target_of_device

ARCH = target_of_device("sm_90")                   # the arch-specific target (multicast TMA needs it)
PTX = f"tests/ptx/kernels/cluster.{ARCH}.ptx"       # relative to the repository root
MC_ROWS, MC_COLS = 16, 32                            # cluster.cu's multicast tile


def _tile_tensor(clusters):
    rows = clusters * MC_ROWS
    return (np.arange(rows * MC_COLS, dtype=np.float32) * np.float32(0.25) - 7).reshape(rows, MC_COLS)


def _case(name, kernel, grid, block, cluster, args):
    return {"name": name, "kernel": kernel, "grid": grid, "block": block, "cluster": cluster, "args": args}


def cases():
    out = []
    for name, grid, cl in (("regs_2x2", (4, 2, 1), (2, 2, 1)), ("regs_none", (3, 2, 1), None),
                           ("regs_1x2x2", (2, 2, 4), (1, 2, 2)), ("regs_8", (8, 1, 1), (8, 1, 1))):
        n = int(np.prod(grid)) * 32
        out.append(_case(name, "cluster_regs", grid, (32, 1, 1), cl, [np.zeros(n * 16, np.uint32)]))
    for cl, grid in ((2, 4), (4, 8)):
        out.append(_case(f"ring_{cl}", "dsmem_ring", (grid, 1, 1), (128, 1, 1), (cl, 1, 1),
                         [np.zeros(grid * 128, np.int32), np.zeros(grid, np.int32)]))
    for cl, grid in ((4, 4), (8, 8), (2, 6)):
        out.append(_case(f"explicit_{cl}", "dsmem_explicit", (grid, 1, 1), (64, 1, 1), (cl, 1, 1),
                         [np.zeros(grid * 64 * 5, np.uint32)]))
    for cl, grid in ((2, 4), (4, 4)):
        out.append(_case(f"mbarrier_{cl}", "remote_mbarrier", (grid, 1, 1), (128, 1, 1), (cl, 1, 1),
                         [np.zeros(grid // cl * 128, np.uint32)]))
    for cl, grid in ((2, 4), (4, 8)):
        t = _tile_tensor(grid // cl)
        out.append(_case(f"multicast_{cl}", "tma_multicast", (grid, 1, 1), (64, 1, 1), (cl, 1, 1),
                         [{"tensor": t, "box": (MC_COLS, MC_ROWS // cl)},
                          np.zeros(grid * MC_ROWS * MC_COLS, np.float32)]))
    out.append(_case("fixed_2x2", "fixed_cluster", (4, 2, 1), (32, 1, 1), None, [np.zeros(8, np.uint32)]))
    for cl, grid in ((2, 4), (4, 8)):                # cluster.cu's dsmem_bulk: 640 bytes out per CTA
        out.append(_case(f"bulk_s2s_{cl}", "dsmem_bulk", (grid, 1, 1), (64, 1, 1), (cl, 1, 1),
                         [np.zeros(grid * 160, np.uint32)]))
    for cl, grid in ((2, 4), (4, 4)):                # dsmem_async_store: 64 threads x 5 words per CTA
        out.append(_case(f"async_store_{cl}", "dsmem_async_store", (grid, 1, 1), (64, 1, 1), (cl, 1, 1),
                         [np.zeros(grid * 64 * 5, np.uint32)]))
    return out


def executor_args(case):
    """The case's arguments as layoutsim.ptx.run takes them."""
    import layoutsim.ptx as P
    out = []
    for a in case["args"]:
        if isinstance(a, dict):
            t = a["tensor"]
            out.append(P.TensorMapArg(buffer=t.copy(), dims=t.shape[::-1], box=a["box"]))
        else:
            out.append(a.copy())
    return out
