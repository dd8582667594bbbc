"""Bank cost of the LSU accesses on swizzled tiles (ldmatrix/stmatrix epilogues, ld/st.shared.v4),
measured with the bank probe (gpu_check/bank_probe: one instruction per launch under ncu) and
compared with the bank model.

The tiles are f16 tiles laid out by the TMA/wgmma swizzle modes (the mode's CuTe Swizzle<B,4,3>
on byte offsets: layoutsim.smem.MODES), on rows of the span and on 128-byte rows, plus the
unswizzled 128-byte row tile; the accesses are the ones `layoutsim swizzle-search` costs
(layoutsim.banks.search.accesses: 16x16 blocks for ldmatrix/stmatrix.x4, row-wise v4 for ld/st).
"""
import json
import os
import shutil
import tempfile
import time

from layoutsim import smem
from layoutsim.address import Tile
from layoutsim.banks.search import accesses
from layoutsim.files import write_atomic

from ..bank_probe import corpus as bank_corpus
from ..bank_probe import measure as bank_measure
from ..bank_probe import ncu_csv

OPS = ("ldmatrix.x4", "ldmatrix.x4.trans", "stmatrix.x4", "stmatrix.x4.trans", "ld.shared.v4.b32",
       "st.shared.v4.b32")
PER_TILE_OP = 1


def tiles():
    """(label, Tile): each swizzle mode on rows of its own span, and the narrower modes on
    128-byte rows (a TMA box wider than the mode allows is rejected, but a hand-written tile is
    not: these conflict)."""
    out = [("none, 128-byte rows", Tile(64, 64, "f16"))]
    for name, m in smem.MODES.items():
        if m.bits:
            out.append((f"{name} swizzle", Tile(64, m.span // 2, "f16", swizzle=m.cute, unit="byte")))
            if m.span < 128:
                out.append((f"{name} swizzle on 128-byte rows", Tile(64, 64, "f16", swizzle=m.cute, unit="byte")))
    return out


def patterns():
    out = []
    for label, tile in tiles():
        for op in OPS:
            offs = accesses(tile, op)
            for k in range(min(PER_TILE_OP, len(offs))):
                out.append({"id": len(out), "op": op, "tag": f"{label} {tile.rows}x{tile.cols} f16, access {k}",
                            "offsets": [int(o) for o in offs[k]], "active": bank_corpus.FULL})
    return out


def measure(out_dir, ncu="ncu", nvcc="nvcc", seconds=40, log=print, dry_run=False):
    """Writes epilogue.json: every pattern, the model's wavefronts and (unless dry_run) ncu's."""
    from layoutsim.banks import nvidia
    t0 = time.time()
    pats = patterns()
    model = bank_corpus.predictions(pats, nvidia.DEFAULT)
    work = tempfile.mkdtemp(prefix="desc_epilogue_")
    measured = {}
    note = "dry run: not measured"
    if not dry_run:
        rc, exe, buildlog = bank_measure.compile_probe(nvcc, work, "sm_90")
        log(f"epilogue: bank probe compiled (exit {rc}, {time.time() - t0:.0f} s)")
        if rc == 0:
            path = os.path.join(work, "patterns.txt")
            bank_corpus.write_patterns(path, pats)
            rc, launches, text, cmdlog = bank_measure.run_ncu(ncu, exe, path, 0, len(pats),
                                                              [ncu_csv.LD, ncu_csv.ST], work,
                                                              max(10, seconds - (time.time() - t0)))
            write_atomic(os.path.join(out_dir, "epilogue_ncu.csv"), text, "epilogue ncu csv")
            problems = bank_measure.assign(pats, launches, measured, [ncu_csv.LD, ncu_csv.ST])
            note = f"ncu exit {rc}; " + "; ".join(problems[:5])
        else:
            note = "bank probe did not compile: " + buildlog[-500:]
    rows = []
    for p, m in zip(pats, model):
        got = measured.get(p["id"], {}).get("measured")
        rows.append(dict(p, model=m, measured=got))
    bad = [r for r in rows if r["measured"] is not None and r["measured"] != r["model"]]
    out = {"what": "wavefronts of LSU accesses on swizzled f16 tiles (bank probe under ncu) vs the bank model",
           "note": note, "patterns": rows, "mismatches": len(bad),
           "measured": sum(r["measured"] is not None for r in rows)}
    write_atomic(os.path.join(out_dir, "epilogue.json"), json.dumps(out, indent=1), "epilogue")
    shutil.rmtree(work, ignore_errors=True)
    log(f"epilogue: {out['measured']} of {len(rows)} accesses measured, {len(bad)} differ from the bank model "
        f"({time.time() - t0:.0f} s)")
    for r in bad[:10]:
        log(f"  {r['op']} {r['tag']}: model {r['model']}, measured {r['measured']}")
    return out
