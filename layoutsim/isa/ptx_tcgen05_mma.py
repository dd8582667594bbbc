"""tcgen05.mma catalog entries (sm_100a): every kind, cta_group::1/::2, .ws, dense and sparse,
every legal M/N/K, each with the TMEM map of its accumulator D (isa/ptx_tcgen05.py, Layouts A-G).

Names spell the shape, which PTX keeps in the instruction descriptor:
`tcgen05.mma.cta_group::1.kind::f16.m128n256k16`, `tcgen05.mma.ws.cta_group::1.kind::tf32.m64n128k8`,
`tcgen05.mma.sp.cta_group::2.kind::f8f6f4.m256n256k64`,
`tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X.m128n256k64`.
The element types are in the descriptor too: an entry has its kind's default formats and
`TYPES[kind]` lists the (d, a, b) every kind accepts (`layoutsim.mma(..., types=...)`).

Shapes: PTX ISA 9.x (v9.2) 9.7.16.2.1 'Matrix Shape', Table 39 for .kind::f16, tf32, f8f6f4
(dense K = 32 bytes of A/B, sparse twice that; no .ws with cta_group::2), and its .kind::i8 .ws rows
(M 32/64/128, N 64/128/256, sparse N 64/128). Its other .kind::i8 rows (dense and sparse) and the block-scaled kinds
were not read here: their M/N are CUTLASS 4.2's
(cute/arch/mma_sm100_umma.hpp static_asserts), marked assumed in each entry.
"""
import dataclasses

from ..archs import compile_target
from ..errors import LayoutsimError
from .instruction import Instruction, Operand
from .ptx_tcgen05 import ARCHS, d_fragment, layout_letter, sf_fragment
from .registry import Entry

TABLE39 = "PTX ISA 9.x (v9.2) 9.7.16.2.1 'Matrix Shape' Table 39"
CUTE = ("CUTLASS 4.2 cute/arch/mma_sm100_umma.hpp static_asserts (assumed: PTX ISA Table 39's "
        "rows for this kind not read here)")
# .kind::mxf8f6f4 with cta_group::2 M = 128 (CUTLASS 4.2's SM100_MMA_MXF8F6F4_2x1SM_SS static_asserts M == 256)
CUTE_MX_PAIR = (CUTE + "; M = 128 as for .kind::mxf4: CUTLASS 4.7's MMA_Traits<SM100_MMA_MXF8F6F4_2x1SM_SS> give "
                "M == 128 its own scale layout, and JAX's Mosaic GPU runs it on a B200 "
                "(tests/mosaic/gpu_test.py test_mma_block_scaled_collective_m128, e5m2, N 64..256)")
DATAPATH = ("PTX ISA 9.x 9.7.16.10 'Data path layout organization' (Layout {letter}); (row, col) -> "
            "(lane, column) as TVM TIRx tmem_datapath_layout publishes it, = CUTLASS 4.2 UMMA::tmem_frg")
F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
# kind -> (K of a dense MMA, [(d, a, b)] the kind takes, the default (first), scale format(s))
KINDS = {
    "tf32": (8, [("f32", "tf32", "tf32")], ()),
    "f16": (16, [("f32", "f16", "f16"), ("f32", "bf16", "bf16"), ("f16", "f16", "f16")], ()),
    "f8f6f4": (32, [(d, a, b) for d in ("f32", "f16") for a in F8F6F4 for b in F8F6F4], ()),
    "i8": (32, [("s32", a, b) for a in ("s8", "u8") for b in ("s8", "u8")], ()),
    "mxf8f6f4": (32, [("f32", a, b) for a in F8F6F4 for b in F8F6F4], ("ue8m0",)),
    "mxf4": (64, [("f32", "e2m1", "e2m1")], ("ue8m0",)),
    "mxf4nvf4": (64, [("f32", "e2m1", "e2m1")], ("ue8m0", "ue4m3")),
}
TYPES = {k: v[1] for k, v in KINDS.items()}
# block-scaled kinds: scale_vec -> (K elements per scale, scale formats); PTX ISA 9.x 9.7.16.10.7
# 'Block scaling' (.scale_vec::1X/2X/4X; .block32 = 1X/2X, .block16 = 4X)
SCALE_VEC = {"mxf8f6f4": {"1X": (32, ("ue8m0",))}, "mxf4": {"2X": (32, ("ue8m0",))},
             "mxf4nvf4": {"2X": (32, ("ue8m0",)), "4X": (16, ("ue8m0", "ue4m3"))}}


