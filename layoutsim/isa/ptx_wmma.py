"""nvcuda::wmma fragments (PTX wmma.load.{a,b,c}), MEASURED, not documented.

The PTX ISA leaves the wmma fragment layouts unspecified ("the mapping of matrix elements
to fragment elements is unspecified"). `gpu-check discover` loads unique element ids with
wmma::load_matrix_sync on a real GPU and dumps fragment.x[i] of every lane; the maps it found
are in data/nvcuda_wmma_sm_90.json (with the GPU, driver and date) and are loaded here as they
are. Element i of a lane lies in register i // slots, slot i % slots; a 64-bit element (f64) is a
64-bit register of its own (reg_bits 64, as the mma.sync f64 maps). They are confirmed on
sm_90 only: another arch may lay the same fragment out differently.
"""
import functools
from pathlib import Path

import numpy as np

from .. import package_data as P
from ..errors import one_line
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

DATA = Path(__file__).with_name("data") / "nvcuda_wmma_sm_90.json"
ARCHS = ("sm_90",)
# where nvcuda::wmma itself starts, by element format (clang BuiltinsNVPTX.def: __hmma_* need
# sm_70, __imma_* sm_72, __mma_bf16_* / __mma_tf32_* sm_80; PTX ISA "wmma.load" target notes)
SINCE = {"f16": "sm_70", "f32": "sm_70", "s8": "sm_72", "u8": "sm_72", "s32": "sm_72",
         "bf16": "sm_80", "tf32": "sm_80", "f64": "sm_80"}


# what a catalog file holds: every key the loader reads, of the type it reads it as (check_document)
USES = {"matrix_a": "A", "matrix_b": "B", "accumulator": "C"}
def _text(v):
    """A string the catalog prints (`layoutsim show`): no control characters for a terminal."""
    return None if isinstance(v, str) and v.isprintable() else f"is {v!r}, not printable text"


_ENV = {"gpu": _text, "driver": _text, "date": _text, "cuda_driver_api?": (str, int, float)}
_ENTRY = {"name": str, "operand": str, "fmt": str, "layout": str, "shape": [int], "rows": int, "cols": int,
          "elem_bits": int, "slots": int, "reg_bits": int, "table": list, "source?": _text, "valid?": bool,
          "use": lambda v: None if v in USES else f"is {v!r}, not one of {', '.join(USES)}"}


@functools.lru_cache(maxsize=None)
def _document():
    # each table is checked when its entry is built (_build): converting all 78 of them here
    # would slow every `layoutsim query` by a tenth
    return P.load_json(DATA, lambda doc: check_document(doc, tables=False))


def check_document(doc, tables=True):
    """Raise ValueError (naming the entry and the problem) unless `doc` is a catalog file the
    loader reads as it is: the environment, then every entry (`check_entry`), each name once."""
    P.check(doc, {"environment": _ENV, "entries": [dict]})
    seen = set()
    for e in doc["entries"]:
        P.check(e, {"name": str, "valid?": bool}, "an entry")
        if e.get("valid", True):                # the loader skips an entry marked not valid
            check_entry(e, tables)
        if e["name"] in seen:
            raise ValueError(f"entry {e['name']} appears twice")
        seen.add(e["name"])


