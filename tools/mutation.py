"""Mutation testing of layoutsim's core modules with cosmic-ray (not in CI: it takes an hour).

    python tools/mutation.py [--groups isa,banks,...] [--sample N] [--budget-s S] [--json]
    python tools/mutation.py --rerun-survivors        # after adding tests: only what survived
    python tools/mutation.py --report [--markdown]    # figures of the last run, no mutants run

Why cosmic-ray (8.7): it mutates whole modules, module-level data included (layoutsim/isa is
mostly tables; mutmut 3 only mutates inside functions), one mutant at a time in the source file
itself, so numba kernels compile as the mutated code (mutmut 3's trampolines and
pytest-gremlins' mutant switching both put Python dispatch into the function bodies, which
numba cannot compile), and its session database lets a run stop at a time limit and resume.

Each group of modules is tested by a fast selection of its own package's tests (GROUPS). The
work happens in a copy of the tracked tree (cosmic-ray rewrites files in place), by default
/tmp/layoutsim-mutation; tests/data is linked, not copied. cosmic-ray makes every operator
swap (`+` into each of 11 operators, every comparison into every other, ...), so a group has
thousands of mutants: a deterministic sample of --sample per group (sorted by position, drawn
with --seed) is run and the rest marked skipped. Mutants listed in tools/mutation_equivalents.json
(the same program whatever the input: see docs/dev/mutation.md) do not count as survivors.
The kill rate is killed / (run - equivalent); a timeout counts as killed (cosmic-ray's rule).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "tools" / "mutation_equivalents.json"
PYTEST = "python -m pytest -x -q -p no:cacheprovider --no-header"

# group: (modules to mutate, tests that must kill them, per-mutant timeout in s, default sample)
GROUPS = {
    "query": (["layoutsim/commands/query.py"], "tests/cli", 40, 60),
    # the maps: their tests and the replay of the layouts the H200 returned
    "fragment": (["layoutsim/fragment.py"], "tests/isa tests/cli tests/gpu_check/test_gpucheck_recorded.py", 180, 60),
    "isa": (["layoutsim/isa"], "tests/isa tests/cli tests/gpu_check/test_gpucheck_recorded.py", 180, 100),
    "formats": (["layoutsim/formats.py"], "tests/numerics/test_formats_numerics.py tests/ptx/test_ptx_alu_float.py "
                "tests/numerics/test_published.py tests/numerics/test_independent_reference.py", 120, 50),
    "banks": (["layoutsim/banks/model.py", "layoutsim/banks/nvidia.py", "layoutsim/banks/amd.py",
               "layoutsim/banks/ops.py", "layoutsim/banks/tiles.py", "layoutsim/address", "layoutsim/banks/batch.py",
               "layoutsim/banks/_jit.py", "layoutsim/banks/search.py"], "tests/banks", 180, 60),
    "sim": (["layoutsim/sim"], "tests/sim", 180, 80),
    # numerics: the fast tests first (-x stops at the first failure), the H200 replays, then the
    # independent reference (exact rationals, the slowest)
    "numerics": (["layoutsim/numerics/plan.py", "layoutsim/numerics/profiles.py"],
                 "tests/numerics/test_profiles.py tests/numerics/test_published.py "
                 "tests/numerics/test_corpus_replay.py tests/numerics/test_independent_reference.py", 240, 60),
    # the scalar kernel last: each of its mutants recompiles the kernel (numba, ~20 s); the test
    # that every compiled path gives the same bits first (it kills most of them in 20 s)
    "kernel": (["layoutsim/numerics/kernel.py", "layoutsim/numerics/general.py"],
               "tests/numerics/test_kernel_paths.py tests/numerics/test_amd_captures.py tests/numerics/test_published.py "
               "tests/numerics/test_corpus_replay.py tests/numerics/test_independent_reference.py", 400, 20),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def copy_tree(work):
    """The tracked files of this checkout under work/tree (tests/data linked)."""
    tree = work / "tree"
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.splitlines()
    for f in files:
        if f.startswith("tests/data/"):
            continue
        dst = tree / f
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, dst)
    data = tree / "tests" / "data"
    if not data.exists():
        data.symlink_to(ROOT / "tests" / "data")
    return tree


def refresh_tests(tree):
    """Copy this checkout's tests (new ones included) over the work tree's, and its sources too:
    a run stopped at its time limit can leave a mutant in a module. (Rerun after changing
    tests only: the sampled mutants are positions in the modules as they were at init.)"""
    for f in (ROOT / "tests").rglob("*.py"):
        dst = tree / f.relative_to(ROOT)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dst)
    restore_sources(tree)


def restore_sources(tree):
    """The checkout's package sources over the work tree's (undoes a mutant left in place)."""
    files = subprocess.run(["git", "ls-files", "layoutsim", "gpu_check"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for f in files:
        shutil.copy2(ROOT / f, tree / f)


# The groups that mutate numba kernels: each mutant's tests compile into a cache of their own.
# numba's cache=True keys a function's cache by its own file, so a caller cached before a helper
# in another file was mutated would run the old helper and let the mutant survive. (The other
# groups keep one cache: recompiling every kernel for every mutant would triple their time.)
FRESH_NUMBA_GROUPS = ("banks", "kernel")
FRESH_NUMBA = "bash -c 'export NUMBA_CACHE_DIR=$(mktemp -d); {cmd}; rc=$?; rm -rf $NUMBA_CACHE_DIR; exit $rc'"


def config_text(group):
    mods, tests, timeout, _ = GROUPS[group]
    cmd = f"{PYTEST} {tests}"
    if group in FRESH_NUMBA_GROUPS:
        cmd = FRESH_NUMBA.format(cmd=cmd)
    return (f"[cosmic-ray]\nmodule-path = {json.dumps(mods)}\ntimeout = {float(timeout)}\n"
            f"excluded-modules = []\ntest-command = {json.dumps(cmd)}\n\n"
            f"[cosmic-ray.distributor]\nname = \"local\"\n")


def env_for(tree):
    env = dict(os.environ, PYTHONPATH=str(tree), HYPOTHESIS_PROFILE="ci",
               LAYOUTSIM_DATA=str(ROOT / "tests" / "data"))
    return env


def init_group(tree, work, group, sample, seed):
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    cfg = work / f"{group}.toml"
    cfg.write_text(config_text(group))
    db = work / f"{group}.sqlite"
    if db.exists():
        db.unlink()
    subprocess.run(["cosmic-ray", "init", str(cfg), str(db)], cwd=tree, check=True, env=env_for(tree))
    with use_db(str(db), WorkDB.Mode.open) as wdb:
        items = sorted(wdb.pending_work_items, key=lambda w: (
            str(w.mutations[0].module_path), w.mutations[0].start_pos, w.mutations[0].operator_name,
            w.mutations[0].occurrence))
        keep = set(range(len(items))) if sample <= 0 or sample >= len(items) else \
            set(random.Random(seed).sample(range(len(items)), sample))
        skipped = [w.job_id for i, w in enumerate(items) if i not in keep]
        if skipped:
            wdb.set_multiple_results(skipped, WorkResult(output="not in the sample",
                                                         worker_outcome=WorkerOutcome.SKIPPED))
    log(f"[{group}] {len(items)} mutants, {len(keep)} in the sample")


def exec_group(tree, work, group, deadline):
    left = deadline - time.time()
    if left < 30:
        log(f"[{group}] time budget spent: not run")
        return
    cfg, db = work / f"{group}.toml", work / f"{group}.sqlite"
    t0 = time.time()
    try:
        subprocess.run(["nice", "-n", "10", "cosmic-ray", "exec", str(cfg), str(db)], cwd=tree,
                       env=env_for(tree), timeout=left)
    except subprocess.TimeoutExpired:
        restore_sources(tree)               # the mutant being tested when time ran out
        log(f"[{group}] stopped at the time budget (rerun to resume)")
    log(f"[{group}] exec {time.time() - t0:.0f} s")


def _changed_lines(diff):
    minus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " | ".join(minus), " | ".join(plus)


def load_equivalents():
    return json.loads(EQUIVALENTS.read_text()) if EQUIVALENTS.exists() else []


def is_equivalent(module, line, diff, equivalents):
    """The reason a mutant is equivalent, from the list (matched on module, the changed line
    before and after, and the line number where the text alone is ambiguous), else None."""
    old, new = _changed_lines(diff)
    for e in equivalents:
        if module.endswith(e["module"]) and e["old"] == old and e["new"] == new \
                and e.get("line", line) == line:
            return e["reason"]
    return None


def summarize(work, group, equivalents):
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome
    db = work / f"{group}.sqlite"
    row = {"group": group, "modules": GROUPS[group][0], "tests": GROUPS[group][1], "mutants": 0,
           "sampled": 0, "run": 0, "killed": 0, "survived": 0, "equivalent": 0, "incompetent": 0,
           "pending": 0, "timeouts": 0, "survivors": [], "equivalents": []}
    if not db.exists():
        return row
    with use_db(str(db), WorkDB.Mode.open) as wdb:
        results = dict(wdb.results)
        for item in wdb.work_items:
            row["mutants"] += 1
            res = results.get(item.job_id)
            if res is not None and res.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            row["sampled"] += 1
            if res is None:
                row["pending"] += 1
                continue
            m = item.mutations[0]
            where = f"{m.module_path}:{m.start_pos[0]} {m.operator_name}"
            if res.worker_outcome != WorkerOutcome.NORMAL or res.test_outcome == TestOutcome.INCOMPETENT:
                row["incompetent"] += 1
                continue
            if res.output == "timeout":      # cosmic-ray counts these as killed; they are not proof
                row["timeouts"] += 1
                row["survivors"].append({"where": where, "old": "", "new": "(timed out)", "job": item.job_id})
                continue
            row["run"] += 1
            if res.test_outcome == TestOutcome.SURVIVED:
                reason = is_equivalent(str(m.module_path), m.start_pos[0], res.diff or "", equivalents)
                old, new = _changed_lines(res.diff or "")
                if reason:
                    row["equivalent"] += 1
                    row["equivalents"].append({"where": where, "old": old, "new": new, "reason": reason})
                else:
                    row["survived"] += 1
                    row["survivors"].append({"where": where, "old": old, "new": new, "job": item.job_id})
            else:
                row["killed"] += 1
    counted = row["run"] - row["equivalent"]
    row["kill_rate"] = round(row["killed"] / counted, 4) if counted else None
    return row


def rerun_survivors(tree, work, groups, equivalents):
    """Forget the results of non-equivalent survivors (and of mutants whose tests timed out) so
    that `exec` runs them again, with the
    group's test selection as GROUPS says now."""
    from cosmic_ray.work_db import WorkDB, use_db
    from sqlalchemy import delete
    from cosmic_ray.work_db import WorkResultStorage
    for g in groups:
        row = summarize(work, g, equivalents)
        jobs = [s["job"] for s in row["survivors"]]
        (work / f"{g}.toml").write_text(config_text(g))
        if not jobs:
            continue
        with use_db(str(work / f"{g}.sqlite"), WorkDB.Mode.open) as wdb:
            with wdb._session_maker.begin() as session:      # cosmic-ray 8.7 has no public delete
                session.execute(delete(WorkResultStorage).where(WorkResultStorage.job_id.in_(jobs)))
        log(f"[{g}] {len(jobs)} survivors to run again")


