"""Commit a measured SFU result into layoutsim: the tables and facts layoutsim.numerics.sfu reads.

    python -m gpu_check.sfu.commit RESULT_DIR [--check] [--json]

RESULT_DIR is what `python -m gpu_check.sfu.measure --out RESULT_DIR` wrote on the GPU (sfu.json,
tables/, f16_tables.npz). Written to layoutsim/numerics/data/sfu_sm90/:
  measured.json        the run's environment and, per f32 primitive, every hypothesis with its
                       mismatch count over all 2^32 inputs and its samples [x, GPU, model], the
                       bins of the one the model uses, the error against the correctly rounded
                       value; the non-ftz forms, sin/cos composition and x2 checks; table metadata
  <op>.<table>.{ref,err}.bz2   the MUFU tables of sfu.TABLES, as measured (sfu_tables codec)
  f16.npz              the 16-bit forms of sfu.TABLES16, every input
  errhist.npz          for the primitives with tables: per sign+exponent bin (512), how many inputs
                       the GPU's result was d ulps from the correctly rounded one (probe.cu errhist:
                       d = -16..16, then more, then NaN on one side only)
--check writes nothing and exits 1 if the directory differs from what RESULT_DIR gives.
"""
import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from gpu_check.kernel_corpus.corpus import npz_bytes, write_atomic
from layoutsim.numerics import sfu, sfu_tables

from .measure import OP16, PROPERTIES


def _summary(op, rec, used):
    """The record of one f32 primitive; the model layoutsim uses is sfu.HYPOTHESIS (not the run's
    "best", which counted properties such as tanh's odd symmetry as hypotheses)."""
    out = {k: rec[k] for k in ("ptx", "error_vs_correctly_rounded") if k in rec}
    out["model_hypothesis"] = used
    out["hypotheses"] = []
    for h in rec["hypotheses"]:
        keep = {k: h[k] for k in ("hyp", "what", "mismatches", "samples") if k in h}
        if (op, h["hyp"]) in PROPERTIES:
            keep["property"] = True           # true of the function, not a model of it
        if h["hyp"] == used:
            keep["bins"] = h["bins"]          # where the model fails (empty when exact)
        out["hypotheses"].append(keep)
    return out


def build(result):
    """{file name: bytes} of the data directory, from a measured result directory."""
    result = Path(result)
    raw = (result / "sfu.json").read_bytes()
    doc = json.loads(raw)
    if doc.get("environment", {}).get("dry_run"):
        raise ValueError(f"{result}: a --dry-run result (no GPU) is not a measurement")
    files = {}
    metas = {f"{t['op']}.{t['table']}": t for t in doc["tables"] if t.get("kept")}
    tables = {}
    for op, names in sfu.TABLES.items():
        for name in names:
            key = f"{op}.{name}"
            if key not in metas:
                raise ValueError(f"{result}: table {key} was not kept by the run")
            blobs = {k: (result / "tables" / f"{key}.{k}.bz2").read_bytes() for k in ("ref", "err")}
            sfu_tables.decode(metas[key], blobs)          # checks the SHA-256
            files.update({f"{key}.{k}.bz2": b for k, b in blobs.items()})
            tables[key] = metas[key]
    by_name = {v: k for k, v in OP16.items()}
    with np.load(result / "f16_tables.npz", allow_pickle=False) as z:
        f16 = {ptx: z[f"op{by_name[ptx]}"] for ptx in sfu.TABLES16}
    files["f16.npz"] = npz_bytes(f16)
    # per sign+exponent bin, the GPU's distance from the correctly rounded value (probe.cu errhist)
    with np.load(result / "sfu_counts.npz", allow_pickle=False) as z:
        files["errhist.npz"] = npz_bytes({op: z[f"errhist_{op}"] for op in sfu.TABLES})
    measured = {
        "schema": 1,
        "what": "approximate-math instructions measured over every input on the GPU; read by layoutsim.numerics.sfu",
        "source": {**doc["environment"], "probe": doc.get("probe", {}).get("nvcc"),
                   "sfu_json_sha256": hashlib.sha256(raw).hexdigest(),
                   "committed_by": "python -m gpu_check.sfu.commit RESULT_DIR"},
        "f32": {op: _summary(op, rec, sfu.HYPOTHESIS.get(op)) for op, rec in doc["f32"].items()},
        "compose": doc["compose"], "sincos_composition": doc["sincos_composition"],
        "f16x2": {k: v for k, v in doc["f16"].items() if "against" in v},
        "f16_tables": {ptx: {"sha256": sfu_tables.sha256(t.astype(np.uint32)), "inputs": int(t.size)}
                       for ptx, t in f16.items()},
        "tables": tables,
        "problems": doc["problems"], "skipped": doc["skipped"],
    }
    files["measured.json"] = (json.dumps(measured, indent=1) + "\n").encode()
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.sfu.commit", description=__doc__.splitlines()[0])
    ap.add_argument("result", help="the directory gpu_check.sfu.measure --out wrote")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the data directory would change")
    ap.add_argument("--json", action="store_true", help='print {"dir": path, "changed": [file names], "bytes": n}')
    args = ap.parse_args(argv)
    if not (Path(args.result) / "sfu.json").is_file():
        print(f"commit: {args.result!r} has no sfu.json (give the directory gpu_check.sfu.measure --out wrote)",
              file=sys.stderr)
        return 2
    try:
        files = build(args.result)
    except (ValueError, KeyError, OSError) as e:
        print(f"commit: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    changed = [n for n, b in sorted(files.items()) if not (sfu.DATA / n).is_file() or (sfu.DATA / n).read_bytes() != b]
    stale = sorted(p.name for p in sfu.DATA.glob("*") if p.is_file() and p.name not in files) if sfu.DATA.is_dir() else []
    if not args.check:
        sfu.DATA.mkdir(parents=True, exist_ok=True)
        for n in changed:
            write_atomic(sfu.DATA / n, files[n])
        for n in stale:
            (sfu.DATA / n).unlink()
    total = sum(len(b) for b in files.values())
    if args.json:
        print(json.dumps({"dir": str(sfu.DATA), "changed": changed + stale, "bytes": total}))
    else:
        print(f"{sfu.DATA}: {len(files)} files, {total} bytes; "
              + (f"{len(changed + stale)} differ" if args.check else f"{len(changed)} written, {len(stale)} removed"))
    return 1 if (args.check and (changed or stale)) else 0


if __name__ == "__main__":
    sys.exit(main())
