"""Candidate behaviours: the profile with one parameter changed, for every parameter the
instruction's result depends on. The case generator keeps the cases that separate them."""
import itertools

from ...formats import canonical_nan, quiet_nan
from ..plan import make_plan


def candidates(plan):
    """[(label, Profile)]: the plan's profile with one behaviour changed, for every parameter
    the instruction's result depends on (values: the other published or plausible ones)."""
    p = plan.profile
    alt = {
        "block_16bit": [2, 4, 8, 16, 32], "block_tf32": [2, 4, 8, 16], "block_fp8": [8, 16, 32],
        "extra_bits": [p.extra_bits - 1, p.extra_bits + 1, p.extra_bits + 3],
        "fp8_align_bits": [p.fp8_align_bits - 1, p.fp8_align_bits + 1, 25],
        "fp8_f32_bits": [p.fp8_f32_bits - 1, p.fp8_f32_bits + 1, 23],
        "fp32_rounding": ["rz", "rne", "rd", "ru"], "fp16_rounding": ["rne", "rz", "rd", "ru"],
        "emax_floor_f32": [None, -126, (p.emax_floor_f32 or -133) - 1, (p.emax_floor_f32 or -133) + 1],
        "emax_floor_f16": [None, -14, -15, (p.emax_floor_f16 or -21) - 1, (p.emax_floor_f16 or -21) + 1],
        "c_zero": ["skip", "emin"], "product_exponent": ["sum", "normalized", "true"],
        "subnormal_inputs": ["keep", "flush"], "subnormal_outputs": ["keep", "flush"],
        "tf32_inputs": ["truncate", "round"], "overflow": ["inf", "ieee"],
        "specials": ["per_block", "upfront"], "zero_sign": ["positive", "signed"],
        "fp8_mma_sync": ["f16", "native"], "fp8_f16_split": ["halves", "pairs"],
        "fp8_f16_c": ["first", "late"], "int_saturation": ["final", "each_product"],
        "f64": ["fma_chain", "fma_chain_reversed", "mul_add"],
        "nan_f32": [canonical_nan("f32"), quiet_nan("f32")],
        "nan_f16": [canonical_nan("f16"), quiet_nan("f16")],
        "nan_f64": [quiet_nan("f64", sign=1), quiet_nan("f64")],
        "nan_f64_rule": ["propagate", "canonical"],
        "nan_f64_order": ["".join(o) for o in itertools.permutations("ABC")],
        "nan_f64_snan_first": [False, True],
    }
    inst = plan.inst
    out, seen = [], set()
    for param in plan.uses:
        base = getattr(p, param)
        for v in alt.get(param, []):
            if v == base:
                continue
            var = p.with_(**{param: v})
            vp = make_plan(inst, var)
            key = (vp.block, vp.align_bits, vp.floor, vp.rounding, vp.keep_bits, vp.k_order,
                   vp.late_c, vp.arith_a, param if param not in ("block_16bit", "block_tf32",
                                                                  "block_fp8", "extra_bits",
                                                                  "fp8_align_bits") else "", v)
            if vp.kind == "float" and key in seen:
                continue
            seen.add(key)
            if vp.kind == "float" and vp.block == plan.block and param.startswith("block"):
                continue
            out.append((f"{param}={_show(v)}", var))
    return out


def _show(v):
    return hex(v) if isinstance(v, int) and v > 0xFF else str(v)
