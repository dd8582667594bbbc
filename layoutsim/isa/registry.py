"""Names -> catalog entries.

Every family module exposes `entries()`: a list of `Entry` (names, archs, and a builder that
makes the Instruction on first use), so listing hundreds of wgmma shapes builds no tables.
User spellings are reduced to a key by `name_key` and matched against the keys of every
entry's canonical name and aliases: the full PTX spelling, the short one without
`sync.aligned` / `.row.col`, AMD mnemonics (which need the arch, as gfx11 and gfx12 lay the
same mnemonic out differently), and clang builtins.
"""
import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import archs as A
from ..errors import LayoutsimError, integer, suggest

FAMILY_MODULES = ("ptx_mma", "ptx_ldmatrix", "ptx_wgmma", "ptx_wmma", "amd_wmma", "amd_mfma",
                  "ptx_tcgen05", "ptx_tcgen05_mma", "ptx_mma_kind")

# Tokens that carry no layout information in a dotted PTX name, per opcode.
_DROP = {
    "mma": {"sync", "aligned", "row", "col"},
    "ldmatrix": {"sync", "aligned", "m8n8", "shared", "shared::cta", "b16"},
    "stmatrix": {"sync", "aligned", "m8n8", "shared", "shared::cta", "b16"},
    "wgmma": {"mma_async", "sync", "aligned"},
    "wmma": {"sync", "aligned"},
    "tcgen05": {"sync", "aligned", "b32"},
}


_SHAPE = re.compile(r"m\d+n\d+k\d+")


def name_key(name):
    """Reduce a user's spelling to the lookup key: lower case, PTX filler tokens dropped."""
    n = str(name).strip().lower()
    if "." not in n:
        return n
    head, *rest = n.split(".")
    drop = _DROP.get(head, set())
    rest = [t for t in rest if t not in drop]
    if head == "mma" and rest and rest[0].startswith("kind::"):
        # sm_120a's .kind:: forms: ptxas takes the shape after .kind/.block_scale too (CUTLASS writes
        # mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col...): the shape first
        shape = next((i for i, t in enumerate(rest) if _SHAPE.fullmatch(t)), None)
        if shape is not None:
            rest.insert(0, rest.pop(shape))
    return ".".join([head] + rest)


@dataclass(frozen=True)
class Entry:
    name: str                 # canonical name
    family: str
    vendor: str
    archs: tuple
    build: Callable           # () -> Instruction
    aliases: tuple = ()
    wave: int = 32            # AMD wave size of this entry (32 or 64); NVIDIA: 32
    summary: str = ""         # one line for `layoutsim list`
    arch_specific: bool = False   # compiled only for arch-specific targets (as Instruction)
    variant: Callable = None      # arch -> Instruction, where some of `archs` read other operand
    #                               formats than the default build (AMD fp8/bf8 MFMAs: gfx942 FNUZ,
    #                               gfx950 OCP); None: one Instruction serves every arch
    modified: Callable = None     # (arch, "cbsz:2 abid:1") -> Instruction: an entry that takes assembly
    #                               modifiers (AMD MFMA's CBSZ/ABID/BLGP); None: it takes none

    def instruction(self, arch=None):
        """The Instruction (for `arch`, where the entry's archs differ in operand formats)."""
        inst = _built(self)
        if arch is None or self.variant is None or arch in inst.archs or arch not in self.archs:
            return inst
        return _variant(self, arch)


@functools.lru_cache(maxsize=None)
def _built(entry):
    inst = entry.build()
    done = confirmed()
    if entry.name in done.get("layouts", ()):
        inst = dataclasses.replace(inst, confirmed=f"layout confirmed on {done['gpu']} ({done['arch']}, driver "
                                   f"{done['driver']}, {done['date']}) by gpu-check run")
    return inst


@functools.lru_cache(maxsize=None)
def _variant(entry, arch):
    return entry.variant(arch)


CONFIRMED = Path(__file__).with_name("data") / "confirmed.json"
# what the readers of confirmed.json take from it (gpu-check report --confirmed writes it)
_CONFIRMED_SHAPE = {"gpu": (str, type(None)), "arch": (str, type(None)), "driver": (str, type(None)),
                    "date": str, "layouts": [str], "numerics": [str]}


@functools.lru_cache(maxsize=None)
def confirmed():
    """Entries a committed gpu-check report confirmed (data/confirmed.json, from `gpu-check report
    --confirmed`): {gpu, arch, driver, date, layouts, numerics}; {} when there is none."""
    from ..package_data import check, load_json
    return load_json(CONFIRMED, lambda doc: check(doc, _CONFIRMED_SHAPE)) if CONFIRMED.exists() else {}


