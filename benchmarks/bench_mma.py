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

One batch of one instruction (--form, default f16: `mma.sync.aligned.m16n8k16.row.col.f32.f16.
f16.f32`; A, B ~ N(0,1) scaled by 2**U(-4,4) in their format; C: f32 likewise; fixed seed), run
in this one process through
  * layoutsim.mma(..., arch="sm_90")                         (numba kernel)
  * MMA-Sim's Hopper model of the same instruction (for f16: mmasim.nv_ptx.MMA("Hopper",
    "m16n8k16.f32.f16.f16.f32"); wgmma forms through mmasim.nv_ptx.WGMMA), through
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
from layoutsim.formats import as_raw, decode, encode  # noqa: E402

NAME = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
MMASIM_SHAPE = "m16n8k16.f32.f16.f16.f32"
TARGET = 100.0
# --form: (layoutsim instruction, MMA-Sim class and shape) of the forms MMA-Sim's Hopper model
# has (it has no fp8 mma.sync on Hopper: fp8 is wgmma there)
FORMS = {
    "f16": (NAME, "MMA", MMASIM_SHAPE),
    "bf16": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "MMA",
             "m16n8k16.f32.bf16.bf16.f32"),
    "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "MMA", "m16n8k8.f32.tf32.tf32.f32"),
    "fp8": ("wgmma.m64n8k32.f32.e4m3.e4m3", "WGMMA", "m64n8k32.f32.e4m3.e4m3"),
    "wgmma": ("wgmma.m64n256k16.f32.f16.f16", "WGMMA", "m64n256k16.f32.f16.f16"),
}
UNIT = 16 * 8 * 16          # --n and --chunks count m16n8k16 instructions' worth of products


def batch(n, seed=0, name=NAME):
    """Raw A (n, M, K), B (n, K, N), C (n, M, N) bits of instruction `name` (f16 A/B and f32 C
    as float16/float32 arrays, as the f16 benchmark always gave them)."""
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    f = inst.formats
    rng = np.random.default_rng(seed)

    def vals(shape):
        return rng.standard_normal(shape) * np.exp2(rng.integers(-4, 5, shape))
    out = []
    for fmt, shape in ((f["a"], (n, M, K)), (f["b"], (n, K, N)), (f.get("c", f["d"]), (n, M, N))):
        raw = encode(fmt, vals(shape))
        out.append(raw.view({"f16": np.float16, "f32": np.float32}.get(fmt, raw.dtype)))
    return tuple(out)


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


def _tensor(torch, x, fmt):
    """Raw bits x of format fmt as a torch tensor of MMA-Sim's dtype (tf32: its float32)."""
    raw = x.view({1: np.uint8, 2: np.int16, 4: np.int32}[x.dtype.itemsize])
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
          "tf32": torch.float32, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[fmt]
    return torch.from_numpy(raw.copy()).view(dt)


def run_mmasim(mods, a, b, c, repeat, window, chunks, per_call_n, form="f16"):
    torch, _ = mods
    from mmasim import nv_ptx
    name, cls, shape = FORMS[form]
    op = getattr(nv_ptx, cls)("Hopper", shape)
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    f = inst.formats
    A, B, C = (_tensor(torch, x, fmt) for x, fmt in ((a, f["a"]), (b, f["b"]),
                                                       (c, f.get("c", f["d"]))))
    n = len(a)
    scale = max(1, M * N * K // UNIT)           # chunks are in m16n8k16 instructions' worth

    def batched(chunk, stop=n):
        chunk = max(1, chunk // scale)
        outs = []
        for s in range(0, stop, chunk):
            e = min(s + chunk, stop)
            av = A[s:e, :, None, :].expand(-1, M, N, K)                     # (chunk, M, N, K)
            bv = B[s:e].transpose(1, 2)[:, None, :, :].expand(-1, M, N, K)
            outs.append(op.dpa(av, bv, C[s:e]))
        return torch.cat(outs).numpy()

    # warm-up, and the chunk size MMA-Sim runs fastest at (on a part of the batch)
    probe = min(n, max(1, max(chunks) // scale))
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
    ap.add_argument("--form", default="f16", choices=sorted(FORMS),
                    help="the instruction (MMA-Sim's Hopper forms): " + ", ".join(
                        f"{k} = {v[0]}" for k, v in FORMS.items()))
    ap.add_argument("--n", type=int, default=20000,
                    help="instructions in the batch, in m16n8k16 instructions' worth of products "
                         "(a wgmma m64n256k16 counts 128)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each (median)")
    ap.add_argument("--window", type=float, default=1.0,
                    help="seconds each timed run lasts at least (calls back to back)")
    ap.add_argument("--chunks", default="500,1000,2000,4000",
                    help="chunk sizes tried for MMA-Sim's batched dpa (the fastest is used)")
    ap.add_argument("--per-call", type=int, default=300,
                    help="instructions timed through MMA-Sim's one-instruction call")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args()
    name = FORMS[args.form][0]
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    n = max(1, args.n * UNIT // (M * N * K))
    res = {"instruction": name, "form": args.form, "batch": n, "repeat": args.repeat, "window_s": args.window,
           "cpus": os.cpu_count(), "target_ratio": TARGET}

    def say(line):
        if not args.json:
            print(line)
    a, b, c = batch(n, name=name)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    say(f"batch: {n} x {name} ({inst.formats['a']} A/B, f32 C), {n * M * N} dot products of {K}; "
          f"{os.cpu_count()} CPUs, load average {load:.2f}; medians of {args.repeat} runs of at "
          f"least {args.window:g} s each")

    layoutsim.mma(name, a[:64], b[:64], c[:64], arch="sm_90")        # compile / load the cache
    layoutsim.mma(name, a, b, c, arch="sm_90")
    t_ls, c_ls, w_ls, d_ls = timed(lambda: layoutsim.mma(name, a, b, c, arch="sm_90"),
                                   args.repeat, args.window)
    import numba
    res["layoutsim"] = {"instr_per_s": n / t_ls, "s_per_call": t_ls, "cpu_s_per_call": c_ls,
                        "numba": numba.__version__, "threads": numba.get_num_threads()}
    say(f"layoutsim.mma (sm_90)        {n / t_ls:12,.0f} instr/s  ({t_ls * 1e3:8.1f} ms wall, "
          f"{c_ls * 1e3:.1f} ms CPU; numba {numba.__version__}, {numba.get_num_threads()} threads; "
          f"per call over the runs {min(w_ls) * 1e3:.1f}..{max(w_ls) * 1e3:.1f} ms)")

    fm = inst.formats
    a64, b64, c64 = (decode(fmt, as_raw(fmt, x)).astype(np.float64)
                     for x, fmt in ((a, fm["a"]), (b, fm["b"]), (c, fm.get("c", fm["d"]))))
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
        info = run_mmasim(mods, a, b, c, args.repeat, args.window, chunks, args.per_call,
                          args.form)
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
