"""Arch profiles: what a tensor core does to an inner product, as a handful of parameters.

The arithmetic (one generic block-FMA, `kernel.py`) is the same for every arch; a profile
only says how big a block is, how many bits below the largest exponent survive alignment,
how the result is rounded, and the few behaviours the published models disagree on. Every
parameter names its source in `Profile.sources`; `confirmed` says whether a GPU here has
checked it (only sm_90 can be: the H200 corpus under tests/data/numerics/ decides).

Sources (cited by key):
  KM     Khattak & Mikaitis, "Accurate Models of NVIDIA Tensor Cores", arXiv:2512.07004 (2025);
         models in github north-numerical-computing/MATLAB-tensor-core (models/V100TC.m,
         A100TC.m, AdaTC.m, H100TC.m, B200TC.m, tools/Generic_BFMA_TC.m, tools/GEMM.m).
  FASI   Fasi, Higham, Mikaitis & Pranesh, "Numerical behavior of NVIDIA tensor cores",
         PeerJ Comput. Sci. 7:e330 (2021); tests in github north-numerical-computing/
         tensor-cores-numerical-behavior.
  MMASIM Xie, Wang, Yang & Yang, "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and
         Matrix Cores", arXiv:2511.10909 (2025); pip mmasim 2.1.1 (mmasim/nv_ptx/sim.py: F bits,
         L_max bytes, e_zero per arch; arithmetic/fdpa.py: T-FDPA; arithmetic/fma.py: f64).
  CUTLASS NVIDIA/cutlass issue #1986, NVIDIA maintainer reply (2025-03-04): mma.sync with
         e4m3 is an sm_89 instruction, not native on sm_90; the compiler converts the data and
         uses the fp16 tensor core.
"""
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType

from ..archs import AMD, CDNA, GFX11, GFX12, NVIDIA, normalize
from ..cite import docs
from ..errors import LayoutsimError
from ..formats import canonical_nan, quiet_nan
from .cdna import MODELS, SOURCES

NOT_CONFIRMED = "not confirmed on a GPU here"
# The reports that confirm the sm_90 profile as it stands (docs/validation/*.json in the source
# tree; how the runs went, and how many cases separated each parameter from its alternatives:
# docs/validation/README.md). What is printed names them as a user finds them: by report name
# on the Validation page of the documentation, not by a path that is not installed.
DOCS = docs("Validation")
H200_REPORT = ("confirmed on NVIDIA H200 (driver 580.159.04, CUDA 13.0, 2026-11-30) by gpu-check: "
               f"reports h200-numerics-vector-kernel and h200-f64-nan-3000 ({DOCS})")
H200 = f"; H200: confirmed ({DOCS})"
UNVERIFIED = "UNVERIFIED ASSUMPTION: no published measurement; not run on AMD hardware"

