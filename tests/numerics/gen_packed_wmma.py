"""Transcribe AMD's packed 16-bit-output WMMA captures (gfx1201) into
tests/data/numerics/amd/gfx1201_packed_wmma.json.

    python tests/numerics/gen_packed_wmma.py PATH/TO/goc/tests/packed_wmma_fixtures.h

The header (bjacob/goc tests/packed_wmma_fixtures.h, MIT, Copyright (c) 2026 Advanced Micro
Devices, Inc.: "RDNA4 subset of rocjitsu tests/fixtures/float_dot/packed_wmma_cases.h. Raw
gfx1201 captures, both wave sizes") declares kPackedInputs[bf16][fixture] = {a, b, c} (256
16-bit elements each, row-major logical matrices) and kPackedExpected[wave64][bf16][fixture]
(256 row-major D elements). This script reads every hex literal of the two arrays in order,
checks the counts, and writes each 256-element array as one hex string (4 digits per element);
the register loading that goc's test uses for them is described in the JSON's "notes".
"""
import json
import os
import re
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "numerics" / "amd" / "gfx1201_packed_wmma.json"
GOC_COMMIT = "6dba31bce10981b8d2eeeb3b53eb320cfad90e83"
NOTES = (
    "Raw 16-bit bits as hex, 4 digits per element, 256 elements per string, row-major: "
    "inputs[fmt][fixture] = {a: A[m][k] at m*16+k, b: B[k][n] at k*16+n, c: C[m][n] (the low 16 "
    "bits of C)}; expected[wave][fmt][fixture] = D[m][n] at m*16+n of V_WMMA_F16_16X16X16_F16 / "
    "V_WMMA_BF16_16X16X16_BF16. The capture loaded registers as goc tests/packed_wmma_test.cpp "
    "load() does (wave W, R = 128/W VGPRs per operand, lane l, i = l % 16, register r < R): "
    "A VGPR r = a[i*16+k] | a[i*16+k+1] << 16 and B VGPR r = b[k*16+i] | b[(k+1)*16+i] << 16 with "
    "k = (l // 16) * (256/W) + 2r; C VGPR r = c[row*16+i] | c[(row+1)*16+i] << 16 with row = "
    "(l // 16) * 8 + 2r (wave32) or ((l >> 4) & 1) * 8 + (l >> 5) * 4 + 2r (wave64); D[row][col] "
    "is read from lane col + 16*(row // 8) (+ 32*((row // 4) % 2) in wave64), VGPR (row % "
    "(256/W)) // 2, bits 16*(row % 2).")


def hex_arrays(text, name, count):
    """The `count` 256-element arrays of declaration `name`, in order."""
    start = text.index(name)
    nxt = text.find("inline constexpr", start + len(name))
    body = text[start:nxt if nxt > 0 else len(text)]
    body = body[body.index("=") + 1:]
    values = [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]+", body)]
    if len(values) != count * 256 or any(v > 0xFFFF for v in values):
        raise SystemExit(f"{name}: {len(values)} 16-bit values, expected {count * 256}")
    return ["".join(f"{v:04x}" for v in values[i * 256:(i + 1) * 256]) for i in range(count)]


def main(argv):
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    text = Path(argv[0]).read_text()
    ins = hex_arrays(text, "kPackedInputs[2][7]", 2 * 7 * 3)
    outs = hex_arrays(text, "kPackedExpected[2][2][7][256]", 2 * 2 * 7)
    fmts = ("f16", "bf16")
    doc = {
        "format": "layoutsim-amd-captures", "version": 1, "arch": "gfx1201",
        "gpu": "AMD Radeon AI Pro R9700 (gfx1201)",
        "captured_by": "AMD (rocjitsu): ROCm/rocm-systems, rocjitsu "
                       "tests/fixtures/float_dot/packed_wmma_cases.h (RDNA4 subset)",
        "copied_from": [f"bjacob/goc tests/packed_wmma_fixtures.h @ {GOC_COMMIT}",
                        f"bjacob/goc tests/packed_wmma_test.cpp @ {GOC_COMMIT} (register loading)"],
        "license": "MIT, Copyright (c) 2026 Advanced Micro Devices, Inc. (SPDX-License-Identifier: MIT)",
        "generator": "python tests/numerics/gen_packed_wmma.py goc/tests/packed_wmma_fixtures.h",
        "header_notes": "Seeds 12056923/12056924: fractional, underflow, special, cancellation and "
                        "rare accumulator-alignment cases. Expected values are hardware captures.",
        "notes": NOTES,
        "inputs": {f: [dict(zip("abc", ins[(b * 7 + i) * 3:(b * 7 + i) * 3 + 3])) for i in range(7)]
                   for b, f in enumerate(fmts)},
        "expected": {f"wave{w}": {f: outs[(wi * 2 + b) * 7:(wi * 2 + b) * 7 + 7] for b, f in enumerate(fmts)}
                     for wi, w in enumerate((32, 64))},
    }
    fd, tmp = tempfile.mkstemp(dir=OUT.parent, prefix=".gen_packed_wmma.")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({len(ins)} input and {len(outs)} result arrays)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
