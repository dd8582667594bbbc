"""nvcuda::wmma in the executor: fragment maps, what a load/store costs, how an mma computes.

Fragment maps: the catalog's measured maps (`wmma.load.*`, isa/data/nvcuda_wmma_sm_90.json,
gpu-check discover on the H200), for every fragment this executor takes (f16/bf16/s8/u8 operands,
f16/f32/s32 accumulators of the three k16 shapes; tf32 m16n16k8 and f64 m8n8k4 with their f32/f64
accumulators). A fragment the catalog lacks is refused: there is no guessed map.

Costs and arithmetic follow what ptxas emits on sm_90 (data/wmma_sm_90.json, made by
wmma_probe.py from cuobjdump): a load/store is the SASS accesses recorded there (LDSM.16.M88.4,
4 x LDS.64, LD.E for generic addresses, ...), and an mma is the recorded tensor-core
instructions (2 x HMMA.16816 for m16n16k16, 4 x HMMA.1684 for tf32 m16n16k8, ...), computed
with the catalog's mma.sync of that shape through layoutsim.mma.
"""
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import sass as SASS
from ..errors import LayoutsimError

DATA = Path(__file__).with_name("data") / "wmma_sm_90.json"
SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4)}
ELEM_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "f32": 32, "s32": 32, "f64": 64}


@functools.lru_cache(maxsize=None)
def _data():
    doc = json.loads(DATA.read_text())
    return doc, {e["op"]: e for e in doc["entries"]}


def entry(op):
    e = _data()[1].get(op)
    if e is None:
        raise LayoutsimError(f"{op}: not in the sm_90 wmma lowering data ({DATA.name})")
    return e


def operand_shape(use, shape):
    M, N, K = SHAPES[shape]
    return {"a": (M, K), "b": (K, N), "c": (M, N), "d": (M, N)}[use]


# ---- fragment maps ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def fragment(use, layout, shape, typ):
    """The FragmentMap of a wmma fragment (measured on the H200); accumulators have one map whatever
    the layout."""
    from ..isa.registry import get
    lay = "row" if use in ("c", "d") else layout
    name = f"wmma.load.{'c' if use in ('c', 'd') else use}.sync.aligned.{lay}.{shape}.{typ}"
    try:
        ins = get(name)
    except LayoutsimError:
        raise LayoutsimError(f"wmma {use} {layout} {shape} .{typ}: no measured fragment map in the catalog "
                             f"(gpu-check discover measures it)") from None
    return next(iter(ins.operands.values())).fragment


# ---- arithmetic -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MmaPlan:
    tile: str            # catalog mma.sync name of one tensor-core instruction
    tile_shape: tuple    # (mt, nt, kt)
    transposed: bool     # computed as D^T = B^T A^T + C^T (shapes with M < mt)
    a: str
    b: str
    c: str
    d: str               # element types of the wmma operands
    acc: str             # the tile's accumulator type
    sass: tuple