@dataclass(frozen=True)
class Profile:
    """One arch's tensor-core arithmetic. Defaults are the behaviours every source agrees on."""
    arch: str
    title: str
    # --- the handful that differ between generations -------------------------------------
    block_16bit: int = 16        # products per block for f16/bf16 inputs
    block_tf32: int = 8          # products per block for tf32 inputs
    block_fp8: int = 32          # products per block on the native fp8 path (wgmma, sm_89)
    extra_bits: int = 2          # alignment keeps 23 + extra_bits bits below the largest exponent
    fp8_align_bits: int = 13     # native fp8 path: bits kept below the largest exponent
    fp8_f32_bits: int = 13       # native fp8 path: fraction bits of an fp32 result (E8M13)
    emax_floor_f32: int = -133   # largest exponent clamped from below (fp32 result) ...
    emax_floor_f16: int = -21    # ... and for an fp16 result (None: no clamp)
    fp8_mma_sync: str = "f16"    # mma.sync with e4m3/e5m2: "native" or "f16" (converted, fp16 path)
    # --- the rest: same for every NVIDIA profile, kept as parameters the GPU run can falsify --
    fp8_f16_split: str = "pairs"   # fp16 path: which 16 of the 32 k go to the first HMMA:
    #                                "pairs" (k%4 in {0,1} first) or "halves" (k 0-15, then 16-31)
    fp8_f16_c: str = "late"      # fp16 path: the products are summed with C = 0 and C is added
    #                              last, rounded to nearest ("late"), or C enters the first HMMA ("first")
    fp32_rounding: str = "rz"    # "rz", "rne", "rd", "ru"
    fp16_rounding: str = "rne"  # (every 16-bit result: f16, and bf16 on AMD)
    c_zero: str = "skip"         # C = 0 takes no part ("skip"), or sits at its format's emin ("emin")
    product_exponent: str = "sum"  # exponent of a*b used for alignment: ea + eb ("sum", significand
    #                                in [1, 4)), normalised to [1, 2) ("normalized"), or the exponent
    #                                of the product's leading bit, subnormal inputs too ("true")
    subnormal_inputs: str = "keep"   # subnormal A/B elements: "keep" or "flush" (to zero)
    subnormal_outputs: str = "keep"  # subnormal results, and a subnormal C: "keep" or "flush"
    tf32_inputs: str = "truncate"    # low 13 bits of a tf32 operand: "truncate" or "round" (RNE)
    overflow: str = "inf"        # result beyond the largest finite number: "inf" or "max" (RZ-style)
    specials: str = "per_block"  # NaN/Inf decided per block as the chain runs, or "upfront" over all K
    zero_sign: str = "positive"  # a zero result is +0 ("positive"), or keeps the sign of an
    #                              underflowed sum ("signed")
    int_saturation: str = "final"    # .satfinite clamps the final exact sum ("final"), or every
    #                                  partial sum ("each_product")
    f64: str = "fma_chain"       # f64: fma over k in order ("fma_chain"), reversed order
    #                              ("fma_chain_reversed"), or rounded products then adds ("mul_add")
    nan_f32: int = canonical_nan("f32")
    nan_f16: int = canonical_nan("f16")    # 16-bit results (0x7FFF is a NaN in f16 and in bf16)
    nan_f64: int = quiet_nan("f64", sign=1)  # f64: the NaN of an invalid operation (Inf*0, Inf-Inf)
    nan_f64_rule: str = "propagate"  # f64 NaN inputs: "propagate" (one input NaN goes on, payload
    #                                  and sign kept, quieted), or "canonical" (every NaN result
    #                                  is nan_f64)
    nan_f64_order: str = "BCA"   # propagate: which NaN operand of an fma step goes on when several
    #                              are NaN: the first in this order (B, C = the accumulator, A)
    nan_f64_snan_first: bool = False  # ... looking first for a signaling NaN in that order
    # --- the step structure AMD characterised for gfx12 (NVIDIA: these defaults) -----------
    group_16bit: int = 0         # 16-bit inputs: products aligned to their own largest and
    #                              summed in groups of this many before the step's alignment
    group_fp8: int = 0           # ... fp8 inputs (0: no group stage)
    alignment: str = "truncate"  # bits below the grid dropped toward zero, or by "floor"
    c_extra_bits: int = 0        # C keeps this many more bits below its exponent than products
    tiny_negative_c: str = "floor"  # floor alignment: a negative C with no bit left counts -1
    #                                 ("floor"), or 0 once the grid is above C's emin
    #                                 ("zero_above_emin")
    emax_floor_bf16: object = None   # largest exponent clamped from below, bf16 result
    bf16_rounding: object = None     # bf16 results: None = fp16_rounding, or "rne32_truncate"
    #                                  (rounded to nearest as an fp32, low 16 bits dropped)
    nan_c: str = "canonical"     # a NaN C (accumulator): the canonical NaN, or "quiet" (its
    #                              payload kept, quiet bit set)
    sign_frame: str = "none"     # "c": gfx11's step, every term counted in C's sign frame, the
    #                              other sign as its ones' complement (cfg.py SIGN_FRAME)
    subnormal_inputs_bf16: object = None   # bf16 A/B subnormals: None = subnormal_inputs, "flush"
    nan_payloads: tuple = ()     # ((cause, raw bits), ...): NaN results by cause: "factor.<d>"
    #                              (a NaN factor),
    #                              "invalid.<d>" (Inf * 0, +Inf with -Inf), "invalid.fp8.<d>";
    #                              a cause not listed gives nan_f32 / nan_f16
    # --- block-scaled FP4 (GST-FDPA, numerics/scaled.py; 0: no such MMA on the arch) ----------
    gst_group: int = 0           # products summed exactly in groups of this many first
    gst_bits: int = 0            # bits kept below the largest group-scale exponent (F)
    gst_e_zero: int = 0          # exponent of an all-zero group or a zero scale (and of C = 0)
    # --- CDNA MFMA: MMA-Sim's models (numerics/cdna.py; NVIDIA, RDNA: none) -------------
    mfma: tuple = ()             # ((input kind, model, products per step), ...) of cdna.MODELS
    # --- provenance ----------------------------------------------------------------------
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    confirmed: str = NOT_CONFIRMED
    confirmed_params: tuple = ()  # parameters a GPU run here separated from their alternatives
    verified: bool = True        # False: an explicit assumption with no published basis (AMD)
    unproven: tuple = ()         # input formats, or "->d" result formats, no capture covers

    def source(self, param):
        return self.sources.get(param) or COMMON_SOURCES.get(param, "")

    def parameters(self):
        """(name, value, source) for every arithmetic parameter, in declaration order."""
        skip = {"arch", "title", "sources", "confirmed", "confirmed_params", "verified",
                "unproven"}
        return [(f.name, getattr(self, f.name), self.source(f.name))
                for f in fields(self) if f.name not in skip]

    def with_(self, **changes):
        """A variant (for candidate behaviours): same profile, some parameters changed."""
        bad = [k for k in changes if k not in {f.name for f in fields(self)}]
        if bad:
            raise LayoutsimError(f"unknown profile parameter {bad[0]!r}; valid: "
                                 f"{', '.join(n for n, _, _ in self.parameters())}")
        return replace(self, **changes)

    def label(self, fmt=None, d=None, why=None):
        """One line naming the profile and its evidence (for input format `fmt` and result
        format `d`, if given; `why`, when given, says why the results are an assumption, ""
        when evidence covers them: numerics.api.unverified of a plan)."""
        why = self.unverified(fmt, d) if why is None else why
        if why:
            return f"{self.arch} ({self.title}) [{why}]"
        return f"{self.arch} ({self.title}; {self.confirmed})"

    def unverified(self, fmt=None, d=None):
        """Why results for inputs of format `fmt` (result format `d`) are an assumption, or ""
        when evidence covers them (a GPU here, published captures)."""
        if not self.verified:
            return UNVERIFIED
        what = (f"{fmt} inputs" if fmt is not None and fmt in self.unproven else
                f"{d} results" if d is not None and f"->{d}" in self.unproven else "")
        if what:
            return (f"UNVERIFIED ASSUMPTION for {what}: no capture covers them; the "
                    f"characterised rule is assumed to carry over")
        return ""


