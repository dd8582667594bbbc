"""layoutsim.mma against MMA-Sim (and numpy float64 einsum) on the same random batch.

How to run (MMA-Sim is not a dependency of layoutsim: give it its own virtual environment;
it pulls in torch, about 1 GB; --system-site-packages lets that venv see the numpy, numba
and ml_dtypes layoutsim uses):

    python3 -m venv /tmp/mmasim-venv --system-site-packages
    /tmp/mmasim-venv/bin/pip install mmasim
    /tmp/mmasim-venv/bin/python benchmarks/bench_mma.py [--n 20000] [--repeat 5]

Run it on an otherwise quiet machine (check `uptime`): both simulators use every core
(numba's and torch's thread pools), so other jobs skew the ratio. Without MMA-Sim
(`python benchmarks/bench_mma.py`) it says so and times layoutsim and numpy alone.

One batch of `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (A, B: f16 ~ N(0,1) scaled by
2**U(-4,4); C: f32 likewise; fixed seed), run in this one process through
  * layoutsim.mma(..., arch="sm_90")                         (numba kernel)
  * MMA-Sim's Hopper model, mmasim.nv_ptx.MMA("Hopper", "m16n8k16.f32.f16.f16.f32"), through
    its batched API `dpa` (torch-vectorised over every dot product of a chunk of the batch;
    the chunk size it runs fastest at is picked first, from --chunks), and, for reference,
    its one-instruction call on --per-call instructions
  * numpy float64 einsum + C (not bit-exact: a speed yardstick)
Each is warmed up first (numba's compile / cache load, torch's first call), then timed in
--repeat runs; a run calls it on the whole batch back to back until at least --window seconds
have passed (one MMA-Sim call already takes longer than that), so every figure is a sustained
throughput over the same stretch of time, and a brief disturbance of the machine weighs the
same on each; the figures are the medians of the runs. Printed: throughputs
(instructions/s), the ratio layoutsim / MMA-Sim (target of issue 4: at least 100x), how many
of the batch's D values differ in their raw bits between layoutsim and MMA-Sim, and the ratio
layoutsim / numpy einsum.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import layoutsim  # noqa: E402
from layoutsim.formats import encode  # noqa: E402

NAME = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
MMASIM_SHAPE = "m16n8k16.f32.f16.f16.f32"
TARGET = 100.0


def batch(n, seed=0):
    """Raw f16 A (n, 16, 16), f16 B (n, 16, 8), f32 C (n, 16, 8) as float16/float32 arrays."""
    rng = np.random.default_rng(seed)

    def vals(shape):
        return rng.standard_normal(shape) * np.exp2(rng.integers(-4, 5, shape))
    a = encode("f16", vals((n, 16, 16))).view(np.float16)
    b = encode("f16", vals((n, 16, 8))).view(np.float16)
    c = encode("f32", vals((n, 16, 8))).view(np.float32)
    return a, b, c


def timed(fn, repeat, window=0.0):
    """(median wall seconds per call, median CPU seconds per call, wall seconds per call of
    every run, last result) over `repeat` runs, each calling fn back to back until at least
    `window` seconds have passed (at least once)."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        calls = 0
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            out = fn()
            calls += 1
            if time.perf_counter() - t0 >= window:
                break
        walls.append((time.perf_counter() - t0) / calls)
        cpus.append((time.process_time() - c0) / calls)
    return statistics.median(walls), statistics.median(cpus), walls, out


def load_mmasim():
    try:
        import torch
        from mmasim.nv_ptx import MMA
    except Exception as exc:       # noqa: BLE001 (report any import failure)
        return None, (f"MMA-Sim is not importable here ({type(exc).__name__}: {exc}).\n"
                      f"  It is not a dependency of layoutsim; to compare, install it in its own "
                      f"venv (it needs torch) and run this script with that venv's python:\n"
                      f"    python3 -m venv /tmp/mmasim-venv --system-site-packages\n"
                      f"    /tmp/mmasim-venv/bin/pip install mmasim\n"
                      f"    /tmp/mmasim-venv/bin/python {' '.join(sys.argv)}")
    return (torch, MMA), None


