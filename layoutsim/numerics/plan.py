"""From (instruction, arch profile) to the kernel's parameters: which path, block size, bits.

A Plan is plain data (no numba): `describe()` prints it, the case generator varies it, and
the corpus report names the profile parameters a mismatch could point at (`uses`).
"""
from dataclasses import dataclass, field

from ..errors import LayoutsimError
from ..formats import get_format
from .profiles import Profile

INT_FORMATS = ("s8", "u8", "s4", "u4")
FP8 = ("e4m3", "e5m2")
F6F4 = ("e2m3", "e3m2", "e2m1")    # OCP MX FP6/FP4: no Inf/NaN, on the scaled path (scaled.py)
MMA_FAMILIES = ("mma", "wgmma", "wmma", "swmmac", "mfma", "tcgen05.mma", "mma_kind")   # swmmac: the dense
#                                 arithmetic on its logical (expanded) A, see sparse.py


@dataclass(frozen=True)
class Plan:
    kind: str                  # "float" (block FMA), "int" (exact), "f64" (fma chain),
    #                            "cdna" (a CDNA MFMA float model of MMA-Sim, cdna.py),
    #                            "scaled" (ST-/GST-FDPA on exact values, scaled.py: FP6/FP4
    #                            inputs, block scale factors)
    instruction: str
    arch: str
    shape: tuple               # (M, N, K)
    a: str                     # operand formats as the instruction names them
    b: str
    c: str
    d: str
    arith_a: str = ""          # formats the arithmetic runs on (fp8 on the fp16 path: "f16")
    arith_b: str = ""
    block: int = 0             # products per block
    align_bits: int = 0        # bits kept below the largest exponent
    floor: object = None       # lower clamp of the largest exponent (None: none)
    rounding: str = "rz"
    keep_bits: int = 0         # fraction bits of the rounded result (23/10, or 13 for E8M13)
    k_order: tuple = ()        # order of k (blocks are consecutive runs of it); () = 0..K-1
    late_c: bool = False
    group: int = 0             # products summed in groups of this many first (0: no group stage)
    nan_factor: object = None  # raw D bits of a NaN factor's result (None: the canonical NaN)
    nan_invalid: object = None  # ... of an invalid product's (Inf * 0, +Inf with -Inf)
    model: str = ""            # cdna: the MMA-Sim model (cdna.MODELS)
    saturate: bool = False     # integers: .satfinite
    scale: str = ""            # scaled: the scale factors' format ("" none: unit scales)
    scale_block: int = 0       # scaled: K elements per scale factor
    uses: tuple = ()           # profile parameters this result depends on
    profile: Profile = None
    inst: object = field(default=None, compare=False, repr=False)   # the Instruction

    def describe(self):
        M, N, K = self.shape
        head = f"{self.instruction} on {self.profile.label(self.a, self.d)}"
        if self.kind == "int":
            sat = (f"clamped to int32 ({self.profile.int_saturation})" if self.saturate
                   else "wrapped modulo 2^32")
            return f"{head}\n  exact integer sum of {K} products and C, {sat}"
        if self.kind == "f64":
            return f"{head}\n  f64: {self.profile.f64} over k = 0..{K - 1}, IEEE round to nearest"
        if self.kind == "scaled":
            how = (f"groups of {self.group} products summed first, each scaled by its block's "
                   f"{self.scale} factors (GST-FDPA)" if self.group else
                   f"products{' x ' + self.scale + ' scales of ' + str(self.scale_block) + ' k' if self.scale else ''} "
                   f"(ST-FDPA)")
            return (f"{head}\n  inputs {self.a} x {self.b}, C {self.c}, D {self.d}\n  blocks of "
                    f"{self.block} k: {how}; {self.align_bits} bits kept below the largest exponent "
                    f"(zero at {self.floor}); result {self.rounding} to {self.keep_bits} fraction bits")
        if self.kind == "cdna":
            from .cdna import describe
            return (f"{head}\n  inputs {self.a} x {self.b}, C {self.c}, D {self.d}\n  "
                    f"{self.model} (MMA-Sim): {describe(self.model, self.block, K)}")
        if self.inst is not None and self.inst.family == "swmmac":
            head += ("\n  A 2:4 sparse: computed as the dense instruction on the logical (expanded) A, "
                     "blocks over logical k (an assumption, like the rest of the AMD arithmetic)")
        path = "" if self.arith_a == self.a else f" (converted to {self.arith_a}: the fp16 path)"
        order = "" if not self.k_order else f"\n  k order: {list(self.k_order)}"
        return (f"{head}\n  inputs {self.a} x {self.b}{path}, C {self.c}, D {self.d}\n"
                f"  blocks of {self.block} products; {self.align_bits} bits kept below the "
                f"largest exponent (floor {self.floor}); result {self.rounding} to "
                f"{self.keep_bits} fraction bits" + ("; C added last, RNE" if self.late_c else "")
                + self._amd_steps() + order)

    def _amd_steps(self):
        """The gfx12 step structure, where the profile has it (profiles.GFX12_PROFILE)."""
        p = self.profile
        if not (self.group or p.alignment != "truncate" or p.c_extra_bits):
            return ""
        if p.sign_frame == "c":
            return ("\n  each step in C's sign frame: a term of the other sign counts -magnitude - 1; "
                    f"C keeps {p.c_extra_bits} more bits")
        out = "\n  "
        if self.group:
            out += f"products aligned and summed in groups of {self.group} first; "
        out += (f"alignment by {p.alignment}" + (f"; C keeps {p.c_extra_bits} more bits"
                                                   if p.c_extra_bits else ""))
        nans = [f"{k} NaN {v:#x}" for k, v in (("factor", self.nan_factor),
                                                ("invalid", self.nan_invalid)) if v is not None]
        if nans or p.nan_c == "quiet":
            out += "; " + ", ".join(nans + (["a NaN C comes back quieted"] if p.nan_c == "quiet"
                                            else []))
        return out