# Sources of the defaults (behaviours shared by every NVIDIA profile).
COMMON_SOURCES = MappingProxyType({
    "fp32_rounding": "FASI sec. C (V100/T4/A100: round toward zero for an fp32 result); KM "
                     "frmode='rz'; MMASIM rho='RZ-FP32'",
    "fp16_rounding": "FASI sec. C (round to nearest for an fp16 result); KM frmode='rne'; "
                     "MMASIM rho='RNE-FP16'",
    "c_zero": "KM c_min_exp_limit=0 ('special handling when c = 0'); MMASIM gives C = 0 the "
              "exponent e_zero, which is the same clamp",
    "product_exponent": "MMASIM t_fdpa (e = e_a + e_b, significand s_a*s_b in [1,4)); KM "
                        "H100TC.m/B200TC.m denorm_prd=1 ('keep denormalised')",
    "subnormal_inputs": "FASI sec. A (subnormal inputs accepted); KM in_subnormals=1; MMASIM",
    "subnormal_outputs": "FASI sec. A (subnormal results returned); KM out_subnormals=1; MMASIM",
    "tf32_inputs": "MMASIM helper.truncate_fp32_to_tf32 (x >> 13 << 13); KM GEMM.m rounds tf32 "
                   "inputs with CPFloat round=4 (toward zero)",
    "overflow": "KM model_validation/ExceptionalCasesTest.m test 1 (fp32 accumulation overflow "
                "gives +Inf even with RZ); MMASIM (overflowing RZ result converts to Inf)",
    "specials": "KM GEMM.m / MMASIM: NaN in, Inf*0, or +Inf with -Inf give NaN; chained blocks "
                "carry Inf/NaN in C (assumed: decided block by block)",
    "zero_sign": "MMASIM t_fdpa adds +0.0 to every result ('-0.0 to +0.0')",
    "int_saturation": "PTX ISA 9.7.14 mma: .satfinite clamps the result (assumed: the final "
                      "exact sum, as the issue states)",
    "f64": "MMASIM arithmetic/fma.py MMA_FMA: fma(a[k], b[k], c) for k = 0..K-1, IEEE RNE",
    "nan_f32": "MMASIM ldexp_and_normalize (NaN -> 0x7FFFFFFF); PTX canonical NaN",
    "nan_f16": "MMASIM ldexp_and_normalize (NaN -> 0x7FFF)",
    "nan_f64": f"measured on the H200 (report h200, {DOCS}): Inf * 0 gives "
               "0xFFF8000000000000 (the NaN of any invalid step)",
    "nan_f64_rule": f"measured on the H200 ({DOCS}): a NaN C comes back "
                    "unchanged, an sNaN in A comes back quieted (0xfff35c.. -> 0xfffb5c..)",
    "nan_f64_order": "measured on the H200 (reports h200-numerics-vector-kernel and "
                     f"h200-f64-nan-3000, {DOCS}): with several NaN operands in one fma step the B "
                     "operand's NaN goes on, else the accumulator's, else A's; only operand order "
                     f"B, C, A fits every measured NaN result ({DOCS})",
    "nan_f64_snan_first": "measured on the H200 with nan_f64_order: a quiet NaN B beats a "
                          "signaling NaN A (no sNaN priority)",
    "fp8_f16_split": "fitted on the H200 (see sm_90): 'pairs'; 'halves' reproduced none of the "
                     "reported fp8 mismatches",
    "fp8_f16_c": "fitted on the H200 (see sm_90): C added last with RNE; KM Generic_BFMA_TC.m "
                 "comments describe the same for fp8 via HMMA",
    "block_fp8": "MMASIM sim.py L_max bytes (32 bytes / 1 byte = 32 fp8 products on Hopper wgmma)",
    "fp8_align_bits": "MMASIM sim.py WGMMA/Ada fp8: F = 13; KM AdaTC.m/H100TC.m fp8 neab = -10",
    "fp8_f32_bits": "MMASIM rho='RZ-E8M13' for fp8 with an fp32 result (Hopper wgmma, Ada mma)",
    "group_16bit": "KM/MMASIM: every product of a block aligned to the block's largest exponent "
                   "(no group stage)",
    "group_fp8": "KM/MMASIM: no group stage", "alignment": "FASI D1; KM; MMASIM: truncation",
    "c_extra_bits": "KM/MMASIM: C aligned like a product", "tiny_negative_c": "unused (truncation)",
    "emax_floor_bf16": "no bf16-result MMA on NVIDIA (value unused)",
    "bf16_rounding": "as fp16_rounding", "nan_c": "MMASIM: every NaN result is the canonical NaN",
    "nan_payloads": "MMASIM: every NaN result is the canonical NaN",
    "mfma": "no MFMA (value unused)",
    "gst_group": "no block-scaled FP4 MMA on this arch (value unused)",
    "gst_bits": "no block-scaled FP4 MMA on this arch (value unused)",
    "gst_e_zero": "no block-scaled FP4 MMA on this arch (value unused)",
    "sign_frame": "KM/MMASIM: terms truncated toward zero, signs kept", "subnormal_inputs_bf16":
    "as subnormal_inputs",
})


