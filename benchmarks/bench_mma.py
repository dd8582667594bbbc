"""layoutsim.mma against MMA-Sim (and numpy float64 einsum) on the same random batch.

    python benchmarks/bench_mma.py [--n 20000] [--repeat 3]

One batch of `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (A, B: f16 ~ N(0,1) scaled by
2**U(-4,4); C: f32 likewise), run in this one process through
  * layoutsim.mma(..., arch="sm_90")                       (numba kernel, warm cache)
  * MMA-Sim's Hopper model, mmasim.nv_ptx.MMA("Hopper", ...) (pip install mmasim; needs torch),
    batched through its own `dpa` on chunks of 2000 instructions, and one instruction per call
  * numpy float64 einsum (not bit-exact: a speed yardstick)
and prints the throughputs (instructions/s), their ratios, and how many D values differ in
their raw bits between layoutsim and MMA-Sim. MMA-Sim is not a dependency of layoutsim: when
it cannot be imported, its lines say so and the rest still runs. Target (issue 4): layoutsim
at least 100x MMA-Sim's throughput.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import layoutsim  # noqa: E402
from layoutsim.formats import encode  # noqa: E402

NAME = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
MMASIM_SHAPE = "m16n8k16.f32.f16.f16.f32"


def batch(n, seed=0):
    rng = np.random.default_rng(seed)

    def vals(shape):
        return rng.standard_normal(shape) * np.exp2(rng.integers(-4, 5, shape))
    a = encode("f16", vals((n, 16, 16))).view(np.float16)
    b = encode("f16", vals((n, 16, 8))).view(np.float16)
    c = encode("f32", vals((n, 16, 8))).view(np.float32)
    return a, b, c


def best(fn, repeat):
    """(best wall seconds, CPU seconds of that run, result) over `repeat` runs."""
    runs = []
    out = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    wall, cpu = min(runs)
    return wall, cpu, out


def run_mmasim(a, b, c, repeat, per_call_n):
    try:
        import torch
        from mmasim.nv_ptx import MMA
    except Exception as exc:       # noqa: BLE001 (report any import failure)
        return None, f"MMA-Sim unavailable ({type(exc).__name__}: {exc}); `pip install mmasim` " \
                     f"(it needs torch) to compare"
    op = MMA("Hopper", MMASIM_SHAPE)
    A = torch.from_numpy(a.view(np.int16)).view(torch.float16)
    B = torch.from_numpy(b.view(np.int16)).view(torch.float16)
    C = torch.from_numpy(c.copy())
    n = len(a)

    def batched():
        outs = []
        for s in range(0, n, 2000):
            av = A[s:s + 2000, :, None, :].expand(-1, 16, 8, 16)
            bv = B[s:s + 2000].transpose(1, 2)[:, None, :, :].expand(-1, 16, 8, 16)
            outs.append(op.dpa(av, bv, C[s:s + 2000]))
        return torch.cat(outs).numpy()

    t_batch, c_batch, d = best(batched, repeat)
    k = min(per_call_n, n)

    def per_call():
        return [op(A[i], B[i], C[i]) for i in range(k)]
    t_call, c_call, _ = best(per_call, 1)
    info = {"batched_s": t_batch, "batched_cpu": c_batch, "per_call_s": t_call,
            "per_call_cpu": c_call, "per_call_n": k, "d": d,
            "version": getattr(sys.modules.get("mmasim"), "__version__", None),
            "torch": torch.__version__, "threads": torch.get_num_threads()}
    return info, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="instructions in the batch")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--per-call", type=int, default=500,
                    help="instructions timed through MMA-Sim's one-matrix call")
    args = ap.parse_args()
    n = args.n
    a, b, c = batch(n)
    print(f"batch: {n} x {NAME} (f16 A/B, f32 C), {n * 128} dot products of 16")

    layoutsim.mma(NAME, a[:2], b[:2], c[:2])                       # compile / load the cache
    t_ls, c_ls, d_ls = best(lambda: layoutsim.mma(NAME, a, b, c, arch="sm_90"), args.repeat)
    try:
        import numba
        threads = numba.get_num_threads()
    except Exception:          # noqa: BLE001
        threads = "?"
    print(f"layoutsim.mma (sm_90)      {n / t_ls:14,.0f} instr/s   ({t_ls:.4f} s wall, "
          f"{c_ls:.4f} s CPU, numba threads {threads})")

    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    t_np, c_np, _ = best(lambda: np.einsum("bmk,bkn->bmn", a64, b64) + c64, args.repeat)
    print(f"numpy float64 einsum       {n / t_np:14,.0f} instr/s   ({t_np:.4f} s; not bit-exact)")

    info, why = run_mmasim(a, b, c, args.repeat, args.per_call)
    if info is None:
        print(why)
    else:
        d_ms = info["d"]
        diff = int((d_ms.view(np.uint32) != d_ls.view(np.uint32)).sum())
        print(f"MMA-Sim Hopper, batched    {n / info['batched_s']:14,.0f} instr/s   "
              f"({info['batched_s']:.4f} s wall, {info['batched_cpu']:.4f} s CPU; torch "
              f"{info['torch']}, {info['threads']} threads)")
        print(f"MMA-Sim Hopper, per call   {info['per_call_n'] / info['per_call_s']:14,.0f} instr/s   "
              f"({info['per_call_n']} calls in {info['per_call_s']:.4f} s)")
        print(f"ratio layoutsim / MMA-Sim batched:  {info['batched_s'] / t_ls:10.1f}x wall, "
              f"{info['batched_cpu'] / c_ls:.1f}x CPU  (target >= 100x)")
        print(f"ratio layoutsim / MMA-Sim per call: {(info['per_call_s'] / info['per_call_n']) / (t_ls / n):10.1f}x wall, "
              f"{(info['per_call_cpu'] / info['per_call_n']) / (c_ls / n):.1f}x CPU")
        print(f"differing results (raw bits): {diff} of {d_ls.size}")
    print(f"ratio layoutsim / numpy float64 einsum: {t_np / t_ls:.2f}x wall (layoutsim is "
          f"{'faster' if t_ls < t_np else 'slower'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
