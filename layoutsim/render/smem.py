"""A wgmma descriptor's tile as a picture: shared memory in rows of 128 bytes (one pass over the
32 banks), each 4-byte word coloured by its bank and naming the operand elements it holds, so a
swizzle shows as each row's chunks permuted. The addresses come from layoutsim.smem."""
import numpy as np

from ..errors import LayoutsimError
from . import colors
from .banks import BANKS, GAP, MARGIN, WORD, bank_grid
from .scene import Cell, Scene, Text, draw_grid, text_width

MAX_ROWS = 64


def descriptor_scene(instr, operand, desc, trans=False):
    from .. import smem
    d = smem.Descriptor.of(desc)
    ins, op, mn_n, k_n, w, major = smem.operand_geometry(instr, operand, trans)
    addr = smem.operand_addresses(ins, op, d, trans)
    fault = smem.operand_fault(ins, op, d, trans, addresses=addr)      # the simulator's line
    if fault:
        raise LayoutsimError(fault)
    grid = addr if op == "A" else addr.T                       # [mn, k]
    mn_name = "m" if op == "A" else "n"
    words = {}                                                 # word address -> [(mn, k)]
    for (r, c), a in np.ndenumerate(grid):
        words.setdefault(int(a) - int(a) % WORD, []).append((r, c))
    rows = sorted({wa // (BANKS * WORD) for wa in words})
    if len(rows) > MAX_ROWS:
        raise LayoutsimError(f"the operand spans {len(rows)} rows of {BANKS * WORD} bytes; pictures show at most "
                             f"{MAX_ROWS} (use a smaller N, or `layoutsim desc decode --json` for the addresses)")

    def cell(wa, b):
        held = words.get(wa)
        if not held:
            return None
        held.sort(key=lambda rc: (rc[1], rc[0]) if major == "MN" else rc)
        (r0, c0), (r1, c1) = held[0], held[-1]
        if major == "K":
            lines = (f"{mn_name}{r0}", f"k{c0}" + (f"-{c1}" if c1 != c0 else ""))
        else:
            lines = (f"k{c0}", f"{mn_name}{r0}" + (f"-{r1}" if r1 != r0 else ""))
        names = ", ".join(f"{op}[{r}][{c}]" if op == "A" else f"{op}[{c}][{r}]" for r, c in held)
        return Cell(lines=lines, fill=colors.bank_color(b), title=f"word at byte {wa:#x} (bank {b}): {names}",
                    data={"word": wa, "bank": b, "elements": names})
    cells = bank_grid(rows, cell)
    scene = Scene(0, 0, title=f"{op} of {ins.name} through {d}")
    y = MARGIN
    head = f"{op} of {ins.name}, {major}-major {ins.formats[op.lower()]}"
    scene.add(Text(MARGIN, y + 10, head, 14, anchor="start", bold=True))
    y += 24
    sub = str(d)
    scene.add(Text(MARGIN, y + 8, sub, 11, anchor="start", color="#333333"))
    y += 22
    key = (f"colour = bank; a cell is one 4-byte word and names the operand elements in it "
           f"({mn_name}/k); rows are 128 bytes of shared memory; rule: {smem.status()}")
    scene.add(Text(MARGIN, y + 8, key, 11, anchor="start", color="#333333"))
    y += 26
    w_, h_ = draw_grid(scene, MARGIN, y, cells, 9.0, row_label="byte", col_label="bank \u2192",
                       row_names=[f"{r * BANKS * WORD:#x}" for r in rows])
    scene.width = max(MARGIN + w_, MARGIN + text_width(key, 11), MARGIN + text_width(sub, 11)) + MARGIN
    scene.height = y + h_ + GAP
    scene.meta = {"hover_key": "bank", "notes": [key],
                  "json": {"kind": "descriptor", "instruction": ins.name, "operand": op, "major": major,
                           "descriptor": f"{d.encode():#018x}", "rows": [r * BANKS * WORD for r in rows],
                           "words": len(words)}}
    return scene