def _src(base=None, **kw):
    out = dict(base.sources) if base is not None else {}
    out.update({k: " ".join(v.split()) for k, v in kw.items()})
    return MappingProxyType(out)


def _derive(base, arch, title, sources=None, **changes):
    """A profile that differs from `base` in a few parameters (sources merged). What a GPU
    confirmed for `base` is not inherited."""
    changes.setdefault("confirmed", NOT_CONFIRMED if base.verified else base.confirmed)
    changes.setdefault("confirmed_params", ())
    return replace(base, arch=arch, title=title, sources=_src(base, **(sources or {})), **changes)


_NO_TF32 = "no tf32 mma on this arch (value unused)"
_NO_FP8 = "no fp8 mma on this arch (value unused)"


def _native_fp8(arch):
    """Sources of the fp16-path parameters on an arch whose fp8 mma.sync is native."""
    return {p: f"native fp8 on {arch} (value unused)" for p in ("fp8_f16_split", "fp8_f16_c")}

SM70 = Profile(
    "sm_70", "Volta V100", block_16bit=4, block_tf32=4, block_fp8=4, extra_bits=0,
    emax_floor_f32=-131, emax_floor_f16=-19, fp8_mma_sync="native",
    sources=_src(
        block_16bit="FASI (V100: 4 products + C per block); KM V100TC.m fma=4; MMASIM Volta L_max 8 bytes",
        extra_bits="FASI sec. D1 (no guard digits); KM V100TC.m neab=0; MMASIM Volta F=23",
        emax_floor_f32="MMASIM e_zero Volta -131 (f16 inputs cannot reach it)",
        emax_floor_f16="MMASIM e_zero Volta -19",
        block_tf32=_NO_TF32, tf32_inputs=_NO_TF32, block_fp8=_NO_FP8, fp8_align_bits=_NO_FP8,
        fp8_f32_bits=_NO_FP8, fp8_mma_sync=_NO_FP8, fp8_f16_split=_NO_FP8, fp8_f16_c=_NO_FP8,
        f64="no f64 mma on sm_70 (value unused)"))

SM75 = _derive(
    SM70, "sm_75", "Turing T4", block_16bit=8, extra_bits=1, emax_floor_f32=-132,
    emax_floor_f16=-20, sources=dict(
        block_16bit="MMASIM Turing L_max 16 bytes (8 f16)", extra_bits="MMASIM Turing F=24",
        emax_floor_f32="MMASIM e_zero Turing -132", emax_floor_f16="MMASIM e_zero Turing -20"))

SM80 = _derive(
    SM75, "sm_80", "Ampere A100", block_16bit=8, block_tf32=4, extra_bits=1,
    emax_floor_f32=-132, emax_floor_f16=-20, sources=dict(
        block_16bit="KM A100TC.m fma=8; MMASIM Ampere L_max 16 bytes (8 f16/bf16)",
        block_tf32="KM A100TC.m fma=4 for tf32; MMASIM 16 bytes / 4",
        tf32_inputs=COMMON_SOURCES["tf32_inputs"],
        extra_bits="KM A100TC.m neab=1; MMASIM Ampere F=24",
        emax_floor_f32="MMASIM e_zero Ampere -132", emax_floor_f16="MMASIM e_zero Ampere -20",
        f64=COMMON_SOURCES["f64"]))

SM86 = _derive(SM80, "sm_86", "Ampere GA10x (as A100: MMASIM groups sm_86 with Ampere)")
SM87 = _derive(SM80, "sm_87", "Ampere Orin (as A100, by generation; no measurement)")

SM89 = _derive(
    SM80, "sm_89", "Ada L40S / RTX 40", block_fp8=16, fp8_align_bits=13, fp8_f32_bits=13,
    fp8_mma_sync="native", sources=dict(
        block_16bit="KM AdaTC.m fma=8; MMASIM Ada L_max 16 bytes",
        block_tf32="KM AdaTC.m fma=4 for tf32", extra_bits="KM AdaTC.m neab=1; MMASIM Ada F=24",
        block_fp8="KM AdaTC.m fma=16 for fp8; MMASIM Ada L_max 16 bytes / 1",
        fp8_align_bits="KM AdaTC.m fp8 neab=-10 (23-10 = 13 bits); MMASIM Ada fp8 F=13",
        fp8_f32_bits="MMASIM Ada fp8 rho='RZ-E8M13'",
        fp8_mma_sync="PTX ISA: e4m3/e5m2 mma.sync introduced with sm_89 (native)", **_native_fp8("sm_89"),
        emax_floor_f32="MMASIM e_zero Ada -132", emax_floor_f16="MMASIM e_zero Ada -20"))

