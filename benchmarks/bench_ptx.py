"""layoutsim.ptx speed: warp-instructions per second on a GEMM kernel, and a 1024^3 wmma GEMM;
with --launches, per launch of the corpora: warp-instructions, steady-state rate, first-run time
and peak memory.

    python benchmarks/bench_ptx.py [--size 1024] [--small 256] [--jobs 1] [--json]
    python benchmarks/bench_ptx.py --launches [kernels,cute,triton,hopper,cub,flashattn,clusters,cutlass] [--repeat 3]
                                   [--cutlass-size 256,256,256] [--json]

--launches (issue 26): each launch runs in a fresh process (python benchmarks/bench_ptx.py
--child ...): "first" is the wall time of its first layoutsim.ptx.run (parse, link, the SASS
lowering or its cache, numba's first call or its cache, the launch), "import" that of `import
layoutsim.ptx` before it; the steady-state rate is warp-instructions / the median wall time of
--repeat more runs of the same launch in that process (per CPU second too: the machine may be
shared); peak memory is tracemalloc's peak during one more run (numpy's buffers included) per
simulated thread (grid x block). Launches: every launch of each corpus of
gpu_check/kernel_corpus/parts.py that runs here, built by gpu_check/kernel_corpus/launches.py from
its committed PTX and inputs, its outputs compared byte for byte with the corpus's GPU measurement
where one is committed ("output exact"): "kernels" (alias "corpus") = the project's H200 kernel
corpus, "cute" = the CuTe tutorials of tests/data/realworld, "llmc" = llm.c's dev/cuda kernels
(tests/data/realworld/llmc), "samples" = NVIDIA cuda-samples' kernels (tests/data/realworld/samples),
"triton" = the Triton corpus (43
launches), "hopper" = the CUTLASS 3.x Hopper examples (the H200 captures, else hopper_local's CPU
captures), "cub" = CUB's captured launches (skipped until captured on the GPU), "flashattn" =
FlashAttention-2's forward kernel (flash-attn 2.8.3.post2), "clusters" = the cluster probes; "cutlass" = CUTLASS's CuTe tutorial GEMMs (benchmarks/cutlass_kernels.py: rebuilt
from the nvidia-cutlass wheel with nvcc; skipped with a note when either is missing),
--cutlass-size M,N,K, output checked exactly.
--against DIR (with --launches): before/after in one run: each launch runs --rounds times in this
checkout and in DIR (another checkout, e.g. `git worktree add /tmp/base main`: its layoutsim is
imported first), alternating, each run in a fresh process; printed per launch: the steady-state rate
per CPU second of each (warp-instructions / the least CPU time of the --repeat runs of a process; the
range over the rounds), and this checkout's rate over DIR's, round by round (the range and its
median): the machine may be shared, so CPU time, the least of several runs, and ranges, not one figure.

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
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
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


# ---- per launch (--launches) ------------------------------------------------------------------------
def child(spec):
    """One launch in this fresh process: {warp_instructions, import_s, first_s, steady_s, ...}."""
    t = time.perf_counter()
    import layoutsim.ptx as P
    import_s = time.perf_counter() - t
    recorded = None
    if spec["kind"] == "part":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from gpu_check.kernel_corpus import launches as L, parts as PARTS
        s = L.setup(spec["part"], spec["name"])
        ptx, kernel, grid, block, args, options, ref = s.ptx, s.kernel, s.grid, s.block, s.args, s.options, None
        part = PARTS.BY_NAME[spec["part"]]
        recorded = part.read(part.data).get(spec["name"])
    else:
        import cutlass_kernels as CK
        ptx = Path(spec["ptx"]).read_text()
        kernel, grid, block, args, smem, ref = CK.launch(spec["name"], ptx, *spec["size"])
        options = {"arch": "sm_90", "shared_bytes": smem}

    def once():
        t0, c0 = time.perf_counter(), time.process_time()
        r = P.run(ptx, kernel, grid, block, args, **options)
        return r, time.perf_counter() - t0, time.process_time() - c0

    r, first, _ = once()
    walls, cpus = zip(*[once()[1:] for _ in range(spec["repeat"])])
    tracemalloc.start()
    once()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    threads = int(np.prod(r.grid)) * int(np.prod(r.block))
    out = {"warp_instructions": r.warp_instructions, "import_s": import_s, "first_s": first,
           "steady_s": statistics.median(walls), "steady_cpu_s": statistics.median(cpus), "best_cpu_s": min(cpus),
           "peak_bytes": peak, "threads": threads}
    if ref is not None:              # C is the third array argument
        out["exact"] = bool(np.array_equal(r.buffers[[i for i, a in enumerate(args) if isinstance(a, np.ndarray)][2]],
                                           ref))
    elif recorded is not None:       # the outputs against the corpus's GPU measurement, byte for byte
        out["exact"] = PARTS.identical(recorded.outputs, s.outputs(r))[0]
    return out


# the corpora --launches knows (gpu_check/kernel_corpus/launches.py builds their launches), and "cutlass"
CORPORA = ("kernels", "cute", "llmc", "samples", "triton", "hopper", "cub", "flashattn", "clusters")
ALIASES = {"corpus": "kernels"}


def launches(which, repeat, size, cutlass_root=None):
    """[(name, spec)] of the launches to measure; a corpus with none runnable here is said so."""
    out = []
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from gpu_check.kernel_corpus import launches as L, parts as PARTS
    for part in (p for p in CORPORA if p in which):
        names = L.names(part)
        if not names:
            print(f"{part}: skipped (no launch to run here: {PARTS.BY_NAME[part].command} on the GPU measures it)")
        out += [(f"{part}/{n}", {"kind": "part", "part": part, "name": n, "repeat": repeat}) for n in names]
    if "cutlass" in which:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import cutlass_kernels as CK
        root = CK.source_root(cutlass_root)
        if root is None:
            print("cutlass: skipped (pip install nvidia-cutlass: its cutlass_library/source is the CUTLASS tree)")
        else:
            built = CK.build(root, CK.temp_dir())
            m, n, k = size
            out += [(f"{name} {m}x{n}x{k}", {"kind": "cutlass", "name": name, "ptx": str(p), "size": [m, n, k],
                                             "repeat": repeat}) for name, p in built.items()]
    return out


def _child(name, spec, root):
    """One launch in a fresh process whose layoutsim is the checkout at `root` (imported first, so
    every layoutsim module comes from there; the launches are built by this checkout's gpu_check)."""
    root = Path(root).resolve()
    p = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                           [str(root), str(root / "benchmarks"), os.environ.get("PYTHONPATH", "")])))
    if p.returncode:
        return {"launch": name, "error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    o = json.loads(p.stdout.strip().splitlines()[-1])
    o["rate"] = o["warp_instructions"] / o["steady_s"]
    o["cpu_rate"] = o["warp_instructions"] / o["steady_cpu_s"]
    o["best_cpu_rate"] = o["warp_instructions"] / o["best_cpu_s"]
    o["bytes_per_thread"] = o["peak_bytes"] / o["threads"]
    return dict(o, launch=name)


def per_launch(args):
    size = tuple(int(v) for v in args.cutlass_size.split(","))
    rows = []
    which = [ALIASES.get(w.strip(), w.strip()) for w in args.launches.split(",") if w.strip()]
    bad = [w for w in which if w not in CORPORA + ("cutlass",)]
    if bad:
        sys.exit(f"bench_ptx: --launches {bad[0]!r}: give some of {', '.join(CORPORA + ('cutlass',))}")
    only = set(args.only.split(",")) if args.only else None
    here = Path(__file__).resolve().parents[1]
    for name, spec in launches(which, args.repeat, size, args.cutlass_root):
        if only is not None and name not in only:
            continue
        if args.against:
            rows.append(_against(name, spec, here, args.against, args.rounds))
            if not args.json:
                _print_against(rows[-1])
            continue
        rows.append(_child(name, spec, here))
        if not args.json:
            _print_row(rows[-1])
    if args.json:
        print(json.dumps(rows, indent=1))


def _against(name, spec, here, base, rounds):
    """{launch, warp_instructions, this, base: [CPU rates], ratio: [this / base per round]}."""
    this, other = [], []
    for _ in range(rounds):
        for out, root in ((this, here), (other, base)):
            o = _child(name, spec, root)
            if "error" in o:
                return {"launch": name, "error": f"{root}: {o['error']}"}
            out.append(o)
    return {"launch": name, "warp_instructions": this[0]["warp_instructions"],
            "this": [o["best_cpu_rate"] for o in this], "base": [o["best_cpu_rate"] for o in other],
            "first_this": [o["first_s"] for o in this], "first_base": [o["first_s"] for o in other],
            "ratio": [a["best_cpu_rate"] / b["best_cpu_rate"] for a, b in zip(this, other)]}


def _print_against(o):
    if "error" in o:
        print(f"{o['launch'][:40]:40s} failed: {o['error']}")
        return

    def span(v, f="{:,.0f}"):
        return f"{f.format(min(v))}-{f.format(max(v))}"
    print(f"{o['launch'][:40]:40s} {o['warp_instructions']:>9,} warp-instr  per CPU s: this {span(o['this']):>19s}  "
          f"base {span(o['base']):>19s}  this/base {span(o['ratio'], '{:.2f}')} (median "
          f"{statistics.median(o['ratio']):.2f})  first run {span(o['first_this'], '{:.2f}')} "
          f"vs {span(o['first_base'], '{:.2f}')} s")


def _print_row(o):
    if "error" in o:
        print(f"{o['launch'][:48]:48s} failed: {o['error']}")
        return
    exact = "" if "exact" not in o else ("  output exact" if o["exact"] else "  OUTPUT DIFFERS")
    print(f"{o['launch'][:48]:48s} {o['warp_instructions']:>9,} warp-instr  steady {o['rate']:>11,.0f}/s "
          f"({o['cpu_rate']:>11,.0f}/CPU s)  first run {o['first_s']:5.2f} s (import {o['import_s']:.2f} s)  "
          f"peak {o['bytes_per_thread']:>8,.0f} B/thread{exact}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(json.loads(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024, help="M = N = K of the large GEMM (multiple of 64)")
    ap.add_argument("--small", type=int, default=256, help="M = N = K of the small GEMM")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the CTAs (layoutsim.ptx.run jobs=)")
    ap.add_argument("--check", action="store_true", help="compare the large GEMM with layoutsim.mma tile by tile")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--launches", nargs="?", const=",".join(CORPORA + ("cutlass",)), default=None,
                    help=f"per launch of these corpora ({', '.join(CORPORA)}, cutlass; default all) instead of "
                         f"the GEMM sizes")
    ap.add_argument("--repeat", type=int, default=3, help="--launches: steady-state runs per launch (median)")
    ap.add_argument("--cutlass-root", default=None,
                    help="--launches: a CUTLASS source tree (default: the installed nvidia-cutlass wheel's)")
    ap.add_argument("--cutlass-size", default="256,256,256", help="--launches: M,N,K of the CUTLASS GEMMs")
    ap.add_argument("--only", default=None, help="--launches: only these launches (corpus/name, comma-separated)")
    ap.add_argument("--against", default=None,
                    help="--launches: another checkout to compare with, round by round (before/after)")
    ap.add_argument("--rounds", type=int, default=3, help="--against: runs of each launch in each checkout")
    args = ap.parse_args()
    if args.against and not args.launches:
        ap.error("--against compares launches: give --launches too")
    if args.against and not (Path(args.against) / "benchmarks" / "bench_ptx.py").is_file():
        ap.error(f"--against {args.against}: not a layoutsim checkout (no benchmarks/bench_ptx.py in it)")
    if args.rounds < 1:
        ap.error("--rounds: give at least 1")
    if args.launches:
        per_launch(args)
        return
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
