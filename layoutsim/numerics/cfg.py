"""The parameter vector `cfg` the block-FMA kernel takes (int64; api.float_config fills it).

Plain Python (no numba), so building a plan never imports the kernel."""

# cfg indices
BLOCK, ALIGN, FLOOR, CZERO_EMIN, PROD_NORM, ROUND, KEEP, D_EB, D_MB, OVF_INF, NAN_BITS, \
    IN_FTZ, OUT_FTZ, UPFRONT, ZERO_SIGNED, LATE_C, A_EB, A_MB, A_FN, B_EB, B_MB, B_FN, \
    C_EB, C_MB, C_FN = range(25)
# The step structure AMD characterised for gfx12 (profiles.py, GFX12): products summed in
# groups first (GROUP products, 0 = no group stage), every alignment by floor (toward -inf)
# instead of toward zero (ALIGN_FLOOR), C aligned with C_EXTRA more bits than the products,
# a negative C that loses every bit worth nothing once the grid is above C's emin
# (TINY_C_ZERO), and the NaN of a NaN factor, of an invalid product, and a NaN C returned
# quieted (NAN_C_QUIET). Zero/-1 select the NVIDIA behaviour (NAN_* = -1: NAN_BITS).
GROUP, ALIGN_FLOOR, C_EXTRA, TINY_C_ZERO, NAN_FACTOR, NAN_INVALID, NAN_C_QUIET = range(25, 32)
# gfx11 (profiles.py, GFX11): every term is aligned in C's sign frame, a term of the other sign
# (zero products too) counted as its ones' complement, -magnitude - 1 (SIGN_FRAME)
SIGN_FRAME = 32
CFG_LEN = 33
NO_FLOOR = -(1 << 40)
RZ, RNE, RD, RU = 0, 1, 2, 3
RNE32_TRUNC = 4     # round to nearest even as an fp32, then keep its top 16 bits (a bf16)
ZERO_NEG = -(1 << 30)   # SIGN_FRAME: the exponent slot of a -0 factor (a zero's exponent is unused)