SM90 = _derive(
    SM80, "sm_90", "Hopper H100/H200", block_16bit=16, block_tf32=8, block_fp8=32, extra_bits=2,
    fp8_align_bits=13, fp8_f32_bits=13, emax_floor_f32=-133, emax_floor_f16=-21,
    fp8_mma_sync="f16", fp8_f16_split="pairs", fp8_f16_c="late", confirmed=H200_REPORT,
    confirmed_params=("block_16bit", "block_tf32", "block_fp8", "extra_bits", "fp8_align_bits",
                      "fp8_f32_bits", "emax_floor_f32", "emax_floor_f16", "fp8_mma_sync",
                      "fp8_f16_split", "fp8_f16_c", "fp32_rounding", "fp16_rounding", "c_zero",
                      "product_exponent", "subnormal_inputs", "subnormal_outputs",
                      "tf32_inputs", "overflow", "zero_sign", "int_saturation", "nan_f32",
                      "nan_f16", "nan_f64", "nan_f64_rule", "nan_f64_order",
                      "nan_f64_snan_first"),
    sources=dict(
        block_16bit="KM H100TC.m fma=16; MMASIM Hopper L_max 32 bytes (16 f16/bf16)" + H200,
        block_tf32="KM H100TC.m fma=8 for tf32; MMASIM 32 bytes / 4" + H200,
        block_fp8="MMASIM sim.py WGMMA: 32 bytes / 1 = 32 fp8 products (wgmma)" + H200,
        extra_bits="KM H100TC.m neab=2; MMASIM Hopper F=25" + H200,
        fp8_align_bits="MMASIM sim.py WGMMA fp8 F=13" + H200,
        fp8_f32_bits="MMASIM sim.py WGMMA fp8 rho='RZ-E8M13'" + H200,
        emax_floor_f32="KM H100TC.m min_exp_limit=-133; MMASIM e_zero Hopper -133" + H200,
        emax_floor_f16="MMASIM e_zero Hopper -21 (not KM B200TC.m's -15, not unclamped)" + H200,
        fp8_mma_sync="measured: SASS of e4m3 mma.sync on sm_90 is F2FP.F16.E4M3.UNPACK_B + "
                     f"HMMA.16816.F32 (report h200, {DOCS}); CUTLASS #1986; MMASIM lists no "
                     "fp8 mma.sync for Hopper; KM GEMM.m 'fp8 via HMMA (fp16) TC'",
        fp8_f16_split=f"fitted to the fp8 mma.sync mismatches of report h200 ({DOCS}): 'pairs' "
                      "with C added last reproduces them, 'halves' none; KM GEMM.m: 'inter_leaved "
                      "pattern' for fp8 via HMMA" + H200,
        fp8_f16_c="fitted to the same report; KM Generic_BFMA_TC.m: fp8 via HMMA with 'c added at "
                  "the end with RNE'" + H200))

# Blackwell's own MMAs (tcgen05.mma; sm_120's block-scaled mma.sync) take fp8/fp6/fp4 natively:
# MMA-Sim (arXiv:2511.10909, validated by its authors bitwise on B200 and RTX Blackwell) models
# them as T-FDPA / ST-FDPA with F = 25 and RZ-FP32 over 32-byte blocks, and the K=64 FP4 forms
# as GST-FDPA (groups of 16, F = 35, e_zero = -139). The fp8 parameters below serve tcgen05.mma
# and block-scaled mma.sync; sm_100's plain fp8 mma.sync stays on the fp16 path (fp8_mma_sync).
_MMASIM_GST = dict(gst_group="MMASIM sim.py TCGen05MMABlockScale / MMABlockScale K=64: G=16",
                   gst_bits="MMASIM K=64 block-scaled: F=35",
                   gst_e_zero="MMASIM K=64 block-scaled: e_zero=-139")
SM100 = _derive(
    SM90, "sm_100", "Blackwell B200 (mma.sync as Hopper)", block_fp8=32, fp8_align_bits=25,
    fp8_f32_bits=23, gst_group=16, gst_bits=35, gst_e_zero=-139, sources=dict(
        block_16bit="MMASIM Blackwell L_max 32 bytes; KM B200TC.m fma=16",
        block_tf32="MMASIM Blackwell 32 bytes / 4; KM B200TC.m fma=8 for tf32",
        extra_bits="MMASIM Blackwell F=25; KM B200TC.m neab=2",
        emax_floor_f32="MMASIM e_zero Blackwell -133; KM B200TC.m min_exp_limit=-133",
        emax_floor_f16="MMASIM e_zero Blackwell -21 (KM B200TC.m: -15)",
        fp8_mma_sync="assumed as sm_90 (MMASIM lists no fp8 mma.sync for sm_100)",
        block_fp8="MMASIM sim.py TCGen05MMA: 32 bytes / 1 (tcgen05.mma f8f6f4; ST-FDPA block of "
                  "the block-scaled kinds: 32)",
        fp8_align_bits="MMASIM sim.py TCGen05MMA / TCGen05MMABlockScale K=32: F=25 (the ~14 "
                       "bits of Hopper's fp8 accumulation, DeepSeek-V3 report arXiv:2412.19437 "
                       "3.3.2, do not carry over to tcgen05)",
        fp8_f32_bits="MMASIM TCGen05MMA fp8/fp6/fp4: rho='RZ-FP32'",
        fp8_f16_split="assumed as sm_90 (fitted there)",
        fp8_f16_c="assumed as sm_90 (fitted there)", **_MMASIM_GST))

