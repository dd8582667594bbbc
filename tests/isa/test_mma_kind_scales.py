"""sm_120a's block-scaled mma.sync: the scale-factor registers SFA / SFB of the catalog
(isa/ptx_mma_kind.sf_fragment) for every {byte-id, thread-id} of PTX ISA 9.x 9.7.14.3 Table 37, against
CUTLASS 4.2's SM120 block-scaled traits (cute/atom/mma_traits_sm120.hpp SFALayout / SFBLayout, printed by
the host-only program tests/isa/cute_sm100/print_sm120_sf.cu into tests/data/cute_sm100/sm120_sf.npz;
rebuilt by tests/isa/cute_sm100/rebuild.py --only print_sm120_sf). CuTe gives every lane of a quad (A: of
a thread pair) the row or column it would supply under any thread-id, and passes the K/VS scales of a lane
as one uint8/16/32 register in K order; it always issues byte-id 0 and thread-id 0. Triton's own sm_120a
lowering is the other check (tests/triton_frontend/test_triton_sm120_scaled.py)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import layoutsim
from layoutsim.isa import ptx_mma_kind as K

DATA = Path(__file__).resolve().parents[1] / "data" / "cute_sm100" / "sm120_sf.npz"
# CuTe's MMA -> (scale_vec, a catalog entry of that form, or None: ptxas 13.0 refuses 4X with ue8m0)
MMAS = {"k32 ue8m0 32": ("1X", "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0"),
        "k64 ue8m0 32": ("2X", "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0"),
        "k64 ue8m0 16": ("4X", None),
        "k64 ue4m3 16": ("4X", "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3")}


def _cute(z, tag, key):
    """{lane: {(row or column, scale index)}} of CuTe's SFA (key "sfa": M16) or SFB ("sfb": N8) layout."""
    mn = 16 if key == "sfa" else 8
    vs = int(z[f"{tag} bits"][2])
    idx = z[f"{tag} {key}"]
    return {lane: {(int(i) % mn, int(i) // mn // vs) for i in idx[lane]} for lane in range(32)}


def _selectors(vec):
    byte_ids = K.SF_SELECT[vec][1]
    return ([(b, t) for b in byte_ids for t in K.SF_THREADS["a"]], [(b, t) for b in byte_ids for t in K.SF_THREADS["b"]])


def _agrees(z, tag, vec, name, key, byte_id, thread_id):
    """(whether the catalog's SFA/SFB map for these selectors is CuTe's, the scales compared)."""
    x = key[-1]
    frag = (layoutsim.get(f"{name} byte-id-{x}:{byte_id} thread-id-{x}:{thread_id}").operand(key.upper()).fragment
            if name else K.sf_fragment(vec, key == "sfa", byte_id, thread_id))
    cute = _cute(z, tag, key)
    got = {}
    for lane, _, slot, _, r, c in frag.entries().tolist():
        row, s = (r, c) if key == "sfa" else (c, r)
        if slot != byte_id + s:                      # K order from the selected byte (CuTe's register)
            return False, 0
        got.setdefault(lane, set()).add((row, s))
    picked = [lane for lane in range(32)
              if lane % 4 in ((2 * thread_id, 2 * thread_id + 1) if key == "sfa" else (thread_id,))]
    return sorted(got) == picked and all(got[lane] == cute[lane] for lane in picked), len(frag.entries())


def cute_sm120_scales():
    """[(name, agrees, scales compared)] for every CuTe SM120 MMA, operand and Table 37 selector."""
    rows = []
    with np.load(DATA) as z:
        assert "CUTLASS 4.2" in str(z["source"])
        for tag, (vec, name) in MMAS.items():
            nsf = K.SF_SELECT[vec][0]
            assert list(z[f"{tag} bits"][:2]) == [8 * nsf, 8 * nsf]     # one register of K/VS bytes per lane
            for key, sels in zip(("sfa", "sfb"), _selectors(vec)):
                for byte_id, thread_id in sels:
                    ok, n = _agrees(z, tag, vec, name, key, byte_id, thread_id)
                    rows.append((f"{tag} {key.upper()} {{{byte_id}, {thread_id}}}", ok, n))
    return rows


def test_scale_registers_equal_cute_sm120_traits_for_every_selector():
    rows = cute_sm120_scales()
    assert [r[0] for r in rows if not r[1]] == []
    assert len(rows) == 48      # 1X: 8 SFA + 16 SFB; 2X: 4 + 8; 4X ue8m0 and ue4m3: 2 + 4 each


def test_selected_entries_carry_the_selectors():
    name = MMAS["k32 ue8m0 32"][1]
    inst = layoutsim.get(f"{name} byte-id-a:3 thread-id-a:1 byte-id-b:2 thread-id-b:3")
    assert inst.operand("SFA").who_holds(0, 0) == [(2, 0, 3)] and inst.operand("SFA").who_holds(8, 0) == [(3, 0, 3)]
    assert inst.operand("SFB").who_holds(0, 5) == [(23, 0, 2)]
    assert (inst.options["byte_id_a"], inst.options["thread_id_b"]) == (3, 3)
    assert layoutsim.get(name).operand("SFA").who_holds(15, 0) == [(29, 0, 0)]
    # CUTLASS's spelling (.kind before the shape) names the same entry
    assert layoutsim.get("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3"
                         ".f32.ue8m0").name == layoutsim.get(name).name


@pytest.mark.parametrize("spelling, message", [
    ("byte-id-a:4", r"byte-id-a:4 out of range: with \.scale_vec::1X byte-id-a is 0, 1, 2, 3"),
    ("thread-id-b:1 lane:3", r"unknown mma\.sync selector 'lane:3'; valid: byte-id-a:N thread-id-a:N"),
])
def test_bad_selectors_are_one_line_errors(spelling, message):
    out = subprocess.run([sys.executable, "-m", "layoutsim.cli", "query", f"{MMAS['k32 ue8m0 32'][1]} {spelling}",
                          "--operand", "SFA", "--lane", "0"], capture_output=True, text=True)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert __import__("re").search(message, out.stderr)


def test_query_answers_which_lane_and_byte_hold_a_scale():
    name = MMAS["k64 ue4m3 16"][1]
    out = subprocess.run([sys.executable, "-m", "layoutsim.cli", "query", f"{name} thread-id-a:1", "--operand", "SFA",
                          "--element", "9,2", "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert [(h["lane"], h["reg"], h["slot"]) for h in doc["entries"]] == [(7, 0, 2)]     # lane 4 * 1 + 2 + 1
