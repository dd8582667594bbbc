"""The counts of issue 27's closing note: what layoutsim's Blackwell (sm_100a) catalog, arithmetic and
executor were cross-checked against here, and how much of it agreed. No Blackwell GPU was used; each
count comes from a comparison the test suite makes (the same functions, called once more):

  layouts   CUTLASS 4.2's CuTe (tests/data/cute_sm100, tests/data/tcgen05_cute; tests/isa/test_tcgen05.py,
            tests/ptx/test_tcgen05_cute.py): its SM100 TMEM load atoms against the catalog's tcgen05.ld
            maps, UMMA::tmem_frg against tcgen05.mma's D layouts, UMMA::tmem_sf_frg against the
            scale-factor layouts, UMMA::tmem_e_frg / tmem_e_frg_ws against where the executor reads
            tcgen05.mma.sp's metadata, its instruction descriptors against isa/ptx_tcgen05_idesc;
            Triton 3.6's own sm_100a accumulator loads (tests/data/triton_sm100) against the catalog;
            CuTe's SM100_UTCCP atoms against the tcgen05.cp entries (tests/isa/test_tcgen05_cp.py) and its
            SM120 block-scaled traits against sm_120a's mma.sync scale registers (test_mma_kind_scales.py)
  numerics  MMA-Sim (pip mmasim; validated bitwise on B200 by its authors) against layoutsim.mma, random
            and special-value dot products per kind (tests/numerics/mmasim_oracle.py; --cases per kind)
  kernels   the Blackwell kernels run in layoutsim.ptx (CuTe's tutorials 01-05, Triton's tcgen05 matmuls,
            back-to-back GEMM and tl.dot_scaled, the hand-written block-scaled cta_group::2 kernels of
            tests/ptx/test_tcgen05_scaled_pair.py, the sparse ones of tests/ptx/test_tcgen05_sparse.py and
            test_tcgen05_sparse_pair.py: tcgen05.mma.sp against MMA-Sim's two chained dense MMAs of the K
            halves, as mmasim_oracle.records_d says; the A-from-TMEM and .ashift ones of
            test_tcgen05_tmem_a.py), every MMA they executed against MMA-Sim bit for bit
            (tests/blackwell_oracle.py; the tests' ORACLE_KERNELS)

    PYTHONPATH=. python tests/blackwell_crosscheck.py [--cases N] [--no-kernels] [--only TEXT] [--json]

Without mmasim (and torch) the numerics and kernel sections say so and count nothing; without
Triton its kernels are left out the same way. Exit 0 when everything compared agrees, 1 otherwise,
2 on a bad argument (one line).
"""
import contextlib
import importlib.util
import io
import json
import os
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
for sub in ("", "isa", "ptx", "triton_frontend", "numerics"):       # the test modules import their neighbours
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))
if str(TESTS.parent) not in sys.path:
    sys.path.insert(0, str(TESTS.parent))
os.environ.setdefault("LAYOUTSIM_DATA", str(TESTS / "data"))     # as tests/conftest.py sets it

from layoutsim.errors import LayoutsimError  # noqa: E402
from layoutsim.script import Parser, run_script  # noqa: E402

PROG = "python tests/blackwell_crosscheck.py"
KERNEL_MODULES = (("test_tcgen05_cute", None), ("test_triton_sm100", "triton"),
                  ("test_triton_sm100_scaled", "triton"), ("test_tcgen05_scaled_pair", None),
                  ("test_tcgen05_sparse", None), ("test_tcgen05_sparse_pair", None), ("test_tcgen05_tmem_a", None))


def _missing(*mods):
    return [m for m in mods if importlib.util.find_spec(m) is None]


def _rows(what, source, rows):
    """One layout section: {"what", "source", "compared", "agree", "values", "differ": [names]}."""
    return {"what": what, "source": source, "compared": len(rows), "agree": sum(1 for _, ok, _ in rows if ok),
            "values": int(sum(n for _, _, n in rows)), "differ": [name for name, ok, _ in rows if not ok]}


def layouts():
    import test_mma_kind_scales as sm120
    import test_tcgen05 as isa
    import test_tcgen05_cp as cp
    import test_tcgen05_cute as cute
    return [
        _rows("tcgen05.ld maps = CuTe SM100 TMEM load atoms", "CUTLASS 4.2 cute/atom/copy_traits_sm100.hpp",
              isa.cute_load_atoms()),
        _rows("tcgen05.mma D layouts = CuTe UMMA::tmem_frg", "CUTLASS 4.2 UMMA::tmem_frg_1sm/2sm",
              isa.cute_accumulators()),
        _rows("scale-factor layouts = CuTe UMMA::tmem_sf_frg", "CUTLASS 4.2 UMMA::tmem_sf_frg",
              isa.cute_scale_factors()),
        _rows("sparse metadata layouts = CuTe UMMA::tmem_e_frg", "CUTLASS 4.2 UMMA::tmem_e_frg/_ws",
              isa.cute_sparse_metadata()),
        _rows("instruction descriptors = CuTe's", "CUTLASS 4.2 UMMA::make_instr_desc", cute.cute_idescs()),
        _rows("accumulator loads = Triton's own for sm_100a", "Triton 3.6 ttgir + tcgen05.ld", isa.triton_loads()),
        _rows("tcgen05.cp maps = CuTe SM100 UTCCP atoms", "CUTLASS 4.2 Copy_Traits<SM100_UTCCP_*>", cp.cute_utccp()),
        _rows("sm_120a mma.sync scale registers = CuTe SM120 traits", "CUTLASS 4.2 mma_traits_sm120.hpp SFA/SFBLayout",
              sm120.cute_sm120_scales()),
    ]