def check_entry(e, tables=True):
    """Raise ValueError naming the entry unless the loader's _build reads it as the fragment it
    says it is: keys and types, the name its fields spell, the operand's shape, the register
    packing of its format, a [32 lanes][n][row, col] table inside the operand."""
    name = e.get("name") if isinstance(e, dict) and isinstance(e.get("name"), str) else "an entry"
    where = one_line(name, 120)
    P.check(e, _ENTRY, f"entry {where}")
    if e["fmt"] not in SINCE or e["layout"] not in ("row_major", "col_major") or len(e["shape"]) != 3 \
            or min(e["shape"]) < 1:
        raise ValueError(f"entry {where}: format {e['fmt']!r}, layout {e['layout']!r}, shape {e['shape']} is not "
                         f"an nvcuda::wmma fragment (formats {', '.join(SINCE)}; row_major/col_major; [m, n, k])")
    m, n, k = e["shape"]
    letter = e["operand"]
    want = {"name": f"wmma.load.{USES[e['use']].lower()}.sync.aligned.{e['layout'][:3]}.m{m}n{n}k{k}.{e['fmt']}",
            "operand": USES[e["use"]], "rows": {"A": m, "B": k, "C": m}.get(letter),
            "cols": {"A": k, "B": n, "C": n}.get(letter), "elem_bits": _bits(e["fmt"]),
            "slots": max(1, 32 // _bits(e["fmt"])), "reg_bits": max(32, _bits(e["fmt"]))}
    for key, value in want.items():
        if e[key] != value:
            raise ValueError(f"entry {where}: {key} is {e[key]!r}; its fields say {value!r}")
    if not tables:
        return
    try:
        t = np.asarray(e["table"])
    except ValueError:
        t = None
    if t is None or t.ndim != 3 or t.shape[0] != 32 or t.shape[2] != 2 or t.shape[1] == 0 or t.dtype.kind != "i":
        raise ValueError(f"entry {where}: table is not [32 lanes][elements][row, col] of integers")
    if t.shape[1] % e["slots"]:
        raise ValueError(f"entry {where}: {t.shape[1]} elements per lane do not fill whole registers "
                         f"of {e['slots']} slots")
    if t.min() < 0 or (t[..., 0] >= e["rows"]).any() or (t[..., 1] >= e["cols"]).any():
        raise ValueError(f"entry {where}: table holds an element outside the {e['rows']}x{e['cols']} operand")


def check_fragment(e, env):
    """check_entry, then the FragmentMap checks the catalog applies (a bijection, or every element
    held equally often); ValueError naming the entry."""
    check_entry(e)
    try:
        _build(e, env)()
    except AssertionError as err:
        raise ValueError(f"entry {e['name']}: {err}") from None


def _bits(fmt):
    from ..formats import bits
    return bits(fmt)


def _confirmed(env):
    return (f"measured on {env['gpu']} (driver {env['driver']}, CUDA {env.get('cuda_driver_api', '?')}, "
            f"{env['date'][:10]}) with gpu-check discover")


def _build(e, env, where=None):
    """The builder of an entry's Instruction; with `where` (the catalog file) a map the
    FragmentMap checks refuse is that file's damage, one line."""
    def build():
        t = np.asarray(e["table"], dtype=np.int16)           # [lane, i, (row, col)]
        lanes, n, _ = t.shape
        slots = e["slots"]
        table = np.concatenate([np.zeros((lanes, n, 1), np.int16), t], axis=2)
        table = table.reshape(lanes, n // slots, slots, 3)
        frag = FragmentMap(table=table, shape=(1, e["rows"], e["cols"]), elem_bits=e["elem_bits"],
                           reg_bits=e["reg_bits"], names=tuple(f"x{i}" for i in range(n)))
        m, nn, k = e["shape"]
        notes = ("layout measured on the GPU: NVIDIA does not document nvcuda::wmma fragments",
                 f"fragment<{e['use']}, {m}, {nn}, {k}, {e['fmt']}, {e['layout']}>: element x[i] is in "
                 f"register i // {slots}, slot i % {slots}")
        if frag.replication > 1:
            notes += (f"each element appears {frag.replication} times among the lanes' x[i]",)
        return Instruction(name=e["name"], family="wmma.load", vendor="nvidia", threads=32,
                           operands={e["operand"]: Operand(e["operand"], e["fmt"], frag, "output")},
                           shape=tuple(e["shape"]), archs=ARCHS, aliases=(_short(e["name"]),),
                           formats={e["operand"].lower(): e["fmt"]}, source=e.get("source", str(DATA.name)),
                           confirmed=_confirmed(env), notes=notes,
                           options={"layout": e["layout"], "use": e["use"]},
                           arch_note=_arch_note(e, env))
    if where is None:
        return build

    def checked():
        with P.reading(where):
            check_entry(e)
            return build()
    return checked


def _arch_note(e, env):
    since = SINCE.get(e["fmt"], "sm_70")
    return (f"this nvcuda::wmma fragment exists from {since} on, but its map was measured on "
            f"{env['gpu']} ({', '.join(ARCHS)}) only, and NVIDIA leaves the map unspecified, so "
            f"another arch may lay it out differently")


def _short(name):
    return name.replace(".sync.aligned", "")


def entries():
    if not DATA.exists():
        return []
    doc = _document()
    env = doc["environment"]
    return [Entry(name=e["name"], family="wmma.load", vendor="nvidia", archs=ARCHS,
                  build=_build(e, env, DATA), aliases=(_short(e["name"]),),
                  summary=f"nvcuda::wmma {e['use']} {e['layout']} {e['fmt']} fragment (measured on {env['gpu']})")
            for e in doc["entries"] if e.get("valid", True)]
