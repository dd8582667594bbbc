"""`layoutsim query`: which elements a lane holds, or which lanes hold an element."""
from . import print_json
from ._options import refuse
from ..labels import arithmetic, bits_label, default_operand, element_label, header
from ._common import add_instruction_args, parse_element, resolve


def register(sub):
    p = sub.add_parser("query", help="what a lane holds, or who holds an element",
                       description="Lane -> element map of one operand (or its inverse).")
    add_instruction_args(p)
    p.add_argument("--operand", help="A, B, C, D (R for ldmatrix/stmatrix registers)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--lane", type=int, help="which elements this lane holds")
    g.add_argument("--element", help="ROW,COL: which lanes/registers hold this element")
    p.add_argument("--matrix", type=int, default=0, help="matrix index J for ldmatrix/stmatrix x2/x4")
    p.set_defaults(run=run)


def run(args):
    if args.element is None:
        refuse(args, ("matrix",), "without --element", "it picks the matrix of --element ROW,COL")
    inst, arch = resolve(args)
    op = default_operand(inst, args.operand)
    frag = op.fragment
    if args.lane is not None:
        rows = [(args.lane, reg, slot, m, r, c) for reg, slot, m, r, c in frag.lane_entries(args.lane)]
    elif args.element is not None:
        r, c = parse_element(args.element)
        rows = [(lane, reg, slot, args.matrix, r, c) for lane, reg, slot in frag.who_holds(r, c, args.matrix)]
    else:
        rows = [tuple(int(v) for v in e) for e in frag.entries()]
    entries = [{"lane": lane, "reg": reg, "slot": slot, "name": frag.name(reg, slot),
                "matrix": m, "row": r, "col": c} for lane, reg, slot, m, r, c in rows]
    if args.json:
        out = {"instruction": inst.name, "arch": arch, "operand": op.name, "entries": entries}
        math = arithmetic(inst, arch)
        print_json({**out, "arithmetic": math} if math else out)
        return 0
    for line in header(inst, op, arch):
        print(line)
    if args.lane is not None:
        print(f"lane {args.lane} holds:")
    elif args.element is not None:
        print(f"{element_label(op, args.matrix, *parse_element(args.element))} is held by:")
    width = max((len(e["name"]) for e in entries), default=0)
    for e in entries:
        where = bits_label(frag, e["reg"], e["slot"])
        elem = element_label(op, e["matrix"], e["row"], e["col"])
        print(f"  lane {e['lane']:>3}  {e['name']:<{width}} = {elem:<14} ({where})")
    return 0