def instruction_formats(inst):
    f = inst.formats
    d = f.get("d")
    return f.get("a"), f.get("b"), f.get("c", d), d


def make_plan(inst, profile):
    """The Plan of an Instruction under a Profile."""
    if inst.family not in MMA_FAMILIES:
        raise LayoutsimError(f"{inst.name} is a {inst.family} instruction, not a matrix multiply; "
                             f"layoutsim.mma takes mma.sync, wgmma and WMMA instructions")
    a, b, c, d = instruction_formats(inst)
    signed = {"u8": "s8", "u4": "s4"}          # AMD iu8/iu4: the NEG bits pick signed operands
    if inst.options.get("signed_a"):
        a = signed.get(a, a)
    if inst.options.get("signed_b"):
        b = signed.get(b, b)
    M, N, K = inst.shape
    if inst.options.get("sparse") and inst.options.get("scale_vec"):
        raise LayoutsimError(f"{inst.name}: no numeric model for a block-scaled sparse tcgen05.mma (whether its "
                             f"scale blocks run over the logical K or the kept values is not documented here)")
    # tcgen05.mma.sp and .ws.sp: the kind's dense arithmetic on the logical A (M x K, K the sparse K),
    # blocks over logical k (assumed; numerics/sparse_tcgen05.py)
    common = dict(instruction=inst.name, arch=profile.arch, shape=(M, N, K), a=a, b=b, c=c, d=d,
                  arith_a=a, arith_b=b, profile=profile, inst=inst)
    if a in INT_FORMATS:
        sat = bool(inst.options.get("satfinite") or inst.options.get("clamp"))
        uses = ("int_saturation",) if sat else ()
        return Plan(kind="int", saturate=sat, uses=uses, **common)
    if a == "f64":
        return Plan(kind="f64", uses=("f64", "nan_f64", "nan_f64_rule", "nan_f64_order",
                                           "nan_f64_snan_first"), **common)
    if inst.family == "mfma":
        from .cdna import F_BITS, model_of
        model, L = model_of(inst, profile)
        return Plan(kind="cdna", model=model, block=min(L, K), align_bits=F_BITS, rounding="rne",
                    keep_bits=23,
                    uses=("mfma",), **common)
    scale = inst.formats.get("scale", "")
    if scale or a in F6F4 or b in F6F4:
        return _scaled(inst, profile, scale, d, K, common)
    if (get_format(a).kind != "float" or d not in ("f32", "f16", "bf16")
            or {get_format(a).specials, get_format(b).specials} - {"ieee", "fn"}
            or a == "f32" or get_format(a).bits < 8):
        raise LayoutsimError(f"{inst.name}: no numeric model for inputs {a}/{b} with result {d}")
    f32_out = d == "f32"
    # 16-bit results (f16, and AMD's bf16) follow the fp16-result parameters; the f16 floor
    # is an exponent of the f16 range, so a bf16 result gets none (AMD's assumption has none)
    uses = ["fp32_rounding" if f32_out else "fp16_rounding",
            "emax_floor_f32" if f32_out else "emax_floor_f16", "c_zero", "product_exponent",
            "subnormal_inputs", "subnormal_outputs", "overflow", "specials", "zero_sign",
            "nan_f32" if f32_out else "nan_f16"]
    rounding = profile.fp32_rounding if f32_out else profile.fp16_rounding
    if d == "bf16" and profile.bf16_rounding:
        rounding = profile.bf16_rounding
        uses[0] = "bf16_rounding"
    floor = (profile.emax_floor_f32 if f32_out else profile.emax_floor_f16 if d == "f16"
             else profile.emax_floor_bf16)
    if d == "bf16" and profile.emax_floor_bf16 is not None:
        uses[1] = "emax_floor_bf16"
    group = 0
    payloads = dict(profile.nan_payloads)
    nan_factor = payloads.get(f"factor.{d}")
    nan_invalid = payloads.get(f"invalid.{d}")
    keep = get_format(d).mbits
    k_order = ()
    late = False
    if a in FP8:
        if inst.family == "mma" and profile.fp8_mma_sync == "f16":
            common.update(arith_a="f16", arith_b="f16")
            block, align = profile.block_16bit, 23 + profile.extra_bits
            uses += ["fp8_mma_sync", "block_16bit", "extra_bits", "fp8_f16_split", "fp8_f16_c"]
            if profile.fp8_f16_split == "pairs" and K > block:
                k_order = tuple([k for k in range(K) if k % 4 < 2] + [k for k in range(K) if k % 4 >= 2])
            late = profile.fp8_f16_c == "late"
        else:
            block, align, group = profile.block_fp8, profile.fp8_align_bits, profile.group_fp8
            nan_invalid = payloads.get(f"invalid.fp8.{d}", nan_invalid)
            if f32_out:
                keep = min(keep, profile.fp8_f32_bits)
            uses += ["fp8_mma_sync", "block_fp8", "fp8_align_bits"] + (["fp8_f32_bits"] if f32_out else [])
    elif a == "tf32":
        block, align = profile.block_tf32, 23 + profile.extra_bits
        uses += ["block_tf32", "extra_bits", "tf32_inputs"]
    else:
        block, align, group = profile.block_16bit, 23 + profile.extra_bits, profile.group_16bit
        uses += ["block_16bit", "extra_bits"]
    if group or profile.alignment != "truncate" or profile.c_extra_bits:
        uses += ["group_16bit" if get_format(a).bits == 16 else "group_fp8", "alignment",
                 "c_extra_bits", "tiny_negative_c", "nan_c", "nan_payloads"]
    return Plan(kind="float", block=min(block, K), align_bits=align, floor=floor,
                rounding=rounding, keep_bits=keep, k_order=k_order, late_c=late, group=group,
                nan_factor=nan_factor, nan_invalid=nan_invalid, uses=tuple(uses), **common)