def markdown(rows, seconds=None):
    out = ["| group | modules | tests | mutants | sampled | run | killed | survived | equivalent | kill rate |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        rate = "-" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f} %"
        out.append(f"| {r['group']} | {', '.join(r['modules'])} | {r['tests']} | {r['mutants']} | "
                   f"{r['sampled']} | {r['run']} | {r['killed']} | {r['survived']} | "
                   f"{r['equivalent']} | {rate} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python tools/mutation.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", default=",".join(GROUPS), help=f"comma-separated: {', '.join(GROUPS)}")
    ap.add_argument("--sample", type=int, help="mutants per group (default: each group's own; 0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-s", type=float, default=3600.0, help="stop starting mutants after this")
    ap.add_argument("--workdir", default="/tmp/layoutsim-mutation")
    ap.add_argument("--rerun-survivors", action="store_true", help="refresh tests, run survivors again")
    ap.add_argument("--report", action="store_true", help="only print the figures of the last run")
    ap.add_argument("--markdown", action="store_true", help="print the figures as a markdown table")
    ap.add_argument("--json", action="store_true", help="print {groups: [...], seconds} as JSON")
    args = ap.parse_args(argv)
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        print(f"mutation: unknown group {bad[0]!r}; valid: {', '.join(GROUPS)}", file=sys.stderr)
        return 2
    if shutil.which("cosmic-ray") is None:
        print("mutation: cosmic-ray is not installed (pip install cosmic-ray)", file=sys.stderr)
        return 2
    work = Path(args.workdir)
    equivalents = load_equivalents()
    t0 = time.time()
    deadline = t0 + args.budget_s
    if not args.report:
        tree = work / "tree"
        if args.rerun_survivors:
            refresh_tests(tree)
            rerun_survivors(tree, work, groups, equivalents)
        else:
            if tree.exists():
                shutil.rmtree(tree)
            work.mkdir(parents=True, exist_ok=True)
            tree = copy_tree(work)
            for g in groups:
                init_group(tree, work, g, GROUPS[g][3] if args.sample is None else args.sample, args.seed)
        for g in groups:
            exec_group(tree, work, g, deadline)
    rows = [summarize(work, g, equivalents) for g in groups]
    secs = round(time.time() - t0)
    if args.json:
        print(json.dumps({"groups": rows, "seconds": secs}, indent=1))
    elif args.markdown:
        print(markdown(rows))
    else:
        for r in rows:
            rate = "-" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f} %"
            print(f"{r['group']:9s} {r['killed']:4d} killed of {r['run'] - r['equivalent']:4d} "
                  f"({rate}); {r['equivalent']} equivalent, {r['incompetent']} incompetent, "
                  f"{r['timeouts']} timed out, {r['pending']} pending; sample {r['sampled']} of {r['mutants']}")
            for s in r["survivors"]:
                print(f"    survived {s['where']}: {s['old']}  ->  {s['new']}")
        print(f"{secs} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
