"""Build tests/data/tcgen05_cute/ from the pip package nvidia-cutlass==4.2.0.0: the CuTe Blackwell
tutorial kernels as sm_100a PTX (gzip), CuTe's own tcgen05.mma instruction descriptors, the
package's licence.

    pip install nvidia-cutlass==4.2.0.0
    python -m gpu_check.tcgen05_cute.build [--package-root DIR] [--check]

The package's source tree is linked at BUILD_DIR and compiled there (nvcc writes source paths into
the PTX: the same PTX on every machine with nvcc 13.0). print_idesc.cu beside this script (ours) is
compiled as host code and prints UMMA::make_instr_desc's values for a few (kind, types, M, N,
majors), which tests/ptx/test_tcgen05_cute.py decodes with layoutsim's own reading and passes to
the tutorial kernel as its TiledMMA's descriptor. --check writes nothing and exits 1 when a file
would change. No GPU is needed (nor is there a Blackwell one: the kernels run in layoutsim.ptx).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gpu_check.kernel_corpus import corpus as C
from gpu_check.kernel_corpus.build import nvcc_version
from gpu_check.realworld.build import DIST_INFO, package_root
from layoutsim.archs import target_of_device

HERE = Path(__file__).resolve().parent
DATA = C.measured_data("tcgen05_cute")
PACKAGE = "nvidia-cutlass==4.2.0.0"
BUILD_DIR = "/tmp/layoutsim-tcgen05"
SOURCE = f"{BUILD_DIR}/cutlass"
TUTORIAL = "examples/cute/tutorial/blackwell"
# (stem, what it shows); each compiled for sm_100a
KERNELS = (("01_mma_sm100", "CuTe Blackwell tutorial 01: cooperative copies to 128B-swizzled K-major shared "
                            "tiles, tcgen05.mma.cta_group::1.kind::f16 128x256x16 from sm_100 descriptors into "
                            "TMEM, tcgen05.commit to an mbarrier, tcgen05.ld.32x32b epilogue"),
           ("02_mma_tma_sm100", "CuTe Blackwell tutorial 02: as 01, the tiles brought by TMA (128B swizzle, "
                                "an mbarrier with transaction bytes); CuTe's TMA atoms passed by value"),
           ("03_mma_tma_multicast_sm100", "CuTe Blackwell tutorial 03: as 02 in 4x4 clusters, each CTA's TMA "
                                          "slice multicast along its cluster row/column, tcgen05.commit "
                                          "multicast to the CTAs that read the tiles"),
           ("04_mma_tma_2sm_sm100", "CuTe Blackwell tutorial 04: as 03 with 2-CTA MMAs (cta_group::2, "
                                    "256x256x16 per CTA pair), TMA .cta_group::2 signalling the even CTA's "
                                    "mbarrier, commit multicast from the pair"),
           ("05_mma_tma_epi_sm100", "CuTe Blackwell tutorial 05: as 04 with a TMA epilogue (C loaded and D "
                                    "stored by TMA through 128B-swizzled shared tiles)"))
TARGET = target_of_device("sm_100")
FLAGS = ("-ptx", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr", f"-I{SOURCE}/include",
         f"-I{SOURCE}/tools/util/include", f"-I{SOURCE}/{TUTORIAL}", f"-arch={TARGET}")
LICENSE = "LICENSE.cutlass.txt"


def ptx_file(stem):
    return f"{stem}.{TARGET}.ptx.gz"


def nvcc_command(stem):
    return ["nvcc", *FLAGS, "-o", f"{BUILD_DIR}/{stem}.ptx", f"{SOURCE}/{TUTORIAL}/{stem}.cu"]


def _link(root):
    src = (Path(root) / "cutlass_library" / "source").resolve()
    Path(BUILD_DIR).mkdir(parents=True, exist_ok=True)
    link = Path(SOURCE)
    if link.is_symlink() and Path(os.readlink(link)) == src:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(src)


def idescs():
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "print_idesc"
        subprocess.run(["nvcc", "-x", "cu", "-std=c++17", "--expt-relaxed-constexpr", f"-I{SOURCE}/include",
                        str(HERE / "print_idesc.cu"), "-o", str(exe)], check=True, capture_output=True)
        return json.loads(subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout)


def planned_files(root):
    _link(root)
    files, kernels = {}, []
    for stem, what in KERNELS:
        cmd = nvcc_command(stem)
        r = subprocess.run(cmd, cwd=BUILD_DIR, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"{stem}: " + next((x for x in r.stderr.splitlines() if "error" in x), "nvcc failed"))
        text = Path(f"{BUILD_DIR}/{stem}.ptx").read_bytes()
        files[ptx_file(stem)] = gzip.compress(text, 9, mtime=0)
        kernels.append({"stem": stem, "source": f"{TUTORIAL}/{stem}.cu", "ptx": ptx_file(stem),
                        "nvcc": " ".join(cmd), "what": what})
    manifest = {"package": PACKAGE, "nvcc_version": nvcc_version(), "kernels": kernels, "idesc": idescs(),
                "idesc_source": "CuTe UMMA::make_instr_desc, printed by gpu_check/tcgen05_cute/print_idesc.cu"}
    files["manifest.json"] = (json.dumps(manifest, indent=1) + "\n").encode()
    files[LICENSE] = (Path(root) / DIST_INFO / "licenses" / "LICENSE.txt").read_bytes()
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package-root")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    try:
        files = planned_files(package_root(args.package_root))
    except (FileNotFoundError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    changed = [n for n, data in files.items() if not (DATA / n).is_file() or (DATA / n).read_bytes() != data]
    if args.check:
        print("\n".join(f"would change: {n}" for n in changed) or "up to date")
        return 1 if changed else 0
    DATA.mkdir(parents=True, exist_ok=True)
    for n in changed:
        C.write_atomic(DATA / n, files[n])
        print(f"wrote {DATA / n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
