"""nvcuda::wmma in the executor: fragment maps, what a load/store costs, how an mma computes.

Fragment maps: the catalog's measured maps (`wmma.load.*`, isa/data/nvcuda_wmma_sm_90.json,
gpu-check discover on the H200), for every fragment this executor takes (f16/bf16/s8/u8 operands,
f16/f32/s32 accumulators of the three k16 shapes; tf32 m16n16k8 and f64 m8n8k4 with their f32/f64
accumulators). A fragment the catalog lacks is refused: there is no guessed map.

Costs and arithmetic follow what ptxas emits on sm_90 (data/wmma_sm_90.json, made by
gpu_check/wmma_probe.py from cuobjdump): a load/store is the SASS accesses recorded there (LDSM.16.M88.4,
4 x LDS.64, LD.E for generic addresses, ...), and an mma is the recorded tensor-core
instructions (2 x HMMA.16816 for m16n16k16, 4 x HMMA.1684 for tf32 m16n16k8, ...): `mma_plan`
says which, and layoutsim.warpcore.wmma computes that tile sequence with the catalog's mma.sync
of the shape through layoutsim.mma (and moves a load's or store's elements).
"""
import functools
import re
from dataclasses import dataclass
from pathlib import Path


from .. import package_data as P
from .. import sass as SASS
from ..errors import LayoutsimError, one_line
from ..formats import bits
from ..isa.registry import get
from ..warpcore import wmma as core_wmma

DATA = Path(__file__).with_name("data") / "wmma_sm_90.json"
SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
          "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4)}
ELEM_BITS = {t: bits(t) for t in ("f16", "bf16", "tf32", "s8", "u8", "f32", "s32", "f64")}


@functools.lru_cache(maxsize=None)
def _data():
    doc = P.load_json(DATA, _check_data)
    return doc, {e["op"]: e for e in doc["entries"]}


def _check_data(doc):
    """What this module reads of data/wmma_sm_90.json: each entry's op and either its SASS
    accesses (a load/store) or its tensor-core instructions (an mma, the first one a tile)."""
    P.check(doc, {"entries": [{"op": str, "accesses?": [{"sass": str}], "sass?": [str]}]})
    for e in doc["entries"]:
        if "accesses" not in e and not (e.get("sass") and SASS.MMA_TILE.match(e["sass"][0])):
            raise ValueError(f"entry {one_line(e['op'], 120)} has neither accesses nor a tensor-core SASS tile")


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
    m = re.match(r"^wmma\.mma\.sync\.aligned\.(row|col)\.(row|col)\.(m\d+n\d+k\d+)\.(.+)$", op)
    if not m:
        raise LayoutsimError(f"{op}: not a wmma.mma instruction")
    shape, types = m.group(3), m.group(4).split(".")
    # f64 wmma takes a rounding modifier (PTX ISA 9.7.14.4.5 `.rnd`), which nvcc writes after the
    # types; .rn is what DMMA computes, a directed rounding is not modelled
    rnd = [t for t in types if t in ("rn", "rz", "rm", "rp")]
    if any(r != "rn" for r in rnd):
        raise LayoutsimError(f"{op}: wmma.mma with rounding .{rnd[0]} (only .rn, the default, is modelled)")
    satfinite = "satfinite" in types
    types = [t for t in types if t != "satfinite" and t not in rnd]
    if len(types) == 2:
        d, c, a, b = types[0], types[1], "f16", "f16"
    elif len(types) == 4:
        d, a, b, c = types
    else:
        raise LayoutsimError(f"{op}: give the types as .dtype.ctype or .dtype.atype.btype.ctype")
    key = f"wmma.mma.sync.aligned.{m.group(1)}.{m.group(2)}.{shape}.{'.'.join(types)}"
    e = _data()[1].get(key)
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


element_positions = core_wmma.element_positions   # where each lane's elements are: the core's