@functools.lru_cache(maxsize=None)
def mma_plan(op):
    m = re.match(r"^wmma\.mma\.sync\.aligned\.(row|col)\.(row|col)\.(m\d+n\d+k\d+)(?:\.(rn|rz|rm|rp))?\."
                 r"(.+)$", op)
    if not m:
        raise LayoutsimError(f"{op}: not a wmma.mma instruction")
    shape, types = m.group(3), m.group(5).split(".")
    satfinite = "satfinite" in types
    types = [t for t in types if t != "satfinite"]
    if len(types) == 2:
        d, c, a, b = types[0], types[1], "f16", "f16"
    else:
        d, a, b, c = types
    key = f"wmma.mma.sync.aligned.{m.group(1)}.{m.group(2)}.{shape}.{'.'.join(m.group(5).split('.'))}"
    e = _data()[1].get(key) or _data()[1].get(_strip_sat(key))
    if e is None:
        raise LayoutsimError(f"{op}: not in the sm_90 wmma lowering data")
    t = SASS.MMA_TILE.match(e["sass"][0])
    digits = t.group(2)
    if t.group(1) == "DMMA":
        mt, nt, kt = 8, 8, 4
    else:
        mt, nt, kt = int(digits[:2]), int(digits[2]), int(digits[3:])
    acc = "f32" if ".F32" in e["sass"][0] else ("f16" if ".F16" in e["sass"][0] else
                                               ("s32" if t.group(1) == "IMMA" else "f64"))
    M, N, K = SHAPES[shape]
    transposed = M < mt
    sat = ".satfinite" if satfinite else ""
    tile = f"mma.sync.aligned.m{mt}n{nt}k{kt}.row.col{sat}.{acc}.{a}.{b}.{acc}"
    expect = (N // mt) * (M // nt) * (K // kt) if transposed else (M // mt) * (N // nt) * (K // kt)
    if expect != len(e["sass"]):
        raise LayoutsimError(f"{op}: ptxas emits {len(e['sass'])} x {e['sass'][0]}, which does not tile "
                             f"{shape} by m{mt}n{nt}k{kt}")
    return MmaPlan(tile, (mt, nt, kt), transposed, a, b, c, d, acc, tuple(e["sass"]))


def _strip_sat(key):
    return key.replace(".satfinite", "")


def compute(plan, A, B, C, arch):
    """D (raw bits, [n, M, N]) = A [n, M, K] x B [n, K, N] + C [n, M, N] as the tile sequence."""
    from ..formats import decode, encode
    if plan.transposed:
        return np.swapaxes(_tiles(plan, np.swapaxes(B, 1, 2), np.swapaxes(A, 1, 2),
                                  np.swapaxes(C, 1, 2), arch), 1, 2)
    if plan.c != plan.acc:                       # f16 C into an f32 tile: exact widening
        C = encode(plan.acc, decode(plan.c, C))
    D = _tiles(plan, A, B, C, arch)
    if plan.d != plan.acc:                       # f32 tile result stored as f16: round to nearest
        D = encode(plan.d, decode(plan.acc, D))
    return D


def _tiles(plan, A, B, C, arch):
    from ..numerics import mma
    n, M, K = A.shape
    N = B.shape[2]
    mt, nt, kt = plan.tile_shape
    I, J, KK = M // mt, N // nt, K // kt
    acc = C.reshape(n, I, mt, J, nt).transpose(0, 1, 3, 2, 4).reshape(n * I * J, mt, nt)
    for k in range(KK):
        a = A[:, :, k * kt:(k + 1) * kt].reshape(n, I, mt, kt)
        b = B[:, k * kt:(k + 1) * kt, :].reshape(n, kt, J, nt)
        a = np.broadcast_to(a[:, :, None], (n, I, J, mt, kt)).reshape(n * I * J, mt, kt)
        b = np.broadcast_to(b.transpose(0, 2, 1, 3)[:, None], (n, I, J, kt, nt)).reshape(n * I * J, kt, nt)
        acc = mma(plan.tile, np.ascontiguousarray(a), np.ascontiguousarray(b), acc, arch=arch, raw=True)
    return acc.reshape(n, I, J, mt, nt).transpose(0, 1, 3, 2, 4).reshape(n, M, N)


# ---- the SASS accesses of a load/store ------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    sass: str            # e.g. "LDS.64", "LDSM.16.MT88.4"
    bank_op: str         # the bank model's spelling ("ld.shared.b64", "ldmatrix.x4.trans")
    kind: str            # "lanes" (per-lane elements), "words" (a register's words, any lane order),
    #                      "matrix" (ldmatrix/stmatrix rows)
    elems: tuple         # lanes: per access, [32][E] element indices; words/matrix: register indices


def accesses(op_key, frag, elem_bits):
    """Access plan of one wmma load/store from the lowering data, or None when it is missing."""
    e = _data()[1].get(op_key)
    if e is None or not e.get("accesses"):
        return None
    out = []
    next_elem = 0
    next_reg = 0
    store = ".store." in op_key
    for acc in e["accesses"]:
        s = acc["sass"]
        mat = SASS.parse_matrix(s)
        if mat:
            _, n, trans = mat          # LDSM.16.M88 (one matrix) has no count: layoutsim/sass.py
            op = f"ldmatrix.x{n}{'.trans' if trans else ''}"
            out.append(Access(s, op, "matrix", tuple(range(next_reg, next_reg + n))))
            next_reg += n
            next_elem = next_reg * frag.slots
            continue
        width = _width(s)
        E = max(1, width * 8 // elem_bits)
        op = f"{'st' if store else 'ld'}.shared.b{width * 8}"
        out.append(Access(s, op, "lanes", tuple(range(next_elem, next_elem + E))))
        next_elem += E
        next_reg = -(-next_elem // frag.slots)
    return out


_width = SASS.width      # the width of a SASS access lives in layoutsim/sass.py


def element_positions(frag):
    """[32, n_elems] (row, col) of each lane's x[i] (the table flattened register-major)."""
    t = frag.table
    return t.reshape(t.shape[0], -1, 3)[..., 1:]
