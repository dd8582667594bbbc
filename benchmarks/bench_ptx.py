"""layoutsim.ptx speed: warp-instructions per second on a GEMM kernel, and a 1024^3 wmma GEMM.

    python benchmarks/bench_ptx.py [--size 1024] [--small 256] [--jobs 1] [--json]

Kernel: benchmarks/kernels/gemm.cu, `wmma_gemm64` (64 x 64 CTA tiles, 4 warps of 2 x 2 wmma
16x16x16 fragments, A and B staged through padded shared memory; PTX compiled with
nvcc -ptx -lineinfo -arch=sm_90, committed as gemm.sm_90.ptx). Reported:
  * warp-instructions per second (Run.warp_instructions / wall time) of the --small GEMM and of
    the --size GEMM, each after one warm-up launch (numba compiles or loads its cache once), and
    per second of CPU time (this process's and, with --jobs > 1, its worker processes', start-up
    included: what the wall rate is per core when nothing else runs);
  * the wall time of the --size^3 GEMM (whole launch: every CTA, every output exact), and that
    its output equals the same GEMM computed tile by tile with layoutsim.mma (--check).
Targets (issue 10): >= 300 k warp-instructions/s on a GEMM kernel; 1024^3 in < 60 s.
"""
import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

PTX = Path(__file__).with_name("kernels") / "gemm.sm_90.ptx"


def launch(n, jobs, seed=0):
    import layoutsim.ptx as P
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)).astype(np.float16)
    B = rng.standard_normal((n, n)).astype(np.float16)
    C = np.zeros((n, n), np.float32)
    t, c = time.perf_counter(), cpu_seconds()
    r = P.run(PTX.read_text(), "wmma_gemm64", (n // 64, n // 64), 128,
              [A, B, C, np.int32(n), np.int32(n), np.int32(n)], jobs=jobs)
    return time.perf_counter() - t, cpu_seconds() - c, r, A, B


def cpu_seconds():
    """CPU time of this process plus that of its finished children: the jobs > 1 workers, which
    the pool has joined when run() returns (RUSAGE_CHILDREN counts waited-for children only)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def reference(A, B):
    """C = A B^T as the kernel computes it: per 16x16 output tile, k in steps of 16, each step
    two mma.m16n8k16 (what wmma.mma m16n16k16 is on sm_90), batched over all tiles."""
    import layoutsim
    n = A.shape[0]
    T = n // 16
    C = np.zeros((T, T, 2, 16, 8), np.float32)
    name = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    for k in range(0, n, 16):
        a = A[:, k:k + 16].reshape(T, 16, 16)
        b = B[:, k:k + 16].reshape(T, 2, 8, 16)
        aa = np.broadcast_to(a[:, None, None], (T, T, 2, 16, 16))
        bb = np.broadcast_to(np.swapaxes(b, 2, 3)[None], (T, T, 2, 16, 8))
        C = layoutsim.mma(name, aa, bb, C, arch="sm_90")
    return C.transpose(0, 3, 1, 2, 4).reshape(n, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="M = N = K of the large GEMM (multiple of 64)")
    ap.add_argument("--small", type=int, default=256, help="M = N = K of the small GEMM")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the CTAs (layoutsim.ptx.run jobs=)")
    ap.add_argument("--check", action="store_true", help="compare the large GEMM with layoutsim.mma tile by tile")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    launch(64, 1)
    warm = time.perf_counter() - t0
    out = {"warmup_s": round(warm, 2)}
    for key, n in (("small", args.small), ("large", args.size)):
        dt, cpu, r, A, B = launch(n, args.jobs)
        out[key] = {"size": n, "seconds": round(dt, 2), "cpu_seconds": round(cpu, 2),
                    "warp_instructions": r.warp_instructions,
                    "warp_instructions_per_s": int(r.warp_instructions / dt),
                    "warp_instructions_per_cpu_s": int(r.warp_instructions / cpu),
                    "shared_wavefronts": r.shared_wavefronts}
        if key == "large" and args.check:
            out[key]["matches_layoutsim_mma"] = bool(np.array_equal(
                r.buffers[2].view(np.uint32), reference(A, B).view(np.uint32)))
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"warm-up (numba compile or cache load, small launch): {warm:.1f} s")
    for key in ("small", "large"):
        o = out[key]
        extra = f", output {'matches' if o['matches_layoutsim_mma'] else 'DIFFERS FROM'} layoutsim.mma" \
            if "matches_layoutsim_mma" in o else ""
        print(f"{o['size']}^3 wmma GEMM, 64x64 tiles: {o['seconds']:.2f} s ({o['cpu_seconds']:.2f} CPU s of "
              f"this process{' and its workers' if args.jobs > 1 else ''}), {o['warp_instructions']} "
              f"warp-instructions, {o['warp_instructions_per_s']:,} "
              f"warp-instructions/s ({o['warp_instructions_per_cpu_s']:,} per CPU second){extra}")


if __name__ == "__main__":
    main()
