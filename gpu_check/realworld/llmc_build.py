"""Build tests/data/realworld/llmc/ from an llm.c checkout: PTX, seeded inputs, manifest, llm.c's licence.

    git clone https://github.com/karpathy/llm.c
    python -m gpu_check.realworld.llmc_build --src llm.c [--commit SHA] [--cublas-include DIR]
                                             [--dir DIR] [--check] [--json] [--reuse]

--src: the checkout (the directory holding dev/cuda/ and LICENSE); its commit names the manifest's
package (karpathy/llm.c@<commit>): git's HEAD there, or --commit for a copy without .git. The
source is never committed here, only nvcc's PTX of it. nvcc writes absolute source paths into
the PTX, so the checkout is linked at BUILD_DIR/llm.c and compiled there (build.py's way). Every
dev/cuda file includes common.h, which includes cublas_v2.h and cublasLt.h (host code only): their
directory (--cublas-include; default the CUDA toolkit's include/ or the nvidia-cublas wheel's) is
linked at BUILD_DIR/cublas, only its cublas*.h, so the toolkit's other headers stay the ones used.
--check writes nothing and exits 1 when a file would change. Exit 2: no nvcc, no checkout, no
cuBLAS headers, a compile error or an argument mismatch (one line).
"""
import argparse
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

from . import build as B
from .llmc_cases import CASES, PACKAGE

DATA = B.DATA / "llmc"
BUILD_DIR = "/tmp/layoutsim-llmc"
SOURCE = f"{BUILD_DIR}/llm.c"                 # a link to the checkout
CUBLAS = f"{BUILD_DIR}/cublas"                # links to the cuBLAS headers common.h includes
FLAGS = ("-ptx", "-lineinfo", "-std=c++17", f"-I{CUBLAS}")
LICENSE = "LICENSE.llm.c.txt"


def nvcc_command(case):
    return (f"cd {BUILD_DIR} && nvcc {' '.join(FLAGS)} -arch={case.arch} -o {B.ptx_file(case.stem, case.arch)} "
            f"{SOURCE}/{case.source}")


def checkout_commit(src, given=None):
    if given:
        return given
    r = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True)
    if r.returncode:
        raise FileNotFoundError(f"{src} is not a git checkout: give its commit with --commit")
    return r.stdout.strip()


def cublas_include(given=None):
    """A directory holding cublas_v2.h and cublasLt.h."""
    places = [Path(given)] if given else []
    if not given:
        nvcc = shutil.which("nvcc")
        places += [Path(nvcc).resolve().parent.parent / "include"] if nvcc else []
        spec = importlib.util.find_spec("nvidia")
        for root in (spec.submodule_search_locations if spec and spec.submodule_search_locations else []):
            places += [Path(root) / "cu13" / "include", Path(root) / "cublas" / "include"]
    for p in places:
        if (p / "cublas_v2.h").is_file() and (p / "cublasLt.h").is_file():
            return p
    raise FileNotFoundError(f"no cublas_v2.h and cublasLt.h in {', '.join(map(str, places)) or 'the places looked in'}"
                            " (pip install nvidia-cublas, or give --cublas-include)")


def link_sources(src, include):
    if not (Path(src) / "dev" / "cuda" / "common.h").is_file():
        raise FileNotFoundError(f"{src}/dev/cuda/common.h is missing: not an llm.c checkout")
    Path(CUBLAS).mkdir(parents=True, exist_ok=True)
    B.link_at(Path(SOURCE), src)
    for h in sorted(Path(include).glob("cublas*.h")):
        B.link_at(Path(CUBLAS) / h.name, h)


def planned_files(src, commit, include, log=print, reuse=False):
    link_sources(src, include)
    ptx = B.compile_all(log, reuse, CASES, nvcc_command, BUILD_DIR)
    return B.corpus_files(ptx, CASES, Path(src) / "LICENSE", LICENSE, f"{PACKAGE}@{commit}", nvcc_command)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.llmc_build", description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="an llm.c checkout (holding dev/cuda/ and LICENSE)")
    ap.add_argument("--commit", help="the checkout's commit (default: git rev-parse HEAD in --src)")
    ap.add_argument("--cublas-include", help="the directory of cublas_v2.h and cublasLt.h (default: found)")
    ap.add_argument("--dir", default=str(DATA), help="the corpus directory (default tests/data/realworld/llmc)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool}')
    ap.add_argument("--reuse", action="store_true", help="keep the PTX BUILD_DIR holds from the same nvcc command")
    args = ap.parse_args(argv)
    return B.build_and_write(
        "llmc_build", Path(args.dir),
        lambda log: planned_files(args.src, checkout_commit(args.src, args.commit), cublas_include(args.cublas_include),
                                  log, args.reuse), args.check, args.json)


if __name__ == "__main__":
    sys.exit(main())
