"""Generate tests/data/isa/amd_mfma_calculator.npz from AMD's matrix instruction calculator.

    git clone https://github.com/ROCm/amd_matrix_instruction_calculator /tmp/calc   # (MIT)
    pip install tabulate
    python tests/isa/gen_mfma_reference.py /tmp/calc/matrix_calculator.py [CACHE_DIR]

For every dense MFMA the calculator lists on gfx908 (CDNA1), gfx90a (CDNA2) and gfx942 (CDNA3),
every operand, and every CBSZ/ABID (A) and BLGP (B) setting the instruction supports, it runs
`matrix_calculator.py -a ARCH -i MNEMONIC -{A,B,C,D} --register-layout --csv [modifiers]` and
stores, for each matrix element, the VGPR, the lane and the lowest bit the calculator names.
Key: "ARCH/MNEMONIC/OPERAND/cbsz.abid.blgp", value int16 [blocks, rows, cols, 3] =
(vgpr, lane, low bit). test_amd_mfma.py compares the catalog against every entry. The
calculator's output is stored as data; none of its code is part of layoutsim.
"""
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ARCHS = ("gfx908", "gfx90a", "gfx942")
OUT = Path(__file__).resolve().parents[1] / "data" / "isa" / "amd_mfma_calculator.npz"
# "v3{17}.[15:0]", "v[1:0]{16}", "a5{2}"; a leading "-" marks a negated input (gfx942 f64 BLGP)
CELL = re.compile(r"-?(?:v|a)(?:\[(\d+):(\d+)\]|(\d+))\{(\d+)\}(?:\.\[(\d+):(\d+)\])?")


def run(calc, *args):
    out = subprocess.run([sys.executable, calc, *args], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"calculator {' '.join(args)}: {out.stderr.strip()[-300:]}")
    return out.stdout


def details(calc, arch, mn):
    text = run(calc, "-a", arch, "-i", mn, "-d")
    get = lambda key: re.search(rf"{key}:\s*(\S+)", text).group(1)
    return {"blocks": int(get("blocks")), "cbsz": get("CBSZ and ABID bits supported") == "True",
            "blgp": get("BLGP bits supported") == "True"}


def _cell(text):
    m = CELL.fullmatch(text)
    if m is None:
        raise ValueError(f"unexpected calculator cell {text!r}")
    return m.groups()


def layout(calc, arch, mn, operand, mods):
    text = run(calc, "-a", arch, "-i", mn, f"-{operand}", "-R", "-c", *mods)
    blocks, rows = [], None
    for line in text.splitlines():
        if line.startswith("Block"):
            nb = len(re.findall(r"\d+", line))
            rows = []
            blocks.append((nb, rows))
        elif rows is not None and re.match(r"^\d+,", line):
            rows.append([_cell(c) for c in line.split(",")[1:]])
    out = []
    for nb, rows in blocks:
        arr = np.array([[(int(g[2] if g[2] is not None else min(int(g[0]), int(g[1]))), int(g[3]),
                          int(g[5]) if g[5] is not None else 0) for g in r] for r in rows], np.int16)
        out += [arr] * nb            # "Blocks 0, 1, 2, 3": one table read by several blocks
    return np.stack(out)


def jobs(calc):
    for arch in ARCHS:
        names = run(calc, "-a", arch, "-L").split()
        for mn in (n for n in names if n.startswith("v_mfma_")):
            d = details(calc, arch, mn)
            yield arch, mn, "C", ()
            yield arch, mn, "D", ()
            cb = range(d["blocks"].bit_length()) if d["cbsz"] else [0]
            for cbsz in cb:
                for abid in range(1 << cbsz):
                    yield arch, mn, "A", (cbsz, abid, 0)
            for blgp in range(8) if d["blgp"] else [0]:
                yield arch, mn, "B", (0, 0, blgp)


def main(calc, cache=None):
    """cache: a folder keeping each layout as it is made, so an interrupted run resumes."""
    todo = list(jobs(calc))
    cache = Path(cache) if cache else None

    def one(job):
        arch, mn, op, mods = job
        args = []
        if mods and op == "A" and mods[0]:
            args = ["--cbsz", str(mods[0]), "--abid", str(mods[1])]
        if mods and op == "B" and mods[2]:
            args = ["--blgp", str(mods[2])]
        key = f"{arch}/{mn}/{op}/" + ".".join(str(m) for m in (mods or (0, 0, 0)))
        path = cache / (key.replace("/", "__") + ".npy") if cache else None
        if path is not None and path.exists():
            return key, np.load(path)
        try:
            arr = layout(calc, arch, mn, op, args)
        except (ValueError, RuntimeError) as e:
            raise RuntimeError(f"{key}: {e}") from None
        if path is not None:
            np.save(path, arr)
        return key, arr

    with ThreadPoolExecutor(4) as pool:
        result = dict(pool.map(one, todo))
    tmp = OUT.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **result)
    tmp.replace(OUT)
    print(f"{len(result)} layouts -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
