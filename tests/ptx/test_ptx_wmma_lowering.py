"""The sm_90 wmma lowering data (layoutsim/ptx/data/wmma_sm_90.json, from cuobjdump) against the
executor's reading of it: for every shared-memory load/store whose fragment map was measured, the
accesses the executor derives must sit exactly as far apart as the immediate offsets in the SASS
(the probes use a leading dimension of 40 elements); and every mma must tile into the catalog."""
import json

import numpy as np
import pytest

from layoutsim.errors import LayoutsimError
from layoutsim.ptx import wmma as WM

DOC = json.loads(WM.DATA.read_text())
LD = DOC["leading_dimension"]


def _parse(op):
    parts = op.split(".")
    verb, use, layout, shape, typ = parts[1], parts[2], parts[5], parts[6], parts[-1]
    return verb, use, layout, shape, typ


def _measured(op):
    _, use, layout, shape, typ = _parse(op)
    try:
        return WM.fragment("c" if use == "d" else use, layout, shape, typ) is not None
    except LayoutsimError:
        return False


# shared-memory accesses whose SASS carries offsets, of fragments measured on the H200
OPS = [e for e in DOC["entries"] if e.get("accesses") and ".shared." in e["op"]
       and any(a["offset"] for a in e["accesses"]) and _measured(e["op"])]


def test_enough_entries_are_checked():
    assert len(OPS) >= 24     # the operands and accumulators of every type, loads and stores


@pytest.mark.parametrize("entry", OPS, ids=[e["op"] for e in OPS])
def test_accesses_match_sass_offsets(entry):
    from layoutsim.ptx.costs_wmma import _access_offsets
    verb, use, layout, shape, typ = _parse(entry["op"])
    frag = WM.fragment("c" if use == "d" else use, layout, shape, typ)
    R, C = WM.operand_shape(use, shape)
    esize = WM.ELEM_BITS[typ] // 8
    r, c = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    A = ((r * LD + c) if layout == "row" else (c * LD + r)) * esize
    plan = WM.accesses(entry["op"], frag, WM.ELEM_BITS[typ])
    assert [p.sass for p in plan] == [a["sass"] for a in entry["accesses"]]
    firsts = []
    for p in plan:
        O, M = _access_offsets(p, A[None], WM.element_positions(frag), frag)
        firsts.append(int(O[0][M[0]].min()))
    rec = [a["offset"] for a in entry["accesses"]]
    assert [f - firsts[0] for f in firsts] == [o - rec[0] for o in rec]


MMAS = [e["op"] for e in DOC["entries"] if e["op"].startswith("wmma.mma")]


@pytest.mark.parametrize("op", MMAS)
def test_mma_tiles_exist_in_the_catalog(op):
    import layoutsim
    plan = WM.mma_plan(op)
    tile = layoutsim.get(plan.tile)
    assert tile.shape == plan.tile_shape
