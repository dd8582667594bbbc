"""Rebuild tests/data/clc_cutlass/: clc_probe.cu beside this script compiled to sm_100a PTX with nvcc
against the PyPI wheel nvidia-cutlass==4.2.0.0 (its cutlass/gemm/kernel/sm100_tile_scheduler.hpp emits
the cluster-launch-control PTX), and the wheel's licence beside it.

    python tests/ptx/clc_cutlass/rebuild.py [--include DIR]

--include: an unpacked nvidia-cutlass 4.2.0.0 wheel's cutlass_library/source/include (else the wheel is
fetched with pip download, as tests/isa/cute_sm100/rebuild.py does). No GPU is needed.
"""
import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "data" / "clc_cutlass"
sys.path.insert(0, str(HERE.parents[1] / "isa" / "cute_sm100"))
from rebuild import headers  # noqa: E402  (the wheel's headers, fetched the same way)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include", help="an unpacked nvidia-cutlass 4.2.0.0 wheel's cutlass_library/source/include")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inc, root = (Path(args.include), Path(args.include).parents[2]) if args.include else headers(tmp)
        OUT.mkdir(parents=True, exist_ok=True)
        out = Path(tmp) / "clc_probe.ptx"
        subprocess.run(["nvcc", "-ptx", "-std=c++17", "--expt-relaxed-constexpr", "-I", str(inc), "-arch=sm_100a",
                        "-o", str(out), str(HERE / "clc_probe.cu")], check=True)
        with open(out, "rb") as f, gzip.GzipFile(OUT / "clc_probe.sm_100a.ptx.gz", "wb", mtime=0) as g:
            g.write(f.read())                       # gzip as the other sm_100a PTX of tests/data (no mtime)
        shutil.copyfile(next(root.glob("nvidia_cutlass-*.dist-info/licenses/LICENSE.txt")), OUT / "LICENSE.txt")
    print(f"-> {OUT}")


if __name__ == "__main__":
    main()
