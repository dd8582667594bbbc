"""CDNA MFMA float arithmetic as MMA-Sim models it: which model each arch and input type uses
(plain data, no numba; the arithmetic is cdna_kernel.py).

Source (MMASIM): Xie, Wang, Yang & Yang, "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores
and Matrix Cores", arXiv:2511.10909 (2025), whose authors report bitwise agreement with the
hardware in large randomised tests; the models as pip mmasim 2.1.1 implements them (MIT;
mmasim/amd/sim.py picks a model per arch and input type, mmasim/arithmetic/fma.py,
ftz_mul_add.py and fdpa.py define them; github microsoft/MMA-Sim holds an earlier form). The
facts are MMA-Sim's, the code is layoutsim's; nothing here was measured on AMD hardware.
MMA-Sim covers CDNA1-3 (gfx908, gfx90a, gfx942); gfx950 (CDNA4) has no published model.

The models (C is the running f32 accumulator; a step covers L consecutive k):
  fma          c = fma(a[k], b[k], c) for k = 0..K-1 in IEEE binary32 (MMA_FMA).
  exact        c = the exact sum of the step's L products and c, rounded to f32 (nearest even)
               (MMA_E_FDPA).
  ftz_mul_add  products in f32 of inputs whose subnormals are flushed to +0, a subnormal
               product flushed keeping its sign; C's subnormal flushed to +0; for each L = 2
               or 4 products, c += p0 + p1 (L = 4: c += (p0 + p1) + (p2 + p3)), every f32 sum
               with a subnormal result flushed keeping its sign (MMA_FTZ_MUL_ADD).
  two_stage    each product s * 2**e (e = ea + eb of the factors' normalised exponents, s in
               [0, 4)) truncated toward zero to F bits below the step's largest e, summed; then
               e_max = max(that e, C's exponent; a zero C sits at -126), the sum floored to
               F2 + 1 and C to F fraction bits below e_max, added, normalised (no lower than
               -126), floored to F2 fraction bits and rounded to f32 (nearest even); a finite
               product at or above 2**128 is an Inf (MMA_TR_FDPA, F = 24, F2 = 31).
  even_odd     fp8: the even-k and the odd-k products each summed as two_stage's first stage,
               both floored to F bits below the larger of their exponents and added; then as
               two_stage, except that a C whose exponent is below e_max - F - 1 counts 0
               (MMA_GTR_FDPA, F = 24, F2 = 31).
Special values (every model): NaN in, Inf * 0 or +Inf with -Inf give NaN, any other Inf that Inf
(IEEE; MMA-Sim writes every NaN result as 0x7FFFFFFF); a zero result is -0 only when every
product and C are -0 (the IEEE sum), or when a negative result rounds to zero.
"""
from ..errors import LayoutsimError
from ..formats import canonical_nan

F_BITS, F2_BITS = 24, 31            # MMASIM amd/sim.py: MMA_TR_FDPA / MMA_GTR_FDPA(F=24, F2=31)
MODEL_CODES = {"fma": 0, "exact": 1, "ftz_mul_add": 2, "two_stage": 3, "even_odd": 4}
NAN_BITS = canonical_nan("f32")       # MMASIM fdpa.ldexp_and_normalize

# arch -> ((input kind, model, products per step), ...): mmasim/amd/sim.py MFMA.__init__.
# Input kinds: f32, xf32 (f32 inputs cut to tf32: the low 13 bits dropped), f16, bf16 (the
# gfx90a "_1k" forms and every later one), bf16_pairs (gfx908's original bf16 forms), fp8
# (fp8/bf8 in any mix).
MODELS = {
    "gfx908": (("f32", "fma", 1), ("f16", "exact", 4), ("bf16_pairs", "exact", 2)),
    "gfx90a": (("f32", "fma", 1), ("f16", "ftz_mul_add", 4), ("bf16", "ftz_mul_add", 4),
               ("bf16_pairs", "ftz_mul_add", 2)),
    "gfx942": (("f32", "fma", 1), ("xf32", "two_stage", 4), ("f16", "two_stage", 8),
               ("bf16", "two_stage", 8), ("fp8", "even_odd", 16)),
}
SOURCES = {
    "gfx908": "MMASIM amd/sim.py CDNA1: f32 MMA_FMA, f16 MMA_E_FDPA(L_max=4), bf16 MMA_E_FDPA(2)",
    "gfx90a": "MMASIM amd/sim.py CDNA2: f32 MMA_FMA, f16 and bf16_1k MMA_FTZ_MUL_ADD(P=4), bf16 "
              "MMA_FTZ_MUL_ADD(2)",
    "gfx942": "MMASIM amd/sim.py CDNA3: f32 MMA_FMA, xf32 MMA_TR_FDPA(F=24, F2=31, RNE-FP32, "
              "L_max=4), f16/bf16 MMA_TR_FDPA(24, 31, RNE-FP32, 8), fp8/bf8 MMA_GTR_FDPA(24, 31, "
              "RNE-FP32, 16)",
    "gfx950": "no published model: MMASIM covers CDNA1-3",
}
DESCRIBE = {
    "fma": "an fma chain over k = 0..{last} in IEEE binary32",
    "exact": "steps of {L} products: the exact sum of the products and C, rounded to f32 (RNE)",
    "ftz_mul_add": "steps of {L} products: f32 products and sums, subnormals flushed (inputs "
                   "and C to +0, products and sums keeping their sign)",
    "two_stage": "steps of {L} products: products truncated to {F} bits below their largest "
                 "exponent and summed, then with C on one grid (sum floored to {F2p1}, C to {F} "
                 "bits), normalised, floored to {F2} fraction bits, rounded to f32 (RNE)",
    "even_odd": "steps of {L} products: even-k and odd-k products each truncated to {F} bits "
                "and summed, then as CDNA3's two-stage sum (C below e_max - {F1} counts 0)",
}


def input_kind(inst):
    """The MMA-Sim input kind of a CDNA MFMA (MODELS' keys)."""
    from ..isa import amd_mfma
    a = inst.formats["a"]
    if a == "f32":
        return "xf32" if inst.name.endswith("_xf32") else "f32"
    if set(amd_mfma.parse(inst.name)[1:3]) & set(amd_mfma.FP8):
        return "fp8"            # FNUZ on gfx942, OCP on gfx950 (formats.AMD_FP8)
    if a == "bf16" and amd_mfma.bf16_pairs(inst.name):
        return "bf16_pairs"
    return a


def model_of(inst, profile):
    """(model, products per step) MMA-Sim gives this MFMA on the profile's arch, or a one-line
    error saying there is none."""
    kind = input_kind(inst)
    for k, model, L in profile.mfma:
        if k == kind:
            return model, L
    have = ", ".join(k for k, _, _ in profile.mfma) or "none"
    raise LayoutsimError(f"{inst.name}: no arithmetic model for {kind} MFMA on {profile.arch} "
                         f"({profile.source('mfma')}; {profile.arch} float forms modelled: {have})")


def describe(model, L, K):
    return DESCRIBE[model].format(L=L, last=K - 1, F=F_BITS, F2=F2_BITS, F2p1=F2_BITS + 1,
                                  F1=F_BITS + 1)
