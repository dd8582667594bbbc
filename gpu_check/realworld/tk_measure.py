"""Measure ThunderKittens' launches (tk_cases.py) on the GPU, then merge the measurement:

    python -m gpu_check.realworld.tk_measure --out DIR [--tk-root .tk-src] [--ncu-runs 5]
    python -m gpu_check.realworld.tk_measure --merge DIR [--dir tests/data/realworld/tk]

On the GPU machine (.tk-src/ carried: `tk_build --prepare` writes it here; nvcc, gcc, ncu there),
the first builds every example with that machine's nvcc (tk_build.build_all: DIR/ptx/ gets the PTX
and ThunderKittens' LICENSE; the binaries stay in a temporary folder), then measures them as
hopper_measure does for the CUTLASS examples (`--group tk`): DIR/<case>.capture.json and
.buffers.npz (the launch as the harness made it, every buffer before and after), DIR/h200.json
(device, tools, five ncu runs per case), DIR/raw/. It reads nothing under tests/data.
--merge DIR (here) copies those files into --dir and replaces a committed PTX that differs from
DIR/ptx/'s (the binaries the GPU ran were compiled from that one), saying which.
"""
import argparse
import gzip
import shutil
import sys
import tempfile
from pathlib import Path

from . import hopper_measure as M
from . import tk_build
from .hopper_cases import ptx_name
from .tk_cases import TK


def measure(out, tk_root, ncu_runs, source_counters=False):
    with tempfile.TemporaryDirectory(prefix="tk-measure-") as bin_dir:
        tk_build.build_all(tk_root, Path(out) / "ptx", bin_dir, log=lambda s: M.log(s))
        return M.main(["--group", "tk", "--out", str(out), "--bin", bin_dir, "--ncu-runs", str(ncu_runs),
                       *(["--source-counters"] if source_counters else [])])


def merge(src, dest):
    """Copy a measurement folder into dest; the names of the PTX files replaced."""
    src, dest = Path(src), Path(dest)
    if not (src / "h200.json").is_file():
        raise FileNotFoundError(f"{src} holds no h200.json (python -m gpu_check.realworld.tk_measure --out DIR on the GPU)")
    dest.mkdir(parents=True, exist_ok=True)
    for case in TK.cases:
        for suffix in ("capture.json", "buffers.npz"):
            f = src / f"{case.name}.{suffix}"
            if f.is_file():
                shutil.copyfile(f, dest / f.name)
    shutil.copyfile(src / "h200.json", dest / "h200.json")
    replaced = []
    for ex in TK.examples:
        new, old = src / "ptx" / ptx_name(ex.stem, TK.arch), dest / ptx_name(ex.stem, TK.arch)
        if new.is_file() and (not old.is_file() or gzip.decompress(new.read_bytes()) != gzip.decompress(old.read_bytes())):
            shutil.copyfile(new, old)
            replaced.append(old.name)
    return replaced


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.tk_measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="the output directory (on the GPU machine)")
    ap.add_argument("--merge", metavar="DIR", help="copy a measurement folder into --dir")
    ap.add_argument("--tk-root", default=str(tk_build.SOURCE), help="the ThunderKittens checkout (default .tk-src)")
    ap.add_argument("--ncu-runs", type=int, default=5, help="ncu runs of each example (default 5)")
    ap.add_argument("--source-counters", action="store_true",
                    help="also one SourceCounters run per example (per SASS instruction, in DIR/raw/)")
    ap.add_argument("--dir", default=str(TK.data), help="where --merge copies to (default tests/data/realworld/tk)")
    args = ap.parse_args(argv)
    if bool(args.out) == bool(args.merge):
        print("tk_measure: give --out DIR (measure) or --merge DIR (copy a measurement), not both", file=sys.stderr)
        return 2
    try:
        if args.merge:
            replaced = merge(args.merge, args.dir)
            print(f"merged {args.merge} into {args.dir}" + (f"; PTX replaced: {', '.join(replaced)}" if replaced else ""))
            return 0
        return measure(args.out, args.tk_root, args.ncu_runs, args.source_counters)
    except (RuntimeError, OSError) as e:
        print(f"tk_measure: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
