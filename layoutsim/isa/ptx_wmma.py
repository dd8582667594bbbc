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
import json
from pathlib import Path

import numpy as np

from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

DATA = Path(__file__).with_name("data") / "nvcuda_wmma_sm_90.json"
ARCHS = ("sm_90",)
# where nvcuda::wmma itself starts, by element format (clang BuiltinsNVPTX.def: __hmma_* need
# sm_70, __imma_* sm_72, __mma_bf16_* / __mma_tf32_* sm_80; PTX ISA "wmma.load" target notes)
SINCE = {"f16": "sm_70", "f32": "sm_70", "s8": "sm_72", "u8": "sm_72", "s32": "sm_72",
         "bf16": "sm_80", "tf32": "sm_80", "f64": "sm_80"}


@functools.lru_cache(maxsize=None)
def _document():
    return json.loads(DATA.read_text())


def _confirmed(env):
    return (f"measured on {env['gpu']} (driver {env['driver']}, CUDA {env.get('cuda_driver_api', '?')}, "
            f"{env['date'][:10]}) with gpu-check discover")


def _build(e, env):
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
    return build


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
                  build=_build(e, env), aliases=(_short(e["name"]),),
                  summary=f"nvcuda::wmma {e['use']} {e['layout']} {e['fmt']} fragment (measured on {env['gpu']})")
            for e in doc["entries"] if e.get("valid", True)]
