"""Build ThunderKittens' launches (tk_cases.py): our harness (tk_harness.cu) compiled against a
ThunderKittens checkout, one binary per example, and the PTX the replay runs.

    python -m gpu_check.realworld.tk_build --prepare [--mirror DIR]
    python -m gpu_check.realworld.tk_build [--tk-root DIR] [--bin DIR] [--dir DIR] [--check]

--prepare extracts what the build needs (include/, prototype/, kernels/gemm/,
kernels/attention/mha_h100/, LICENSE; about 2.5 MB) of commit tk_cases.COMMIT from the fetch
tool's snapshot into .tk-src/ (git-ignored: the lead carries it to the GPU machine, where
tk_measure builds again). The build compiles each example with nvcc -keep (hopper_build's
build_example): the stripped binary, xz-compressed, goes to --bin (default build/tk/); the PTX,
cut to the case's entry, to --dir (default tests/data/realworld/tk/<stem>.sm_90a.ptx.gz), with
ThunderKittens' LICENSE beside it. The checkout and the harness are linked at BUILD_DIR and
compiled there, so the PTX's .file paths are the same on every machine. --check writes nothing
and exits 1 when a PTX would change.
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_check.kernel_corpus import corpus as C

from .build import link_at
from .hopper_build import build_example, report, write_example
from .tk_cases import COMMIT, LICENSE, MIRROR, NVCC_FLAGS, TK

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / ".tk-src"
HARNESS = Path(__file__).resolve().with_name("tk_harness.cu")
BUILD_DIR = Path("/tmp/layoutsim-tk")
KEPT = ("LICENSE", "include", "prototype", "kernels/gemm", "kernels/attention/mha_h100")


def prepare(mirror=MIRROR, dest=SOURCE):
    """Extract KEPT of COMMIT from the git directory `mirror` into `dest` (replaced)."""
    if not (Path(mirror) / "objects").is_dir():
        raise FileNotFoundError(f"{mirror} is not a git directory (the ThunderKittens snapshot)")
    if Path(dest).exists():
        shutil.rmtree(dest)
    Path(dest).mkdir(parents=True)
    archive = subprocess.run(["git", f"--git-dir={mirror}", "archive", COMMIT, *KEPT], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def nvcc_command(example, keep_dir, binary):
    src = BUILD_DIR / "tk"
    return ["nvcc", *NVCC_FLAGS, f"-I{src}/include", f"-I{src}/prototype", f"-DTK_PROGRAM={example.program}",
            f'-DTK_SOURCE="{src}/{example.source}"', f"-gencode=arch=compute_{TK.arch[3:]},code={TK.arch}",
            "-cudart", "shared", "-keep", f"-keep-dir={keep_dir}", "-o", str(binary), str(BUILD_DIR / HARNESS.name)]


def build_all(tk_root, ptx_dir, bin_dir, check=False, log=print):
    """Build every example; the names of the PTX files that differ from ptx_dir's."""
    if not (Path(tk_root) / "include" / "kittens.cuh").is_file():
        raise FileNotFoundError(f"{tk_root}/include/kittens.cuh is missing (python -m gpu_check.realworld.tk_build "
                                "--prepare, or --tk-root a ThunderKittens checkout)")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    link_at(BUILD_DIR / "tk", Path(tk_root))
    link_at(BUILD_DIR / HARNESS.name, HARNESS)
    changed = []
    for ex in TK.examples:
        ptx, xz = build_example(ex, lambda keep, binary, ex=ex: nvcc_command(ex, keep, binary), TK, BUILD_DIR, log)
        if write_example(ex, ptx, xz, ptx_dir, bin_dir, TK, check):
            changed.append(ex.stem)
    if not check:
        C.write_atomic(Path(ptx_dir) / LICENSE, (Path(tk_root) / "LICENSE").read_bytes())
    return changed


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.tk_build", description=__doc__.splitlines()[0])
    ap.add_argument("--prepare", action="store_true", help=f"extract the sources the build needs into {SOURCE.name}/")
    ap.add_argument("--mirror", default=MIRROR, help="the ThunderKittens git directory --prepare reads")
    ap.add_argument("--tk-root", default=str(SOURCE), help="the ThunderKittens checkout (default .tk-src)")
    ap.add_argument("--bin", default=str(TK.bin), help="where the xz-compressed binaries go (default build/tk)")
    ap.add_argument("--dir", default=str(TK.data), help="where the PTX goes (default tests/data/realworld/tk)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a PTX would change")
    args = ap.parse_args(argv)
    try:
        if args.prepare:
            print(f"ThunderKittens {COMMIT} extracted into {prepare(args.mirror)}")
            return 0
        if shutil.which("nvcc") is None:
            raise FileNotFoundError("nvcc not found on PATH")
        changed = build_all(args.tk_root, args.dir, args.bin, args.check)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"tk_build: {e}", file=sys.stderr)
        return 2
    return report(len(TK.examples), changed, args.check)


if __name__ == "__main__":
    sys.exit(main())
