"""A captured group's launches (hopper_cases.Group: CUTLASS's Hopper examples, ThunderKittens) on
this machine, without a GPU:

    python -m gpu_check.realworld.hopper_local [--group hopper|tk] [--bin DIR] [--dir DIR]

runs each example binary (hopper_build, tk_build) with its command line under the capture shim
(hopper_capture.c) over the CPU stand-in for the CUDA runtime (hopper_fake_runtime.c): the
example's own host code builds its kernels' Params (TMA descriptors encoded by the stand-in, which
the shim logs with their arguments), so <case>.cpu.json holds what the H200's capture holds except
the buffers' contents (and the 128 bytes of each map, which only the driver encodes). The
executor's CPU tests (tests/gpu_check/test_realworld_hopper.py, test_realworld_tk.py) run these launches on seeded
operands against numpy's GEMM; the H200's capture replaces them where it exists.
"""
import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from gpu_check.kernel_corpus import corpus as C

from . import hopper_measure as M
from .hopper_build import PARAM
from .hopper_cases import GROUP_NAMES, HOPPER, group as group_named, ptx_name
from .hopper_replay import files

FAKE = Path(__file__).resolve().with_name("hopper_fake_runtime.c")


def param_sizes(directory, group=HOPPER):
    """'<entry> <bytes>' lines: each captured entry's one by-value parameter, from the PTX."""
    import gzip
    lines = []
    for ex in group.examples:
        text = gzip.decompress((Path(directory) / ptx_name(ex.stem, group.arch)).read_bytes()).decode()
        lines += [f"{n} {size}" for n, size in PARAM.findall(text)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.hopper_local", description=__doc__.splitlines()[0])
    ap.add_argument("--group", default="hopper", choices=GROUP_NAMES, help="the CUTLASS examples or ThunderKittens (tk)")
    ap.add_argument("--bin", help="the binaries its build wrote (default build/<group>)")
    ap.add_argument("--dir", help="where the PTX is and <case>.cpu.json go (default tests/data/realworld/<group>)")
    args = ap.parse_args(argv)
    g = group_named(args.group)
    args.bin, args.dir = args.bin or str(g.bin), args.dir or str(g.data)
    if shutil.which("gcc") is None:
        print("hopper_local: gcc not found", file=sys.stderr)
        return 2
    problems = []
    with tempfile.TemporaryDirectory(prefix="hopper-local-") as work:
        shim = M.build_shim(work)
        fake = Path(work) / "fake_runtime.so"
        M.gcc(FAKE, fake)
        sizes = Path(work) / "param_sizes"
        sizes.write_text(param_sizes(args.dir, g))
        for ex in g.examples:
            exe = M.unpack(args.bin, ex.stem, work)
            cap_dir = Path(work) / "cap" / ex.stem
            M.capture(exe, ex.argv, f"{shim} {fake}", cap_dir, problems, {"FAKE_PARAM_SIZES": str(sizes)}, g.match)
            for case in (c for c in g.cases if c.example == ex.stem):
                src = cap_dir / f"launch{case.launch}.json"
                if not src.is_file():
                    problems.append(f"{case.name}: no {src.name}")
                    continue
                doc = json.loads(src.read_text())
                doc.update(case=case.name, example=case.example, launch=case.launch, runtime="hopper_fake_runtime.c")
                C.write_atomic(files(case.name, args.dir, "cpu")[0], (json.dumps(doc, indent=1) + "\n").encode())
    for p in problems:
        print(f"hopper_local: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