def _scaled(inst, profile, scale, d, K, common):
    """Block-scaled kinds and FP6/FP4 inputs (scaled.py): ST-FDPA over blocks of block_fp8 k
    (fp8_align_bits), or GST-FDPA over the whole K for the K=64 FP4 forms."""
    if d not in ("f32", "f16") or inst.family == "wgmma":
        raise LayoutsimError(f"{inst.name}: no numeric model for a {d} result")
    f32_out = d == "f32"
    uses = ["emax_floor_f32" if f32_out else "emax_floor_f16", "overflow",
            "zero_sign", "nan_f32" if f32_out else "nan_f16"]
    group = 0
    block, align, floor = profile.block_fp8, profile.fp8_align_bits, (
        profile.emax_floor_f32 if f32_out else profile.emax_floor_f16)
    if scale and K == 64 and inst.formats["a"] == "e2m1":
        group, block, align, floor = profile.gst_group, K, profile.gst_bits, profile.gst_e_zero
        uses += ["gst_group", "gst_bits", "gst_e_zero"]
        if not group:
            raise LayoutsimError(f"{inst.name}: {profile.arch} has no block-scaled FP4 arithmetic")
    else:
        uses += ["block_fp8", "fp8_align_bits"]
    return Plan(kind="scaled", block=min(block, K), align_bits=align, floor=floor,
                rounding=profile.fp32_rounding if f32_out else profile.fp16_rounding,
                keep_bits=23 if f32_out else 10, group=group, scale=scale,
                scale_block=int(inst.options.get("block") or K), uses=tuple(uses), **common)
