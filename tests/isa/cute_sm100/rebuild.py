"""Rebuild tests/data/cute_sm100/: CuTe's SM100 TMEM load atoms and UMMA accumulator layouts as data.

    python tests/isa/cute_sm100/rebuild.py [--include DIR]

Gets the PyPI wheel nvidia-cutlass==4.2.0.0 (pip download, no dependencies; or the headers in
--include, an unpacked copy of that wheel's cutlass_library/source/include), compiles
print_tmem_atoms.cu beside this script as host code with nvcc (no GPU needed), runs it, and
stores per atom an int32 array [thread, word, 2]: the TMEM lane * 65536 + the 16-bit half-column
of the word's bit 0 and of its bit 16 (CuTe's addresses, lane stride TMEM::DP_b bits)
(tmem_load_atoms.npz); likewise print_umma_frg.cu's TMEM offset (lane << 16 | column) of every
D[i][j] of UMMA::tmem_frg_1sm/2sm<float> ("SMs M-per-SM N" -> int32 [M, N], umma_tmem_frg.npz) and of
the weight-stationary UMMA::tmem_frg_ws_1sm<float> ("ws M N"),
and of every scale factor of UMMA::tmem_sf_frg ("sfa|sfb MN VS NSF" -> int32 [(row, replica),
scale]: lane * 65536 + byte column; "sfb2 MN VS NSF": the 2x1SM M = 128 SFB of ScaleFactorDuplicated2by2,
[(row, half, replica), scale]), and of the sparse metadata of UMMA::tmem_e_frg / tmem_e_frg_ws
("e|ews M K bits" -> int32 [copies, M, K]: lane * 65536 + bit of every logical A element's metadata).
The wheel's licence goes beside the data.
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "data" / "cute_sm100"
WHEEL = "nvidia-cutlass==4.2.0.0"


def headers(tmp):
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp), WHEEL],
                   check=True)
    whl = next(Path(tmp).glob("nvidia_cutlass-*.whl"))
    with zipfile.ZipFile(whl) as z:
        z.extractall(Path(tmp) / "wheel")
    return Path(tmp) / "wheel" / "cutlass_library" / "source" / "include", Path(tmp) / "wheel"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include", help="an unpacked nvidia-cutlass 4.2.0.0 wheel's cutlass_library/source/include")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.include:
            inc = Path(args.include)
            root = inc.parents[2]
        else:
            inc, root = headers(tmp)
        docs = {}
        for prog in ("print_tmem_atoms", "print_umma_frg"):
            exe = Path(tmp) / prog
            subprocess.run(["nvcc", "-x", "cu", "-std=c++17", "--expt-relaxed-constexpr", "-I", str(inc),
                            str(HERE / f"{prog}.cu"), "-o", str(exe)], check=True)
            docs[prog] = json.loads(subprocess.run([str(exe)], check=True, capture_output=True,
                                                   text=True).stdout)
        doc = docs["print_tmem_atoms"]
        lic = next(root.glob("nvidia_cutlass-*.dist-info/licenses/LICENSE.txt"))
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lic, OUT / "LICENSE.txt")
    dp_b = doc["dp_b"]
    arrays = {}
    for name, atom in doc["atoms"].items():
        w = np.array(atom["words"], np.int64)              # [thread, word, (bit0, bit16, ok)]
        assert w[..., 2].all(), f"{name}: a 16-bit half is not contiguous in TMEM"
        lane, bit = w[..., :2] // dp_b, w[..., :2] % dp_b
        assert (bit % 16 == 0).all()
        arrays[name] = (lane * 65536 + bit // 16).astype(np.int32)
    tmp_out = OUT / "tmem_load_atoms.npz.tmp"
    with open(tmp_out, "wb") as f:
        np.savez_compressed(f, source=np.array(doc["source"]), **arrays)
    tmp_out.replace(OUT / "tmem_load_atoms.npz")
    frg = docs["print_umma_frg"]
    layouts = {k: np.array(v, np.int32).reshape(int(k.split()[1]), int(k.split()[2]))
               for k, v in frg["frg"].items()}
    layouts.update({k: np.array(v, np.int32).reshape(int(k.split()[1]), int(k.split()[2]))    # "ws M N"
                    for k, v in frg["ws"].items()})
    for k, v in frg["sf"].items():               # "sfa MN VS NSF": [(row, replica), scale] ->
        mn, nsf = int(k.split()[1]), int(k.split()[3])      # lane << 16 | byte column
        off = np.array(v, np.int64).reshape((2 if k.startswith("sfb2") else 4) * mn, nsf)
        lane, byte = off // frg["dp_uint8"], off % frg["dp_uint8"]
        layouts[k] = (lane * 65536 + byte).astype(np.int32)
    for k, v in frg["e"].items():                # "e|ews M K bits": [copies, M, K] -> lane << 16 | bit in the
        m, kk = int(k.split()[1]), int(k.split()[2])            # lane's row of columns (sparse metadata)
        pos = np.array(v, np.int64).reshape(-1, kk, m).transpose(0, 2, 1)
        layouts[k] = ((pos // frg["dp_b"]) * 65536 + pos % frg["dp_b"]).astype(np.int32)
    tmp_out = OUT / "umma_tmem_frg.npz.tmp"
    with open(tmp_out, "wb") as f:
        np.savez_compressed(f, source=np.array(frg["source"]), **layouts)
    tmp_out.replace(OUT / "umma_tmem_frg.npz")
    print(f"{len(arrays)} atoms, {len(layouts)} accumulator layouts -> {OUT}")


if __name__ == "__main__":
    main()