def run_mmasim(mods, a, b, c, repeat, window, chunks, per_call_n):
    torch, MMA = mods
    op = MMA("Hopper", MMASIM_SHAPE)
    A = torch.from_numpy(a.view(np.int16)).view(torch.float16)
    B = torch.from_numpy(b.view(np.int16)).view(torch.float16)
    C = torch.from_numpy(c.copy())
    n = len(a)

    def batched(chunk, stop=n):
        outs = []
        for s in range(0, stop, chunk):
            e = min(s + chunk, stop)
            av = A[s:e, :, None, :].expand(-1, 16, 8, 16)                   # (chunk, M, N, K)
            bv = B[s:e].transpose(1, 2)[:, None, :, :].expand(-1, 16, 8, 16)
            outs.append(op.dpa(av, bv, C[s:e]))
        return torch.cat(outs).numpy()

    # warm-up, and the chunk size MMA-Sim runs fastest at (on a part of the batch)
    probe = min(n, max(chunks))
    speed = {}
    for ch in chunks:
        batched(ch, probe)
        t0 = time.perf_counter()
        batched(ch, probe)
        speed[ch] = probe / (time.perf_counter() - t0)
    chunk = max(speed, key=speed.get)
    t_b, c_b, walls, d = timed(lambda: batched(chunk), repeat, window)
    k = min(per_call_n, n)
    op(A[0], B[0], C[0])

    def per_call():
        return [op(A[i], B[i], C[i]) for i in range(k)]
    t_c, _, _, _ = timed(per_call, 1)
    return {"batched_s": t_b, "batched_cpu": c_b, "walls": walls, "chunk": chunk,
            "per_call_s": t_c, "per_call_n": k, "d": d, "torch": torch.__version__,
            "threads": torch.get_num_threads()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="instructions in the batch")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each (median)")
    ap.add_argument("--window", type=float, default=1.0,
                    help="seconds each timed run lasts at least (calls back to back)")
    ap.add_argument("--chunks", default="500,1000,2000,4000",
                    help="chunk sizes tried for MMA-Sim's batched dpa (the fastest is used)")
    ap.add_argument("--per-call", type=int, default=300,
                    help="instructions timed through MMA-Sim's one-instruction call")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args()
    res = {"instruction": NAME, "batch": args.n, "repeat": args.repeat, "window_s": args.window,
           "cpus": os.cpu_count(), "target_ratio": TARGET}

    def say(line):
        if not args.json:
            print(line)
    n = args.n
    a, b, c = batch(n)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    say(f"batch: {n} x {NAME} (f16 A/B, f32 C), {n * 128} dot products of 16; "
          f"{os.cpu_count()} CPUs, load average {load:.2f}; medians of {args.repeat} runs of at "
          f"least {args.window:g} s each")

    layoutsim.mma(NAME, a[:64], b[:64], c[:64], arch="sm_90")        # compile / load the cache
    layoutsim.mma(NAME, a, b, c, arch="sm_90")
    t_ls, c_ls, w_ls, d_ls = timed(lambda: layoutsim.mma(NAME, a, b, c, arch="sm_90"),
                                   args.repeat, args.window)
    import numba
    res["layoutsim"] = {"instr_per_s": n / t_ls, "s_per_call": t_ls, "cpu_s_per_call": c_ls,
                        "numba": numba.__version__, "threads": numba.get_num_threads()}
    say(f"layoutsim.mma (sm_90)        {n / t_ls:12,.0f} instr/s  ({t_ls * 1e3:8.1f} ms wall, "
          f"{c_ls * 1e3:.1f} ms CPU; numba {numba.__version__}, {numba.get_num_threads()} threads; "
          f"per call over the runs {min(w_ls) * 1e3:.1f}..{max(w_ls) * 1e3:.1f} ms)")

    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    np.einsum("bmk,bkn->bmn", a64[:64], b64[:64])
    t_np, _, _, _ = timed(lambda: np.einsum("bmk,bkn->bmn", a64, b64) + c64, args.repeat,
                          args.window)
    res["numpy_einsum_f64"] = {"instr_per_s": n / t_np, "s_per_call": t_np}
    say(f"numpy float64 einsum + C     {n / t_np:12,.0f} instr/s  ({t_np * 1e3:8.1f} ms; "
          f"not bit-exact)")

    mods, why = load_mmasim()
    if mods is None:
        say(why)
        res["mmasim"] = {"error": why.splitlines()[0]}
    else:
        chunks = [int(x) for x in args.chunks.split(",")]
        info = run_mmasim(mods, a, b, c, args.repeat, args.window, chunks, args.per_call)
        t_ms = info["batched_s"]
        say(f"MMA-Sim Hopper, batched dpa  {n / t_ms:12,.0f} instr/s  ({t_ms * 1e3:8.1f} ms "
              f"wall, "
              f"{info['batched_cpu'] * 1e3:.1f} ms CPU; torch {info['torch']}, {info['threads']} "
              f"threads, chunks of {info['chunk']}; runs "
              f"{', '.join(f'{w * 1e3:.0f}' for w in info['walls'])} ms)")
        say(f"MMA-Sim Hopper, per call     {info['per_call_n'] / info['per_call_s']:12,.0f} "
              f"instr/s  ({info['per_call_n']} calls in {info['per_call_s']:.3f} s)")
        ratio = t_ms / t_ls
        diff = int((info["d"].view(np.uint32) != d_ls.view(np.uint32)).sum())
        say(f"ratio layoutsim / MMA-Sim (batched): {ratio:.1f}x wall, "
              f"{info['batched_cpu'] / c_ls:.1f}x CPU   (target >= {TARGET:.0f}x: "
              f"{'met' if ratio >= TARGET else 'NOT met'})")
        say(f"ratio layoutsim / MMA-Sim (per call): "
              f"{(info['per_call_s'] / info['per_call_n']) / (t_ls / n):.0f}x wall")
        say(f"differing results (raw bits of D): {diff} of {d_ls.size}")
        res["mmasim"] = {"batched_instr_per_s": n / t_ms, "batched_s": t_ms, "chunk": info["chunk"],
                         "per_call_instr_per_s": info["per_call_n"] / info["per_call_s"],
                         "torch": info["torch"], "threads": info["threads"]}
        res.update(ratio_batched=ratio, target_met=ratio >= TARGET, differing_results=diff,
                   results=int(d_ls.size))
    say(f"ratio layoutsim / numpy float64 einsum: {t_np / t_ls:.2f}x wall (layoutsim is "
          f"{'faster' if t_ls < t_np else 'slower'})")
    res["ratio_numpy_einsum"] = t_np / t_ls
    if args.json:
        print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
