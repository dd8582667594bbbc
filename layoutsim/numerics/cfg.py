"""The parameter vector `cfg` the block-FMA kernel takes (int64; api.float_config fills it).

Plain Python (no numba), so building a plan never imports the kernel."""

# cfg indices
BLOCK, ALIGN, FLOOR, CZERO_EMIN, PROD_NORM, ROUND, KEEP, D_EB, D_MB, OVF_INF, NAN_BITS, \
    IN_FTZ, OUT_FTZ, UPFRONT, ZERO_SIGNED, LATE_C, A_EB, A_MB, A_FN, B_EB, B_MB, B_FN, \
    C_EB, C_MB, C_FN = range(25)
CFG_LEN = 25
NO_FLOOR = -(1 << 40)
RZ, RNE, RD, RU = 0, 1, 2, 3
