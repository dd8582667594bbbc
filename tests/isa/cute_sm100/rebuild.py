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
print_sm120_sf.cu gives sm_120a's block-scaled mma.sync scale-factor layouts (SM120 traits' SFALayout /
SFBLayout: "<mma> sfa|sfb" -> int32 [thread, value], the column-major (M or N, K) index; "<mma> bits" ->
[SFA register bits, SFB register bits, VS]) in sm120_sf.npz; print_utccp.cu CuTe's tcgen05.cp atoms
(Copy_Traits<SM100_UTCCP_*_1cta>: "<atom> valid" -> int32 its ValID at every logical bit, "<atom> src" ->
its SrcLayout's value mode, "dp_b") in utccp.npz. --only names the programs to rebuild.
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
PROGRAMS = ["print_tmem_atoms", "print_umma_frg", "print_sm120_sf", "print_utccp"]


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
    ap.add_argument("--only", nargs="+", choices=PROGRAMS, default=PROGRAMS, help="the programs to rebuild")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.include:
            inc = Path(args.include)
            root = inc.parents[2]
        else:
            inc, root = headers(tmp)
        docs = {}
        for prog in args.only:
            exe = Path(tmp) / prog
            subprocess.run(["nvcc", "-x", "cu", "-std=c++17", "--expt-relaxed-constexpr", "-I", str(inc),
                            str(HERE / f"{prog}.cu"), "-o", str(exe)], check=True)
            docs[prog] = json.loads(subprocess.run([str(exe)], check=True, capture_output=True,
                                                   text=True).stdout)
        lic = next(root.glob("nvidia_cutlass-*.dist-info/licenses/LICENSE.txt"))
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lic, OUT / "LICENSE.txt")
    for prog, write in (("print_tmem_atoms", _atoms), ("print_umma_frg", _frg), ("print_sm120_sf", _sm120),
                        ("print_utccp", _utccp)):
        if prog in docs:
            write(docs[prog])


def _save(name, source, arrays):
    tmp_out = OUT / f"{name}.tmp"
    with open(tmp_out, "wb") as f:
        np.savez_compressed(f, source=np.array(source), **arrays)
    tmp_out.replace(OUT / name)


def _sm120(doc):
    arrays = {}
    for tag, m in doc["mma"].items():
        for key in ("sfa", "sfb"):
            arrays[f"{tag} {key}"] = np.array(m[key], np.int32).reshape(32, m["K"])
        arrays[f"{tag} bits"] = np.array([m["sfa_bits"], m["sfb_bits"], m["VS"]], np.int32)
    _save("sm120_sf.npz", doc["source"], arrays)
    print(f"{len(doc['mma'])} sm_120 block-scaled MMAs -> {OUT}")


def _utccp(doc):
    arrays = {"dp_b": np.array(doc["dp_b"], np.int32)}
    for tag, atom in doc["atoms"].items():
        arrays[f"{tag} valid"] = np.array(atom["valid"], np.int32)
        arrays[f"{tag} src"] = np.array(atom["src"], np.int32)
    _save("utccp.npz", doc["source"], arrays)
    print(f"{len(doc['atoms'])} tcgen05.cp atoms -> {OUT}")


def _atoms(doc):
    dp_b = doc["dp_b"]
    arrays = {}
    for name, atom in doc["atoms"].items():
        w = np.array(atom["words"], np.int64)              # [thread, word, (bit0, bit16, ok)]
        assert w[..., 2].all(), f"{name}: a 16-bit half is not contiguous in TMEM"
        lane, bit = w[..., :2] // dp_b, w[..., :2] % dp_b
        assert (bit % 16 == 0).all()
        arrays[name] = (lane * 65536 + bit // 16).astype(np.int32)
    _save("tmem_load_atoms.npz", doc["source"], arrays)
    print(f"{len(arrays)} atoms -> {OUT}")


def _frg(frg):
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
    _save("umma_tmem_frg.npz", frg["source"], layouts)
    print(f"{len(layouts)} accumulator layouts -> {OUT}")


if __name__ == "__main__":
    main()
