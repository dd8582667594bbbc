"""Merge coalescing corpora measured in separate runs into one file (a second run completes a
first one cut short by its time budget, or adds patterns designed from it).

    python -m gpu_check.coalesce_probe.merge FIRST.json SECOND.json [...] --out MERGED.json

Patterns are matched by id and must be the same access (op, offsets, active mask) in every run;
a pattern measured in several runs keeps the later measurement, and every count (requests,
sectors, wavefronts, ideal sectors, each minus its own run's control) that the two runs measured
and that differs between them is listed in `problems` (a repeatable counter must not move).
Each run's chunks (with their control counts) are kept, renumbered, and tagged with the run;
`environment` is the first run's and `runs` lists every run's environment (GPU, driver, CUDA,
ncu, date). An input that is itself a merge brings its runs along, numbered after those before it.
"""
import argparse
import json
import sys
from pathlib import Path

from .measure import write_corpus

SAME = ("op", "offsets", "active")


def _counts(p, chunks):
    from .fit import QUANTITIES, measured
    control = chunks[p["chunk"]].get("control") or {} if p.get("chunk") is not None else {}
    return {q: measured(p, q, control) for q in QUANTITIES}


def merge(corpora):
    """One corpus dict from several (oldest first)."""
    patterns, chunks, runs, problems = {}, [], [], []
    for data in corpora:
        first_run, first_chunk = len(runs), len(chunks)
        for env in data.get("runs") or [data["environment"]]:
            env = dict(env)
            env.pop("sass", None)                  # the first run's copy is kept in `environment`
            runs.append(env)
        chunks += [dict(c, run=c.get("run", 0) + first_run) for c in data.get("chunks", [])]
        tag = (f"run {first_run}: " if "runs" not in data       # a merge's problems name its own runs
               else "" if first_run == 0 else f"(runs from {first_run} on) ")
        problems += [tag + p for p in data.get("problems", [])]
        for p in data["patterns"]:
            old = patterns.get(p["id"])
            if old is not None and any(old[k] != p[k] for k in SAME):
                raise ValueError(f"pattern {p['id']} differs between runs ({old['op']} / {p['op']}): "
                                 f"the corpora come from different corpus.py versions")
            if p.get("metrics"):
                new = dict(p, chunk=p["chunk"] + first_chunk, run=p.get("run", 0) + first_run)
                if old is not None and old.get("metrics"):
                    was, now = _counts(old, chunks), _counts(new, chunks)
                    moved = [f"{q} {was[q]:g} -> {now[q]:g}" for q in was
                             if was[q] is not None and now[q] is not None and was[q] != now[q]]
                    if moved:
                        problems.append(f"pattern {p['id']} ({p['op']}, {p.get('tag', '')!r}) measured again in "
                                        f"run {new['run']} differs from run {old['run']}: {', '.join(moved)}")
                patterns[p["id"]] = new
            elif old is None:
                patterns[p["id"]] = dict(p)
    head = {k: v for k, v in corpora[0].items() if k not in ("patterns", "chunks", "problems", "fit", "runs")}
    head["what"] = corpora[0]["what"].split("; merged from ")[0] + f"; merged from {len(runs)} runs"
    return dict(head, runs=runs, chunks=chunks, problems=problems,
                patterns=[patterns[i] for i in sorted(patterns)])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.coalesce_probe.merge", description=__doc__.splitlines()[0])
    ap.add_argument("corpora", nargs="+", help="coalesce_corpus.json files, oldest first")
    ap.add_argument("--out", required=True, help="the merged coalesce_corpus.json (written atomically)")
    args = ap.parse_args(argv)
    try:
        data = [json.loads(Path(path).read_text()) for path in args.corpora]
        merged = merge(data)
    except (OSError, ValueError, KeyError) as e:
        print(f"merge: {e}", file=sys.stderr)
        return 2
    write_corpus(args.out, merged)
    done = sum(1 for p in merged["patterns"] if p.get("metrics"))
    moved = [p for p in merged["problems"] if " measured again in run " in p]
    print(f"merge: {len(merged['patterns'])} patterns, {done} measured, from {len(merged['runs'])} runs -> "
          f"{args.out}" + (f"; {len(moved)} patterns measured twice differ (listed in its problems)" if moved else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