def _steps(lo, step):
    return tuple(range(lo, 257, step))


def shapes(kind, cta_group, ws, sparse):
    """[(M, N)] legal for one form, and the source saying so; [] where the form does not exist."""
    if kind in ("f16", "tf32", "f8f6f4"):
        if ws:
            if cta_group == 2:
                return [], TABLE39
            ns = (64, 128) if sparse else (64, 128, 256)
            return [(m, n) for m in (32, 64, 128) for n in ns], TABLE39
        ms = (64, 128) if cta_group == 1 else (128, 256)
        return [(m, n) for m in ms for n in _steps(8 * cta_group, 8 * cta_group)], TABLE39
    if kind == "i8" and ws:      # Table 39's .kind::i8 .ws rows: as the float kinds', cta_group::1 only
        return ([(m, n) for m in (32, 64, 128) for n in ((64, 128) if sparse else (64, 128, 256))]
                if cta_group == 1 else []), TABLE39
    if ws or (sparse and kind != "i8"):
        return [], CUTE          # not in the catalog: .ws/.sp of these kinds not read here
    if kind == "i8":             # dense and sparse alike (CUTLASS's SM100_MMA_S8_SS[_SPARSE], _2x1SM_ too)
        ns = (8,) + _steps(16, 16) if cta_group == 1 else _steps(32, 32)
        ms = (64, 128) if cta_group == 1 else (128, 256)
        return [(m, n) for m in ms for n in ns], CUTE
    if cta_group == 1:
        return [(128, n) for n in _steps(8, 8)], CUTE
    return [(m, n) for m in (128, 256) for n in _steps(16, 16)], CUTE if kind != "mxf8f6f4" else CUTE_MX_PAIR


def _name(kind, cta_group, ws, sparse, scale_vec, m, n, k):
    ws_t = ".ws" if ws else ""
    sp_t = ".sp" if sparse else ""
    bs = f".block_scale.scale_vec::{scale_vec}" if scale_vec else ""
    return f"tcgen05.mma{sp_t}{ws_t}.cta_group::{cta_group}.kind::{kind}{bs}.m{m}n{n}k{k}"


def _aliases(kind, cta_group, ws, sparse, scale_vec, m, n, k):
    if not scale_vec:
        return ()
    block = SCALE_VEC[kind][scale_vec][0]
    return (_name(kind, cta_group, ws, sparse, None, m, n, k).replace(
        f"kind::{kind}", f"kind::{kind}.block_scale.block{block}"),)


