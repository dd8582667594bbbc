"""A stand-in for Nsight Compute and the coalescing probe, so the GPU path of
gpu_check/coalesce_probe/measure.py (plain run, metric query, pruning of refused metrics, the
time-budget planner, chunking, control launches, CSV parsing) runs in CI.

    python fake_ncu.py ncu ARGS...      behaves like `ncu` for --version, --query-metrics and
                                        profiling a run of the probe (counts from the model)
    python fake_ncu.py probe PATTERNS   behaves like the probe executable's plain run

REFUSED metrics make a profiling run fail the way ncu does ("==ERROR== Failed to find metric").
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

REFUSED = ("smsp__sass_sectors_mem_global.sum",)
EXTRA = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss",
         "lts__t_sectors_srcunit_tex", "smsp__inst_executed_op_global_ld", "smsp__sass_sectors_mem_global",
         # LDGSTS counters (names of the H200's ncu 2025.3.1, first run's FULL set) for the BYPASS set
         "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ldgsts_cache_access",
         "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_ldgsts_cache_access",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write", "l1tex__m_xbar2l1tex_read_sectors")


def read_patterns(path):
    with open(path) as f:
        words = f.read().split()
    assert words[:2] == ["coalesce_probe", "v1"], words[:2]
    n, rows, k = int(words[2]), [], 3
    for _ in range(n):
        rows.append((words[k], int(words[k + 1], 16), [int(w) for w in words[k + 2:k + 34]]))
        k += 34
    return rows


def probe(path):
    rows = read_patterns(path)
    print('COALESCE_PROBE device="FakeGPU" cc=9.0 driver_api=13000 runtime=13000 base=0x7f0000200000 l2=52428800')
    print(f"COALESCE_PROBE launched={len(rows)}")
    return 0


def ncu(args):
    from gpu_check.bank_probe import ncu_csv
    from gpu_check.coalesce_probe import corpus, fit
    from gpu_check.coalesce_probe.measure import CORE
    from layoutsim.memory import parse_op
    if "--version" in args:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0 (fake)")
        return 0
    if "--query-metrics" in args:
        for name in [m[:-4] for m in CORE] + list(EXTRA):
            print(f"{name}.avg {name}.max {name}.min {name}.sum        a fake description")
        return 0
    metrics = args[args.index("--metrics") + 1].split(",")
    bad = [m for m in metrics if m in REFUSED]
    if bad:
        print(f"==ERROR== Failed to find metric {bad[0]}", file=sys.stderr)
        return 1
    logfile = args[args.index("--log-file") + 1]
    rows = read_patterns(args[-1])
    pats = [{"op": next(op for op in corpus.OPS if corpus.kernel_name(op) == k), "offsets": o, "active": a, "id": i}
            for i, (k, a, o) in enumerate(rows) if k != corpus.CONTROL]
    pred = fit.predict(pats, None) if pats else {}
    out, j = [], 0
    for kernel, _, _ in rows:
        vals = {}
        if kernel != corpus.CONTROL:
            op = parse_op(pats[j]["op"]).metric_op
            vals = {f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum": pred["requests"][j],
                    f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum": pred["sectors"][j],
                    f"l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_{op}.sum": pred["wavefronts"][j],
                    "memory_l2_theoretical_sectors_global_ideal": pred["ideal_sectors"][j]}
            j += 1
        out.append((kernel, vals))
        time.sleep(float(os.environ.get("FAKE_NCU_SECONDS", "0.002")) * (3 if len(metrics) > len(CORE) else 1))
    with open(logfile, "w") as f:
        f.write(ncu_csv.synthesize(out, metrics))
    return 0


if __name__ == "__main__":
    sys.exit(probe(sys.argv[2]) if sys.argv[1] == "probe" else ncu(sys.argv[2:]))