@functools.lru_cache(maxsize=None)
def all_entries():
    import importlib
    out = []
    for mod in FAMILY_MODULES:
        out.extend(importlib.import_module(f"{__package__}.{mod}").entries())
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _index():
    idx = {}
    for e in all_entries():
        for key in {name_key(n) for n in (e.name, *e.aliases)}:
            idx.setdefault(key, []).append(e)
    return idx


def split_modifiers(name):
    """("v_mfma_...", "cbsz:2 abid:1") from a name followed by AMD assembly modifiers (separated
    by spaces only: a name with a newline or other control character stays whole, so the error
    about it shows it)."""
    parts = [p for p in str(name).split(" ") if p]
    if len(parts) < 2:
        return str(name), ""
    return parts[0], " ".join(parts[1:])


def lookup(name, arch=None, wave=None):
    """The catalog entry for a user's spelling, disambiguated by arch (and AMD wave size);
    trailing MFMA modifiers ("cbsz:2 abid:1 blgp:3") are left to `get`."""
    if not isinstance(name, str):
        raise LayoutsimError(f"instruction name: give a string (as 'mma.m16n8k16.f32.f16.f16.f32'), not "
                             f"{type(name).__name__} {name!r:.60}")
    arch = A.normalize(arch)
    name = split_modifiers(name)[0]
    key = name_key(name)
    cands = _index().get(key)
    if not cands:
        raise LayoutsimError(f"unknown instruction {name!r}{suggest(key, list(_index()))}; "
                             f"`layoutsim list` shows them all")
    if wave is not None:
        wave = integer(wave, "wave size")
        if int(wave) not in (32, 64):
            raise LayoutsimError(f"wave size must be 32 or 64, not {wave!r}")
        if all(e.vendor == "nvidia" for e in cands):
            if int(wave) != 32:
                raise LayoutsimError(f"{name} is an NVIDIA instruction: warps have 32 lanes, not {wave}")
        else:
            fits = [e for e in cands if e.wave == int(wave)]
            if not fits:
                raise LayoutsimError(f"{name} has no wave{wave} form: it runs in wave"
                                     f"{'/'.join(str(w) for w in sorted({e.wave for e in cands}))}")
            cands = fits
    if len(cands) > 1 and wave is None and any(e.vendor == "amd" for e in cands):
        w32 = [e for e in cands if e.wave == 32]
        if w32 and len({e.wave for e in cands}) > 1:
            cands = w32   # wave32 is the default on RDNA
    if arch is not None:
        fits = [e for e in cands if arch in e.archs]
        if not fits:
            e = cands[0]
            inst = e.instruction()
            inst.check_arch(arch)          # raises with the introducing arch
        cands = fits
    if len(cands) > 1:
        gens = sorted({A.generation(a) for e in cands for a in e.archs if a in A.AMD})
        raise LayoutsimError(f"{name!r} differs between {', '.join(gens)}: give --arch "
                             f"(for example --arch {'gfx1201' if 'gfx12' in gens else cands[0].archs[0]})")
    return cands[0]


def get(name, arch=None, wave=None):
    """The Instruction for a user's spelling (see `lookup`), with its MFMA modifiers applied."""
    entry = lookup(name, arch, wave)
    mods = split_modifiers(name)[1]
    if not mods:
        return entry.instruction(A.normalize(arch))
    if entry.modified is None:
        raise LayoutsimError(f"{entry.name} takes no modifiers ({mods!r}): cbsz/abid/blgp belong "
                             f"to AMD MFMA instructions, byte-id/thread-id selectors to sm_120's block-scaled mma.sync")
    return entry.modified(A.normalize(arch), mods)


def listing(arch=None, family=None):
    """Catalog entries, optionally on one arch and of one family; a family also takes in its
    dotted sub-families (`wmma` lists AMD v_wmma_* and nvcuda::wmma's `wmma.load`)."""
    arch = A.normalize(arch)
    out = [e for e in all_entries() if arch is None or arch in e.archs]
    if family:
        fams = sorted({e.family for e in all_entries()})
        if family not in fams and not any(f.startswith(family + ".") for f in fams):
            raise LayoutsimError(f"unknown family {family!r}{suggest(family, fams)}; valid: {', '.join(fams)}")
        out = [e for e in out if e.family == family or e.family.startswith(family + ".")]
    return out
