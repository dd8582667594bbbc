"""Run the texture/surface cases through the executor (layoutsim.ptx) and compare with a
measurement; also which candidate sampler rules (layoutsim.ptx.texture.CANDIDATES) explain it.

    python -m gpu_check.textures.replay DIR            # mismatching words per case, RULES as they stand
    python -m gpu_check.textures.replay DIR --fit      # and per candidate rule set (the linear cases)

DIR holds textures.json and textures.npz (measure.py's output).
"""
import itertools
import json
import sys
from pathlib import Path
import numpy as np

from layoutsim import ptx
from layoutsim.ptx import texture as TX

from . import probes

JSON, NPZ = "textures.json", "textures.npz"

# The recorded cases the executor does not reproduce yet (tests/data/textures, an H100 on 2026-12-07),
# each with its mismatching words as they stand, so that any change shows; the rest match bit for bit.
# The filter unit's arithmetic (texture.filter_unit, corner_weights, NORMALIZED_16) comes from the
# designed probe (gpu_check/textures/filter_probe.py, tests/data/textures/filter_probe.npz) and
# these cases; left: one word of 3d_f32_linear, one ulp, the residue the 3D probe shows in 79 of
# its 32768 samples (tests/ptx/test_texture_filter_unit.py), which no grid for the passes' sum explains.
KNOWN = {"3d_f32_linear": 1}


def obj_arg(case, arr):
    o = case["obj"]
    if o.get("surface"):
        return ptx.SurfaceArg(arr, channels=o["channels"], layered=o.get("layered", False))
    return ptx.TextureArg(arr, channels=o["channels"], address=o["address"], filter=o["filter"], read=o["read"],
                          normalized=o["normalized"], layered=o["layered"], cubemap=o["cubemap"])


def run_case(case, arr, rows, module_text=None):
    """(out words uint32 [rows, 4], the surface's final array or None) from the executor."""
    text = module_text or probes.module([case["kernel"]])
    n = case["n"]
    out = np.zeros((max(n, len(rows)), 4), np.uint32)
    r = ptx.run(text, case["kernel"], grid=-(-n // 128), block=min(128, n),
                args=[obj_arg(case, arr), np.ascontiguousarray(rows), out, np.uint32(n)])
    return r.buffers[2], (r.buffers[0] if case["kind"] == "sust" else None)


def load(folder):
    folder = Path(folder)
    meta = json.loads((folder / JSON).read_text())
    with np.load(folder / NPZ) as z:
        arrays = {k: z[k] for k in z.files}
    return meta, arrays


def compare(case, arrays, rules=None):
    """Mismatching words (out words, and surface elements for a store) of one recorded case."""
    name = case["name"]
    kept = TX.RULES
    TX.RULES = rules or kept
    try:
        got, surf = run_case(case, arrays[f"{name}/texels"], arrays[f"{name}/in"])
    finally:
        TX.RULES = kept
    want = arrays[f"{name}/out"]
    bad = int((got[:len(want)] != want).sum())
    if surf is not None:
        bad += int((surf.view(np.uint8) != arrays[f"{name}/surface"].view(np.uint8)).sum())
    return bad


def _candidates():
    keys = list(TX.CANDIDATES)
    for vals in itertools.product(*(TX.CANDIDATES[k] for k in keys)):
        yield TX.with_rules(**dict(zip(keys, vals)))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    meta, arrays = load(argv[0])
    for case in meta["cases"]:
        if "error" in case or case["kind"] == "query_more":
            continue
        print(f"{case['name']:40s} {compare(case, arrays)} mismatching words")
    if "--fit" in argv:
        lin = [c for c in meta["cases"] if c["kind"] == "tex" and "error" not in c and c["obj"]["filter"] == "linear"]
        for rules in _candidates():
            bad = sum(compare(c, arrays, rules) for c in lin)
            print(f"{rules}: {bad} mismatching words over {len(lin)} linear cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