SM120 = _derive(
    SM90, "sm_120", "Blackwell RTX 50 / RTX PRO", fp8_mma_sync="native",
    fp8_align_bits=25, gst_group=16, gst_bits=35, gst_e_zero=-139,
    fp8_f32_bits=23, sources=dict(**_MMASIM_GST,
        block_16bit="MMASIM RTX Blackwell L_max 32 bytes", extra_bits="MMASIM RTX Blackwell F=25",
        block_tf32="MMASIM RTX Blackwell 32 bytes / 4",
        block_fp8="MMASIM RTX Blackwell 32 bytes / 1", fp8_mma_sync="MMASIM: native T-FDPA",
        fp8_align_bits="MMASIM RTX Blackwell fp8: F=25 (no Ada special case)",
        fp8_f32_bits="MMASIM RTX Blackwell fp8: rho='RZ-FP32'", **_native_fp8("sm_120"),
        emax_floor_f32="MMASIM e_zero -133", emax_floor_f16="MMASIM e_zero -21"))

# gfx11 WMMA: AMD's characterisation of the gfx1100 DOT2 step (rocjitsu
# isa/arch/amdgpu/shared/gfx11_dot2.h, its SIMD twin rdna_dot_simd.h dot2) with the W7900
# captures (tests/fixtures/float_dot/gfx1100_cases.h, in bjacob/goc tests/gfx11_dot2_fixtures.h):
# a 16x16x16 WMMA is eight DOT2 steps over k (0,1), (2,3), ... (rocjitsu mma_common.h
# exec_gfx11_wmma_dot2: "GFX11 F16/BF16 WMMA executes adjacent K pairs as DOT2, starting at
# K=0"), each in C's sign frame (cfg.py SIGN_FRAME). CI replays the 103 DOT2 captures and the
# captured f32 WMMA matrix. 16-bit results and iu8/iu4 stay assumptions.
ROCJITSU11 = ("AMD rocjitsu (ROCm/rocm-systems) isa/arch/amdgpu/shared/gfx11_dot2.h, characterised on "
              "gfx1100 (Radeon Pro W7900)")
GFX11_CAPTURES = {"dot2": 103, "wmma": 256}
GFX11_PROFILE = Profile(
    "gfx11", "RDNA3 WMMA", block_16bit=2, block_tf32=2, block_fp8=2, extra_bits=1,
    fp8_align_bits=24, fp8_f32_bits=23, emax_floor_f32=None, emax_floor_f16=None,
    fp8_mma_sync="native", fp32_rounding="rne", fp16_rounding="rne", c_extra_bits=2,
    sign_frame="c", subnormal_inputs_bf16="flush", subnormal_outputs="flush", nan_c="quiet",
    nan_payloads=(("factor.f32", 0xFFC00A3D), ("invalid.f32", 0xFFC00000)),
    unproven=("u8", "u4", "->f16", "->bf16"),
    confirmed=(f"matches {GFX11_CAPTURES['dot2']} DOT2 results and a {GFX11_CAPTURES['wmma']}-element "
               "f32 WMMA result (f16/bf16 inputs) captured on AMD hardware (gfx1100, Radeon Pro "
               "W7900; published by AMD with rocjitsu, MIT, as copied into bjacob/goc tests/; "
               f"{docs('Numerics', 'AMD gfx11: the sign-frame DOT2 steps')})"),
    sources=_src(**{**COMMON_SOURCES, **dict(
        block_16bit=ROCJITSU11 + ": a WMMA is DOT2 steps over adjacent k pairs from k = 0 "
                    "(mma_common.h exec_gfx11_wmma_dot2)",
        extra_bits=ROCJITSU11 + ": the grid is at least the products' ea + eb - 24",
        c_extra_bits=ROCJITSU11 + ": ... and at least the leading bit of any term - 26 (C's "
                     "leading bit: no floor)",
        sign_frame=ROCJITSU11 + ": 'GFX11 uses C's sign frame and complements opposing "
                   "magnitudes after truncation, including signed zeros' (a term of the other "
                   "sign counts -magnitude - 1)",
        subnormal_inputs_bf16=ROCJITSU11 + ": 'BF16 inputs ... flush subnormals'",
        subnormal_inputs=ROCJITSU11 + ": f16 subnormal inputs kept",
        subnormal_outputs=ROCJITSU11 + ": 'F32 C flush subnormals'; a result below the normal "
                          "range is +0",
        fp32_rounding=ROCJITSU11 + ": rounded once to nearest even",
        fp16_rounding="UNVERIFIED: 16-bit results assumed rounded like f32 ones (no capture here)",
        emax_floor_f32=ROCJITSU11 + ": no C floor (the grid follows C's leading bit)",
        emax_floor_f16="UNVERIFIED: no floor assumed for 16-bit results",
        nan_c=ROCJITSU11 + ": a NaN C comes back quieted (gfx1100 captures)",
        nan_payloads=ROCJITSU11 + ": a NaN factor gives 0xFFC00A3D, an invalid product 0xFFC00000",
        zero_sign=ROCJITSU11 + ": an all-zero or flushed result is +0",
        int_saturation="UNVERIFIED: no gfx11 integer capture (final clamp assumed)",
        block_tf32="RDNA3 has no tf32 WMMA (value unused)", tf32_inputs="value unused",
        block_fp8="RDNA3 has no fp8 WMMA (value unused)", fp8_align_bits="value unused",
        fp8_f32_bits="value unused", fp8_mma_sync="value unused", fp8_f16_split="value unused",
        fp8_f16_c="value unused", f64="no f64 WMMA (value unused)",
        specials=ROCJITSU11 + ": NaN/Inf decided per DOT2 step")}))

