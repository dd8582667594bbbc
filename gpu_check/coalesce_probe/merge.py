"""Merge coalescing corpora measured in separate runs into one file (a second run completes a
first one cut short by its time budget, or adds patterns designed from it).

    python -m gpu_check.coalesce_probe.merge FIRST.json SECOND.json [...] --out MERGED.json

Patterns are matched by id and must be the same access (op, offsets, active mask) in every run;
a pattern measured in several runs keeps the later measurement. Each run's chunks (with their
control counts) are kept, renumbered, and tagged with the run; `environment` is the first run's
and `runs` lists every run's environment (GPU, driver, CUDA, ncu, date).
"""
import argparse
import json
import sys
from pathlib import Path

from .measure import write_corpus

SAME = ("op", "offsets", "active")


def merge(corpora):
    """One corpus dict from several (oldest first)."""
    patterns, chunks, runs, problems = {}, [], [], []
    for run, data in enumerate(corpora):
        env = dict(data["environment"])
        env.pop("sass", None)                      # the first run's copy is kept in `environment`
        runs.append(env)
        first_chunk = len(chunks)
        chunks += [dict(c, run=run) for c in data.get("chunks", [])]
        problems += [f"run {run}: {p}" for p in data.get("problems", [])]
        for p in data["patterns"]:
            old = patterns.get(p["id"])
            if old is not None and any(old[k] != p[k] for k in SAME):
                raise ValueError(f"pattern {p['id']} differs between runs ({old['op']} / {p['op']}): "
                                 f"the corpora come from different corpus.py versions")
            if p.get("metrics"):
                patterns[p["id"]] = dict(p, chunk=p["chunk"] + first_chunk, run=run)
            elif old is None:
                patterns[p["id"]] = dict(p)
    head = {k: v for k, v in corpora[0].items() if k not in ("patterns", "chunks", "problems", "fit")}
    head["what"] = corpora[0]["what"] + f"; merged from {len(corpora)} runs"
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
    print(f"merge: {len(merged['patterns'])} patterns, {done} measured, from {len(data)} runs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
