"""Bank model throughput: warp accesses per second of the batch engines, and the swizzle search.

    python benchmarks/bench_banks.py [--n 1000000] [--repeat 3]

Random 32-lane accesses (aligned offsets in the first 8 KiB, 1 in 8 with a random active mask)
for each op; the numba engine is warmed up (compiled, or loaded from its cache) first and the
best of --repeat runs is reported. Target (issue 3): >= 1e6 warp accesses/s for the numba batch
form; the 128x64 f16 swizzle search (ldmatrix.x4 reads + 128-bit stores) under 1 s.
"""
import argparse
import time

import numpy as np

OPS = [("ld.shared.b32", 4), ("st.shared.b8", 1), ("ld.shared.v2.b32", 8), ("ld.shared.v4.b32", 16),
       ("st.shared.v4.b32", 16), ("ldmatrix.x4", 16), ("stmatrix.x4.trans", 16)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="accesses per op (default 1e6)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from layoutsim import banks
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    banks.wavefronts_batch("ld.shared.b32", np.zeros((4, 32), np.int64), engine="numba")
    print(f"numba engine ready in {time.perf_counter() - t0:.2f} s (compile, or load from cache)")
    rates = []
    print(f"{'op':<20} {'numba accesses/s':>17} {'numpy accesses/s':>17} {'analyze() accesses/s':>21}")
    for op, w in OPS:
        offs = rng.integers(0, 8192 // w, size=(args.n, 32)) * w
        masks = np.where(rng.random(args.n) < 0.125, rng.integers(0, 1 << 32, size=args.n), 0xFFFFFFFF)
        if op.startswith(("ldmatrix", "stmatrix")):
            masks = None
        best = min(_time(lambda: banks.wavefronts_batch(op, offs, active=masks, engine="numba")) for _ in range(args.repeat))
        m = min(args.n, 100_000)
        sub_masks = None if masks is None else masks[:m]
        t_np = _time(lambda: banks.wavefronts_batch(op, offs[:m], active=sub_masks, engine="numpy"))
        k = 2000
        t_ref = _time(lambda: [banks.analyze(op, offs[i], active=None if masks is None else int(masks[i]))
                               for i in range(k)])
        rates.append(args.n / best)
        print(f"{op:<20} {args.n / best:>17.3g} {m / t_np:>17.3g} {k / t_ref:>21.3g}")
    print(f"numba batch: slowest op {min(rates):.3g} warp accesses/s, fastest {max(rates):.3g} "
          f"(target >= 1e6): {'OK' if min(rates) >= 1e6 else 'BELOW TARGET'}")
    t = min(_time(lambda: banks.search(128, 64, "f16", ["ldmatrix.x4"], ["st.shared.v4.b32"]))
            for _ in range(args.repeat))
    r = banks.search(128, 64, "f16", ["ldmatrix.x4"], ["st.shared.v4.b32"])
    print(f"swizzle search 128x64 f16 (ldmatrix.x4 + st.shared.v4.b32): {t:.3f} s for {len(r.candidates)} "
          f"layouts (target < 1 s); best {r.best.label}, {r.best.total} wavefronts")


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