def numerics(cases, only):
    """Per MMA-Sim kind: {"kind", "cases", "differ", "first"} (half random, half special values)."""
    import mmasim_oracle as mo
    out = []
    for label, *_ in mo.KINDS:
        if only and only not in label:
            continue
        total = differ = 0
        first = None
        for special in (False, True):
            n, nd, f = mo.compare(label, max(1, cases // 2), seed=27, special=special)
            total, differ, first = total + n, differ + nd, first or f
        out.append({"kind": label, "cases": total, "differ": differ, "first": first})
    return out


def kernels(only):
    """Per kernel: blackwell_oracle.summary plus seconds; modules whose needs are missing: skipped."""
    out, skipped = [], []
    for mod, need in KERNEL_MODULES:
        if need and _missing(need):
            skipped.append(f"{mod}: {need} is not installed")
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            m = __import__(mod)
        for name, fn in m.ORACLE_KERNELS.items():
            if only and only not in name:
                continue
            t = time.time()
            try:
                s = fn()
            except AssertionError as e:         # a check of the kernel's test failed: counted, not hidden
                s = {"kernel": name, "mmas": 0, "chains": 0, "kinds": {}, "failed": str(e).splitlines()[0][:200]}
            s["seconds"] = round(time.time() - t, 1)
            out.append(s)
            print(f"  ran {name}: {s['mmas']} MMAs ({s['seconds']} s)", file=sys.stderr, flush=True)
    return out, skipped


def _print(doc):
    print("Blackwell (sm_100a) cross-checks; no Blackwell GPU here: every check compares with an "
          "implementation that runs on B200s")
    print("\nlayouts (catalog entries against CuTe's TV layouts and Triton's choices):")
    for s in doc["layouts"]:
        print(f"  {s['agree']:4d} / {s['compared']:<4d} agree, {s['values']:7d} values  {s['what']}")
        for name in s["differ"]:
            print(f"         differs: {name}")
    if doc.get("numerics_skipped"):
        print(f"\nnumerics: skipped ({doc['numerics_skipped']})")
    else:
        print("\nnumerics (layoutsim.mma against MMA-Sim, random and special-value dot products per kind):")
        for r in doc["numerics"]:
            print(f"  {r['kind']:30s} {r['cases']:9d} cases, {r['differ']} differ"
                  + (f" (first: {r['first']})" if r["first"] else ""))
    if doc.get("kernels_skipped"):
        print(f"\nkernels: skipped ({doc['kernels_skipped']})")
    elif doc["kernels"] is not None:
        print("\nkernels run in layoutsim.ptx, every MMA against MMA-Sim bit for bit:")
        for k in doc["kernels"]:
            if k.get("failed"):
                print(f"  {k['kernel']:44s} FAILED: {k['failed']}")
            for kind, r in k["kinds"].items():
                print(f"  {k['kernel']:44s} {r['mmas']:4d} MMAs {kind:28s} {r['elements']:9d} D elements, "
                      f"{r['differ']} differ")
        for why in doc["kernels_left_out"]:
            print(f"  left out: {why}")
        t = doc["totals"]
        print(f"  total: {t['kernels']} kernels ({t['failed']} failed), {t['mmas']} MMAs, {t['elements']} D elements, "
              f"{t['differ']} differ")


def main(argv=None):
    ap = Parser(prog=PROG, description="The counts of issue 27's closing note (Blackwell cross-checks).")
    ap.add_argument("--cases", type=int, default=65536, help="MMA-Sim dot products per kind, half random, half "
                                                             "special values (default 65536; the closing note: "
                                                             "2000000)")
    ap.add_argument("--no-kernels", action="store_true", help="leave out the kernels (minutes)")
    ap.add_argument("--only", default="", help="only the MMA-Sim kinds and kernels whose name contains TEXT")
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    if not 1 <= args.cases <= 10 ** 8:
        raise LayoutsimError(f"--cases {args.cases}: give 1 to 100000000 dot products per kind")
    doc = {"layouts": layouts(), "numerics": None, "kernels": None}
    gone = _missing("mmasim", "torch")
    if gone:
        doc["numerics_skipped"] = doc["kernels_skipped"] = f"{', '.join(gone)} not installed: pip install mmasim"
    else:
        doc["numerics"] = numerics(args.cases, args.only)
        if not args.no_kernels:
            doc["kernels"], doc["kernels_left_out"] = kernels(args.only)
            ks = doc["kernels"]
            doc["totals"] = {"kernels": len(ks), "failed": sum(1 for k in ks if k.get("failed")),
                             "mmas": sum(k["mmas"] for k in ks),
                             "elements": sum(r["elements"] for k in ks for r in k["kinds"].values()),
                             "differ": sum(r["differ"] for k in ks for r in k["kinds"].values())}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        _print(doc)
    totals = doc.get("totals") or {}
    bad = any(s["differ"] for s in doc["layouts"]) or any(r["differ"] for r in doc["numerics"] or []) or \
        totals.get("differ", 0) or totals.get("failed", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(run_script(main, PROG))
