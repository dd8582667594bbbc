"""ldmatrix / stmatrix .m8n8 .b16, from the PTX ISA sections 9.7.14.5.15 'ldmatrix' and
9.7.14.5.16 'stmatrix' (PTX ISA 9.0).

Addressing: for .x1/.x2/.x4, lanes 0-7 / 0-15 / 0-31 give the 16-byte row addresses; lanes
8j..8j+7 give rows 0..7 of matrix j. Destination (or source) register j of every lane holds
two b16 elements of matrix j: without .trans, lane L holds row L/4, columns 2(L%4) and
2(L%4)+1 (the mma.sync fragment layout); with .trans the roles of row and column swap.
(matrix, row, col) always name the matrix as it lies in shared memory: row r is the 16 bytes
at the address lane 8j+r gave, col c the c-th b16 element of that row.
"""
import numpy as np

from ..fragment import FragmentMap
from .instruction import Addressing, Instruction, Operand, nvidia_from
from .registry import Entry

SOURCE = {"ldmatrix": "PTX ISA 9.0, 9.7.14.5.15 'ldmatrix' (Figure: ldmatrix fragment)",
          "stmatrix": "PTX ISA 9.0, 9.7.14.5.16 'stmatrix' (Figure: stmatrix fragment)"}
FIRST = {"ldmatrix": "sm_75", "stmatrix": "sm_90"}
COUNTS = (1, 2, 4)          # .x1, .x2, .x4: matrices (registers per lane) moved


def _register_map(count, trans):
    def formula(lane, i):
        mat, slot = i >> 1, i & 1
        a, b = lane >> 2, 2 * (lane & 3) + slot
        return (mat, b, a) if trans else (mat, a, b)
    names = [f"r{i >> 1}.{'hi' if i & 1 else 'lo'}" for i in range(2 * count)]
    return FragmentMap.from_formula(32, 2 * count, 2, 16, (count, 8, 8), formula, names=names)


def _addressing(count):
    return Addressing(lanes=np.arange(8 * count).reshape(count, 8))


def _build(op, count, trans, full, short):
    def build():
        operand = Operand("R", "b16", _register_map(count, trans),
                          "output" if op == "ldmatrix" else "input")
        notes = ("rows are given by lanes 8j..8j+7 for matrix j; other lanes' addresses are ignored",)
        return Instruction(name=full, family=op, vendor="nvidia", threads=32, operands={"R": operand},
                           archs=nvidia_from(FIRST[op]), aliases=(short,), formats={"r": "b16"},
                           addressing=_addressing(count), source=SOURCE[op], notes=notes,
                           options={"num": count, "trans": trans})
    return build


def entries():
    out = []
    for op in ("ldmatrix", "stmatrix"):
        for count in COUNTS:
            for trans in (False, True):
                t = ".trans" if trans else ""
                full = f"{op}.sync.aligned.m8n8.x{count}{t}.shared.b16"
                short = f"{op}.x{count}{t}"
                verb = "loads" if op == "ldmatrix" else "stores"
                out.append(Entry(name=full, family=op, vendor="nvidia", archs=nvidia_from(FIRST[op]),
                                 build=_build(op, count, trans, full, short), aliases=(short,),
                                 summary=f"{verb} {count} 8x8 b16 {'matrices' if count > 1 else 'matrix'}"
                                         f"{' transposed' if trans else ''}"))
    return out