def _notes(kind, cta_group, ws, sparse, scale_vec, letter, m, n, source):
    out = [f"D lies in tensor memory (Layout {letter}): 'lane' is the TMEM lane"
           + (" (lane L: TMEM lane L % 128 of CTA L // 128 of the CTA pair)" if cta_group == 2 else "")
           + ", 'reg' the 32-bit column from D's TMEM address",
           "A comes from shared memory (descriptor) or TMEM, B from shared memory: no register map",
           f"element types are in the instruction descriptor: {', '.join('.'.join(t) for t in TYPES[kind][:6])}"
           + (" ..." if len(TYPES[kind]) > 6 else "") + f" (layoutsim.mma types=; default {'.'.join(TYPES[kind][0])})",
           f"compile for {compile_target(ARCHS[0], arch_specific=True)}: tcgen05 is an arch-specific "
           f"feature of {ARCHS[0]}"]
    if letter in "ABDF":
        out.append(f"Layout {letter} cross-checked (no B200 here): CUTLASS 4.2 UMMA::tmem_frg "
                   "(cute/atom/mma_traits_sm100.hpp) puts every D element in the same cell"
                   + ("; so do Triton 3.6's B200 accumulator loads" if letter in "DF" else ""))
    elif letter in "EG":
        out.append(f"Layout {letter} cross-checked (no B200 here): CUTLASS 4.2 UMMA::tmem_frg_ws "
                   "(cute/atom/mma_traits_sm100.hpp) puts every D element in the same cell")
    else:
        out.append(f"warning: Layout {letter} is assumed from the PTX ISA's description (TVM TIRx's "
                   "closed form); no second implementation was compared")
    if source in (CUTE, CUTE_MX_PAIR):
        out.append(f"warning: the legal M/N of .kind::{kind} are assumed from {source}")
    if sparse:
        out.append("sparse: A is M x K/2 kept values, their metadata (4 bits per chunk, PTX ISA 9.7.16.10.8) in "
                   "TMEM at [sp-meta-tmem]")
        out.append(f"warning: where the metadata lies is CUTLASS 4.2's UMMA::tmem_e_frg{'_ws' * ws} "
                   "(layoutsim/ptx/ops_tcgen05_sparse.py), assumed" if m == 128 * cta_group or ws else
                   f"warning: the metadata layout of {m // cta_group} rows per CTA is not mapped (the PTX ISA's "
                   "M=64 figures were not read here; the executor refuses this form)")
    if TYPES[kind][0][0] == "f32" and any(t[0] == "f16" for t in TYPES[kind]):
        out.append("a 16-bit D takes one 32-bit column per element (its low 16 bits; tcgen05.ld "
                   ".pack::16b packs two): Triton 3.6's B200 f16-accumulator kernels lay it out so "
                   "(TMEM colStride 2) and read it so; the map above counts the same columns")
    if scale_vec:
        block, fmts = SCALE_VEC[kind][scale_vec]
        out.append(f"block scaling: one {'/'.join(fmts)} scale per {block} K elements of each A row "
                   f"and B column (scale_vec::{scale_vec}); the scale factors lie in TMEM (tcgen05.cp)"
                   + ": operands SFA / SFB map them ('lane' the TMEM lane, 'reg' the 32-bit column "
                   "from the scale address, slot the byte); "
                   + ("the map shows the first 32-lane slab, and every slab holds a copy (lane + 32, + 64, + 96)"
                      if cta_group == 1 else
                      f"lane L is TMEM lane L % 128 of CTA L // 128: each CTA holds the scales of its {m // 2} "
                      "rows of A (every 32-lane slab a copy) and of all N columns of B (SFB shows the even CTA's; "
                      "the odd CTA holds the same" + (", every slab a copy)" if m == 256 else
                                                        "; columns j of half j // (N/2) in lanes 64 (j // (N/2)) "
                                                        "+ j % 32 and 32 lanes on)")))
        out.append("warning: the SFA/SFB layout is assumed (the PTX ISA's scale-factor figures were not read "
                   "here): " + ("CUTLASS 4.2's UMMA::tmem_sf_frg (ScaleFactorDuplicated4by1)" if cta_group == 1
                                else "CUTLASS 4.2's 2x1SM MMA_ScaleFactor and Triton's Gluon 2-CTA example"
                                if m == 256 else "JAX Mosaic GPU's B200-tested layout (= CUTLASS's "
                                "ScaleFactorDuplicated2by2 for N = 128, 256)") + " (layoutsim/ptx/tcgen05_scales.py)")
    return tuple(out)


