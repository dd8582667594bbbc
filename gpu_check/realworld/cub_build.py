"""Build the CUB part of the real-world corpus from the pip package: the PTX (committed) and the
capture program (carried to the GPU, not committed).

    pip download --no-deps nvidia-cuda-cccl==13.0.85 && unzip the wheel into DIR   (or pip install it)
    python -m gpu_check.realworld.cub_build [--package-root DIR] [--check] [--json]

The package (nvidia-cuda-cccl 13.0.85: CCCL 3.0.1, the CUB/Thrust/libcu++ headers nvcc 13.0 ships)
holds its headers in nvidia/cu13/include/cccl/ under DIR (default: where Python finds the `nvidia`
namespace package). Our host program gpu_check/realworld/cub/cub_launches.cu (CUB's device-wide
algorithms, as CUB documents their calls) and capture.cpp (the launch recorder) are copied into
BUILD_DIR and compiled there with the headers linked at BUILD_DIR/cccl, so nvcc writes the same
paths into the PTX on every machine:
  * tests/data/realworld/cub/cub_launches.sm_90.ptx.gz: what `nvcc -ptx` prints for the program
    (every kernel the algorithms instantiate), gzip-compressed, beside the package's licence;
  * build/cub_launches/cub_launches: the program, linked with the recorder (-cudart shared), which
    gpu_check.realworld.cub_measure runs on the GPU (carry build/cub_launches there).
Both use the same front-end flags (FLAGS), so the binary's kernels are the PTX's. --check writes
nothing and exits 1 when the PTX or licence would change. Exit 2: no nvcc, no package, a compile
error (one line).
"""
import argparse
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .build import DATA as REALWORLD, build_and_write, link_at

PACKAGE = "nvidia-cuda-cccl==13.0.85"
DATA = REALWORLD / "cub"
HERE = Path(__file__).resolve().parent / "cub"
ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = "/tmp/layoutsim-realworld/cub"
BINARY_DIR = ROOT / "build" / "cub_launches"             # ignored by git: carried to the GPU
PTX = "cub_launches.sm_90.ptx.gz"
LICENSE = "LICENSE.cccl.txt"
DIST_INFO = "nvidia_cuda_cccl-13.0.85.dist-info"
ARCH = "sm_90"
FLAGS = ("-lineinfo", "-std=c++17", f"-arch={ARCH}", "-Icccl")
PTX_COMMAND = f"cd {BUILD_DIR} && nvcc -ptx {' '.join(FLAGS)} -o cub_launches.{ARCH}.ptx cub_launches.cu"
BINARY_COMMAND = (f"cd {BUILD_DIR} && nvcc -cudart shared {' '.join(FLAGS)} -o cub_launches cub_launches.cu "
                  f"capture.cpp -ldl")


def package_root(given=None):
    if given:
        return Path(given)
    spec = importlib.util.find_spec("nvidia")
    for loc in (spec.submodule_search_locations if spec else None) or ():
        if (Path(loc) / "cu13" / "include" / "cccl" / "cub").is_dir():
            return Path(loc).parent
    raise FileNotFoundError(f"nvidia/cu13/include/cccl not found: pip install {PACKAGE}, or give --package-root")


def prepare(root):
    """BUILD_DIR with our two sources and the package's headers linked at BUILD_DIR/cccl."""
    headers = Path(root) / "nvidia" / "cu13" / "include" / "cccl"
    if not (headers / "cub" / "cub.cuh").is_file():
        raise FileNotFoundError(f"{headers}/cub/cub.cuh is missing: not the {PACKAGE} package")
    b = Path(BUILD_DIR)
    b.mkdir(parents=True, exist_ok=True)
    for name in ("cub_launches.cu", "capture.cpp"):
        shutil.copyfile(HERE / name, b / name)
    link_at(b / "cccl", headers)


def _nvcc(cmd, what):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if r.returncode:
        msg = [x for x in (r.stderr or r.stdout).splitlines() if "error" in x] or ["nvcc failed"]
        raise RuntimeError(f"{what}: {msg[0]}")


def planned_files(root, log=print):
    prepare(root)
    _nvcc(PTX_COMMAND, "the PTX")
    log(f"compiled cub_launches.cu to PTX ({PTX_COMMAND})")
    ptx = (Path(BUILD_DIR) / f"cub_launches.{ARCH}.ptx").read_bytes()
    lic = Path(root) / DIST_INFO / "licenses" / "License.txt"
    if not lic.is_file():
        raise FileNotFoundError(f"{lic} is missing: the package's licence is kept beside its PTX")
    meta = {"package": PACKAGE, "source": "gpu_check/realworld/cub/cub_launches.cu", "arch": ARCH,
            "ptx": PTX, "nvcc": PTX_COMMAND, "binary": BINARY_COMMAND}
    return {PTX: gzip.compress(ptx, 9, mtime=0), LICENSE: lic.read_bytes(),
            "build.json": (json.dumps(meta, indent=1) + "\n").encode()}


def build_binary(log=print):
    """The capture program, into BINARY_DIR (prepare() first)."""
    _nvcc(BINARY_COMMAND, "the capture program")
    BINARY_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(BUILD_DIR) / "cub_launches", BINARY_DIR / "cub_launches")
    os.chmod(BINARY_DIR / "cub_launches", 0o755)
    log(f"built {BINARY_DIR / 'cub_launches'} ({(BINARY_DIR / 'cub_launches').stat().st_size} bytes)")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.cub_build", description=__doc__.splitlines()[0])
    ap.add_argument("--package-root", help=f"where {PACKAGE} is unpacked (the folder holding nvidia/cu13/)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a committed file would change")
    ap.add_argument("--no-binary", action="store_true", help="only the PTX (the capture program takes minutes)")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool}')
    args = ap.parse_args(argv)

    def plan(log):
        files = planned_files(package_root(args.package_root), log)
        if not (args.check or args.no_binary):
            build_binary(log)
        return files
    return build_and_write("cub_build", DATA, plan, args.check, args.json)


if __name__ == "__main__":
    sys.exit(main())