# gfx12 WMMA: the arithmetic AMD characterised on a Radeon AI Pro R9700 (gfx1201) and
# published with the raw captures (MIT): ROCm/rocm-systems, rocjitsu
# isa/arch/amdgpu/shared/gfx12_dot.h (the model) and tests/fixtures/float_dot/ (the
# captures), reused in bjacob/goc tests/dot_fixtures.h, tests/wmma_fixtures.h,
# tests/integer_wmma_hardware.h, tests/rdna4_swmmac_integer_hardware.h,
# tests/packed_wmma_fixtures.h (16-bit results). CI replays every one of
# those captures (tests/numerics/test_amd_captures.py, data in tests/data/numerics/amd/).
# A 16x16x16 WMMA is four DOT4 steps over k = 0-3, 4-7, 8-11, 12-15 of the ISA's K numbering
# (rocjitsu mma_common.h exec_gfx12_wmma_dot4: "documented K bits 2 and 3 occupy the lane and
# register selectors" in wave32; wave64 holds the same k in the same order, so both wave sizes
# give the same bits for the same matrices; their captured results differ only because the
# captures loaded the same registers, which hold different k in the two wave sizes).
# what CI replays from the captures (tests/numerics/test_amd_captures.py checks these counts)
GFX12_CAPTURES = {"dot2": 121, "wmma": 48, "packed": 7168, "integer": 1024}
ROCJITSU = ("AMD rocjitsu (ROCm/rocm-systems) isa/arch/amdgpu/shared/gfx12_dot.h, characterised "
            "on gfx1201 (Radeon AI Pro R9700)")
GFX12_CAPTURED = ("matches {dot2} DOT2 and {wmma} WMMA results (f16/bf16 inputs, f32 results), "
                  "{packed} f16/bf16 WMMA results (16-bit outputs, both wave sizes) and "
                  "{integer} iu8/iu4 WMMA/SWMMAC executions (every D element, as FNV-1a digests) "
                  "captured on AMD hardware (gfx1201, Radeon AI Pro R9700; published by AMD with "
                  "rocjitsu, MIT, as copied into bjacob/goc tests/; "
                  + docs("Numerics", "AMD gfx12: AMD's characterisation, replayed against its hardware captures")
                  + ")")
GFX12_PROFILE = Profile(
    "gfx12", "RDNA4 WMMA", block_16bit=4, block_tf32=4, block_fp8=4, extra_bits=1,
    fp8_align_bits=24, fp8_f32_bits=23, emax_floor_f32=-128, emax_floor_f16=-16,
    emax_floor_bf16=-128, fp8_mma_sync="native", fp32_rounding="rne", fp16_rounding="rne",
    bf16_rounding="rne32_truncate", group_16bit=2, group_fp8=4, alignment="floor",
    c_extra_bits=2, tiny_negative_c="zero_above_emin", nan_c="quiet",
    nan_payloads=(("factor.f32", 0xFFC00A3D), ("invalid.f32", 0xFFC00000),
                  ("factor.f16", 0xFE3D), ("invalid.f16", 0xFE00), ("factor.bf16", 0xFFFD),
                  ("invalid.bf16", 0xFFC0), ("invalid.fp8.f32", 0xFFC00A3D)),
    int_saturation="halves", unproven=("e4m3", "e5m2"),
    confirmed=GFX12_CAPTURED.format(**GFX12_CAPTURES),
    sources=_src(**{**COMMON_SOURCES, **dict(
        block_16bit=ROCJITSU + ": 'each F16/BF16 WMMA step uses four' products, a WMMA rounds "
                    "after each group of four k (mma_common.h exec_gfx12_wmma_dot4)",
        group_16bit=ROCJITSU + ": 'Pairs first align and add products independently, then "
                    "align those sums with C'",
        block_fp8="assumed: the characterised V_DOT4_F32_FP8 step (four products) for each 4 k "
                  "of an fp8 WMMA; no fp8 WMMA capture",
        group_fp8=ROCJITSU + ": FP8/BF8 DOT4 'four products align together on one grid'",
        extra_bits=ROCJITSU + ": a product is aligned to the grid ea + eb - 24 (24 bits below "
                   "the sum of the factors' exponents)",
        fp8_align_bits=ROCJITSU + " (DOT4 fp8: the same grid ea + eb - 24)",
        fp8_f32_bits=ROCJITSU + ": one rounding to fp32",
        c_extra_bits=ROCJITSU + ": C is aligned to max(C floor, its leading exponent) - 26, two "
                     "bits finer than the products' - 24",
        alignment=ROCJITSU + ": 'Alignment discards low bits by arithmetic floor' (products, "
                  "pair sums and C)",
        tiny_negative_c=ROCJITSU + ": a negative C with discarded bits 'contributes a floor unit "
                        "even when its aligned magnitude is zero, provided the grid is at or "
                        "below the C alignment floor'; above it that tiny C counts 0",
        emax_floor_f32=ROCJITSU + ": C aligns no lower than -126, i.e. the grid is at least "
                       "-126 - 26 (= -128 - 24 in the products' terms)",
        emax_floor_bf16=ROCJITSU + ": the fp32 floor (-126) for packed BF16",
        emax_floor_f16=ROCJITSU + ": 'a C-alignment exponent floor of -14' for packed F16",
        fp32_rounding=ROCJITSU + ": 'F32 outputs round once to FP32 using RNE'",
        fp16_rounding=ROCJITSU + ": 'Packed F16 rounds the integer sum directly to F16 using "
                      "RNE'; 'Packed WMMA applies this narrowing after every step'",
        bf16_rounding=ROCJITSU + ": 'Packed BF16 instead truncates the rounded FP32 result'",
        subnormal_inputs=ROCJITSU + ": 'Subnormal inputs and outputs are preserved'",
        subnormal_outputs=ROCJITSU + ": 'Subnormal inputs and outputs are preserved'",
        zero_sign=ROCJITSU + ": 'Zero, including underflow to zero, is positive'",
        nan_c=ROCJITSU + ": an accumulator NaN is returned with the quiet bit set (payload and "
              "sign kept), after factor NaNs and invalid products",
        nan_payloads=ROCJITSU + ": a NaN factor gives 0xFFC00A3D, an invalid product "
                     "0xFFC00000 (fp8 DOT4: the factor-NaN payload); packed results (rocjitsu "
                     "dot_packed16.h): f16 0xFE3D / 0xFE00, bf16 0xFFFD / 0xFFC0",
        int_saturation="bjacob/goc tests/integer_wmma_hardware.h, "
                       "tests/rdna4_swmmac_integer_hardware.h (gfx1201 captures, 2026-10-09): "
                       "CLAMP saturates after the products of lanes 0-15 (the first half of K) "
                       "and again after those of lanes 16-31 ('two hardware saturation stages')",
        block_tf32="RDNA4 has no tf32 WMMA (value unused)",
        tf32_inputs="RDNA4 has no tf32 WMMA (value unused)",
        fp8_mma_sync="fp8 WMMA is native on gfx12", fp8_f16_split="value unused",
        fp8_f16_c="value unused", f64="no f64 WMMA (value unused)",
        specials=ROCJITSU + ": NaN/Inf decided per DOT4 step",
        overflow=ROCJITSU + ": RNE overflow gives Inf (FP16_OVFL clear)",
        c_zero=ROCJITSU + ": a zero C leaves the grid at its floor")}))