def _build(name, alias, kind, cta_group, ws, sparse, scale_vec, m, n, k, source):
    letter = layout_letter(cta_group, m, ws, sparse)

    def build():
        d, a, b = TYPES[kind][0]
        frag = d_fragment(letter, m, n, cta_group, 32)
        ops = {"D": Operand("D", d, frag, "output")}
        if scale_vec:
            nsf = k // SCALE_VEC[kind][scale_vec][0]
            fs = SCALE_VEC[kind][scale_vec][1][0]
            pair = (m, n) if cta_group == 2 else None
            ops["SFA"] = Operand("SFA", fs, sf_fragment(m, nsf, True, pair), "input")
            ops["SFB"] = Operand("SFB", fs, sf_fragment(n, nsf, False, pair), "input")
        formats = {"a": a, "b": b, "c": d, "d": d}
        if scale_vec:
            formats["scale"] = SCALE_VEC[kind][scale_vec][1][0]
        opts = {"kind": kind, "cta_group": cta_group, "ws": ws, "sparse": sparse,
                "scale_vec": scale_vec, "layout": letter,
                "block": SCALE_VEC[kind][scale_vec][0] if scale_vec else None}
        return Instruction(name=name, family="tcgen05.mma", vendor="nvidia", threads=1,
                           operands=ops, shape=(m, n, k), archs=ARCHS, aliases=alias,
                           formats=formats, source=f"{source}; {DATAPATH.format(letter=letter)}",
                           notes=_notes(kind, cta_group, ws, sparse, scale_vec, letter, m, n, source),
                           options=opts, arch_specific=True)
    return build


def entries():
    out = []
    for kind, (k0, _, _) in KINDS.items():
        vecs = tuple(SCALE_VEC.get(kind, {None: None}))
        for cta_group in (1, 2):
            for ws in (False, True):
                for sparse in (False, True):
                    mn, source = shapes(kind, cta_group, ws, sparse)
                    k = k0 * (2 if sparse else 1)
                    for scale_vec in vecs:
                        for m, n in mn:
                            name = _name(kind, cta_group, ws, sparse, scale_vec, m, n, k)
                            alias = _aliases(kind, cta_group, ws, sparse, scale_vec, m, n, k)
                            out.append(Entry(
                                name=name, family="tcgen05.mma", vendor="nvidia", archs=ARCHS,
                                build=_build(name, alias, kind, cta_group, ws, sparse, scale_vec,
                                             m, n, k, source),
                                aliases=alias, arch_specific=True,
                                summary=f"{m}x{n}x{k} D(TMEM, layout "
                                        f"{layout_letter(cta_group, m, ws, sparse)}) "
                                        f"= A x B (+ D), kind::{kind}"))
    return out


def with_types(inst, types):
    """The tcgen05.mma Instruction with element types "d.a.b" (one of TYPES[kind]): the
    descriptor's types, which the name does not spell."""
    kind = inst.options.get("kind") if inst.family == "tcgen05.mma" else None
    if kind is None:
        raise LayoutsimError(f"types= sets tcgen05.mma's descriptor types; {inst.name} spells its types")
    want = tuple(str(types).split("."))
    vec = inst.options.get("scale_vec")
    scales = SCALE_VEC[kind][vec][1] if vec else ()
    scale = want[3] if len(want) == 4 and want[3] in scales else inst.formats.get("scale")
    if want[:3] not in TYPES[kind] or len(want) not in (3, 4) or (len(want) == 4 and want[3] not in scales):
        raise LayoutsimError(f"types {types!r} are not legal for {inst.name}; valid: "
                             f"{', '.join('.'.join(t) for t in TYPES[kind])}"
                             + (f", each with a scale format .{'/.'.join(scales)}" if scales else ""))
    d, a, b = want[:3]
    extra = {"scale": scale} if scale else {}
    return dataclasses.replace(inst, formats={**inst.formats, "a": a, "b": b, "c": d, "d": d, **extra},
                               operands={**inst.operands, "D": dataclasses.replace(inst.operands["D"], fmt=d)})
