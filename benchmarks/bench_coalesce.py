"""Coalescing model throughput: warp accesses per second of layoutsim.memory.coalesce_batch
(the form the PTX executor calls for every global access) and of coalesce (one access, details).

    python benchmarks/bench_coalesce.py [--n 1000000] [--repeat 3] [--json]

Random 32-lane accesses (aligned offsets in the first 1 MiB, 1 in 8 with a random active mask)
for each op; the best of --repeat runs is reported, per wall-clock second and per CPU second of
this process (the two differ when other jobs share the machine). The batch form is numpy only.
"""
import argparse
import json
import time

import numpy as np

OPS = [("ld.global.b32", 4), ("ld.global.b8", 1), ("ld.global.v2.b32", 8), ("ld.global.v4.b32", 16),
       ("st.global.v4.b32", 16), ("atom.global.add.u32", 4), ("cp.async.ca.shared.global.16", 16)]


def _time(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _both(fn, repeat):
    """(best wall seconds, best CPU seconds) over `repeat` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="accesses per op (default 1e6)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help='print {"n", "ops": [{"op", "batch_per_s", '
                    '"batch_per_cpu_s", "single_per_s"}]}')
    args = ap.parse_args()
    from layoutsim import memory
    rng = np.random.default_rng(0)
    rows = []
    if not args.json:
        print(f"{'op':<30} {'batch accesses/s':>17} {'per CPU s':>12} {'coalesce() accesses/s':>22}")
    for op, w in OPS:
        offs = rng.integers(0, (1 << 20) // w, size=(args.n, 32)) * w
        masks = np.where(rng.random(args.n) < 0.125, rng.integers(0, 1 << 32, size=args.n), 0xFFFFFFFF).astype(np.uint64)
        wall, cpu = _both(lambda: memory.coalesce_batch(op, offs, masks), args.repeat)
        k = 2000
        t1 = _time(lambda: [memory.coalesce(op, offs[i], active=int(masks[i])) for i in range(k)])
        rows.append({"op": op, "batch_per_s": args.n / wall, "batch_per_cpu_s": args.n / cpu, "single_per_s": k / t1})
        if not args.json:
            print(f"{op:<30} {args.n / wall:>17,.0f} {args.n / cpu:>12,.0f} {k / t1:>22,.0f}")
    if args.json:
        print(json.dumps({"n": args.n, "ops": rows}, indent=1))
    else:
        print(f"slowest batch op: {min(r['batch_per_s'] for r in rows):,.0f} warp accesses/s "
              f"({min(r['batch_per_cpu_s'] for r in rows):,.0f} per CPU second)")


if __name__ == "__main__":
    main()
