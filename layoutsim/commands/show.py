"""`layoutsim show`: an operand drawn as a grid, each cell naming its lane and register."""
import numpy as np

from . import print_json
from ..labels import arithmetic, default_operand, header
from ._common import add_instruction_args, resolve


def register(sub):
    p = sub.add_parser("show", help="draw an operand as a lane/register grid",
                       description="Draw an operand's elements as a grid; each cell names the lane "
                                   "and register holding it (T13:c2), like the PTX ISA figures.")
    add_instruction_args(p)
    p.add_argument("--operand", help="A, B, C, D (R for ldmatrix/stmatrix registers)")
    p.set_defaults(run=run)


def cell_labels(op):
    """[matrix][row][col] -> 'T<lane>:<reg name>' of the first holder ('+' when replicated)."""
    frag = op.fragment
    first = frag.holders[:, :, :, 0, :]
    mark = "+" if frag.replication > 1 else ""
    names = np.asarray(frag.names)
    flat = first[..., 1].astype(int) * frag.slots + first[..., 2]
    lanes = first[..., 0]
    return np.vectorize(lambda lane, k: f"T{lane}:{names[k]}{mark}")(lanes, flat)


def run(args):
    inst, arch = resolve(args)
    op = default_operand(inst, args.operand)
    labels = cell_labels(op)
    if args.json:
        out = {"instruction": inst.name, "arch": arch, "operand": op.name,
               "replication": op.fragment.replication, "grid": labels.tolist()}
        math = arithmetic(inst, arch)
        print_json({**out, "arithmetic": math} if math else out)
        return 0
    for line in header(inst, op, arch):
        print(line)
    if op.fragment.replication > 1:
        print("cells show the lowest holding lane; '+' marks replicated elements (see query --element)")
    width = max(len(s) for s in labels.ravel())
    for m, grid in enumerate(labels):
        if labels.shape[0] > 1:
            print(f"\nmatrix {m}")
        cols = grid.shape[1]
        print("     " + " ".join(f"{c:^{width}}" for c in range(cols)))
        for r, row in enumerate(grid):
            print(f"{r:>4} " + " ".join(f"{s:<{width}}" for s in row))
    return 0