# CDNA MFMA (gfx908 .. gfx950): the float forms as MMA-Sim models them (numerics/cdna.py: the
# models and their sources), integer forms exact (wrapped modulo 2**32), f64 the fma chain
# MMA-Sim models with MMA_FMA. Published models, not measured here; gfx950 has none (integer
# and f64 assumed as on gfx942, float forms refused with a one-line error).
MMASIM_CDNA = ("MMA-Sim's published model (arXiv:2511.10909, validated by its authors against "
               "AMD hardware; pip mmasim 2.1.1), not measured here")
_CDNA_UNUSED = "unused: CDNA MFMA arithmetic is the model named by 'mfma' (numerics/cdna.py)"


def _cdna_profile(arch):
    known = arch in MODELS
    return Profile(
        arch, f"CDNA MFMA ({arch})", fp32_rounding="rne", mfma=MODELS.get(arch, ()),
        confirmed=MMASIM_CDNA if known else UNVERIFIED, verified=known,
        sources=_src(**{**{f.name: _CDNA_UNUSED for f in fields(Profile)},
                        "mfma": SOURCES[arch],
                        "nan_f32": "MMASIM fdpa.ldexp_and_normalize: NaN -> 0x7FFFFFFF",
                        "f64": ("MMASIM amd/sim.py: f64 MFMA = MMA_FMA (an fma chain over k, "
                                "IEEE RNE)") + ("" if known else "; UNVERIFIED: assumed for gfx950"),
                        "int_saturation": "integer MFMA results wrap modulo 2**32 (no clamp modelled)",
                        **{n: "UNVERIFIED: assumed as measured on the H200 (" + COMMON_SOURCES[n] + ")"
                           for n in ("nan_f64", "nan_f64_rule", "nan_f64_order",
                                     "nan_f64_snan_first")}}))


CDNA_PROFILES = tuple(_cdna_profile(arch) for arch in CDNA)

PROFILES = MappingProxyType({p.arch: p for p in (SM70, SM75, SM80, SM86, SM87, SM89, SM90,
                                                 SM100, SM120, GFX11_PROFILE, GFX12_PROFILE,
                                                 *CDNA_PROFILES)})


def profile_for(arch):
    """The Profile of an arch name (NVIDIA sm_XX, or any gfx11/gfx12 target)."""
    if isinstance(arch, Profile):
        return arch
    if arch in ("gfx11", "gfx12"):
        return PROFILES[arch]
    a = normalize(arch)
    if a is None:
        raise LayoutsimError("give an arch, e.g. arch='sm_90'")
    if a in GFX11:
        return PROFILES["gfx11"]
    if a in GFX12:
        return PROFILES["gfx12"]
    if a in CDNA:
        return PROFILES[a]
    if a in PROFILES:
        return PROFILES[a]
    raise LayoutsimError(f"no numeric profile for {a}; profiles exist for "
                         f"{', '.join(x for x in NVIDIA if x in PROFILES)}, gfx11, gfx12, "
                         f"{', '.join(CDNA)}")


assert all(a in PROFILES for a in NVIDIA) and AMD
