"""The f64 NaN priority of one fma step in DMMA, as the H200 showed it.

docs/validation/h200-numerics-vector-kernel.json (gpu-check run, NVIDIA H200, driver
580.159.04, CUDA 13.0, 2026-11-30 07:49 UTC, mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64,
seed 20261130) found 3 results the model of the time got wrong; these are their inputs and
the measured D (A row, B column: k -> raw bits; C raw; D raw). They showed that when several
operands of a step are NaN, B's NaN goes on first, then the accumulator's, then A's, and that a
signaling NaN has no priority of its own (case 1838: a quiet B beats a signaling A). Bit for
bit. The order was then confirmed on the H200 on 13,600 more f64 cases with NaN contests (4 f64
forms x (400 + 3,000) cases: docs/validation/h200-f64-nan-400.json and -3000.json). The 400-case
run is what tests/data/numerics/sm_90/ keeps, so test_corpus_replay replays 1,600 of them
(test_the_replayed_f64_corpora_hold_nan_contests below counts them); the 3,000-case run is a
report only.
"""
import numpy as np
import pytest

import layoutsim
from layoutsim.numerics.profiles import PROFILES

NAME = "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64"
H200 = [
    # case 1008, D[9][7]
    ({0: 0xfffdd59290ee8db1, 1: 0x4e9239b4ea3ebd1c, 2: 0xeca94c8df0714080, 3: 0x24fb685fb48b7ee, 4: 0xb19bfa2225e1ae4d, 5: 0x5c108864dcbbae09, 6: 0xae543c9790186163, 7: 0xcab3d5d5c4e94157, 8: 0xa1330cfcbaf7b9f5, 9: 0x3bde1a9c018c9f8e, 10: 0x72d865dbc2e27ad9, 11: 0x585ab9fbeeb4d560, 12: 0xa90634e04b5463e9, 13: 0x47da8ef7363ce6c2, 14: 0x3136258f071acb0c, 15: 0xbacdf64be627f127},
     {0: 0x2f6c43ad11d70477, 1: 0xce579facc80c880b, 2: 0x5cc3ca58562aa47c, 3: 0xffb3f9d9e602bedf, 4: 0x52dba5fe21d937e6, 5: 0x8063a2a07c41b5a8, 6: 0x9c7dfdd42ff32f10, 7: 0x14d6a1f053d59331, 8: 0xcdd2d2838987d502, 9: 0x6d00c04feeb0e09a, 10: 0xfb06059f6597814c, 11: 0x1300c382a1da4b7b, 12: 0xfff5445050d3cbd0, 13: 0xdaa6279d50689971, 14: 0x145d3ae2188af1fe, 15: 0xc1bb7f750536c2c4},
     0x38861ef8e3d1b4f8, 0xfffd445050d3cbd0),
    # case 1078, D[14][2]
    ({0: 0x7ff8a886e034a189, 1: 0x111637f340b86b9c, 2: 0x4b02e8a10b2a5641, 3: 0xee9b524cbc7e37cf, 4: 0x880dee9e30032967, 5: 0x875dd572ceff244e, 6: 0x88e867dfba22f636, 7: 0xe19700cccb709001, 8: 0x542fcef3213e3d6e, 9: 0xfe9f513b451b0d0, 10: 0xe56e34207996380a, 11: 0xc2c43ccd9338e371, 12: 0xc05ebe8ca57f6070, 13: 0x36ee204f5688ef6c, 14: 0x612f3b2300dff63f, 15: 0xc37f54df48b9f7bd},
     {0: 0xcbd3276a86f0382a, 1: 0xfff3d4a52c9fc5bb, 2: 0x55c81499744a4715, 3: 0x33153049ddbb7fbb, 4: 0x982c3c01367befb4, 5: 0xba24f4ef8ef76c5b, 6: 0xfec5425cd5eb29dd, 7: 0xacc14da60d258989, 8: 0xd753454a7d17cd5c, 9: 0xc5352b93125e75e4, 10: 0xa6aeff75dee93da, 11: 0x5cf1c215d58d1b91, 12: 0x96c2f18705b80844, 13: 0x41a57dbb6e8f4328, 14: 0x3c864db17b17e161, 15: 0xae2142710ca55428},
     0x6a020e381a87653d, 0xfffbd4a52c9fc5bb),
    # case 1838, D[15][7]
    ({0: 0x97227f14f28c5264, 1: 0x23d64400894ba170, 2: 0xbd5409bc87ff20b4, 3: 0x753a05a8b2a46960, 4: 0x8339a35badf98a9f, 5: 0x5349b2535e8e026f, 6: 0x8a9198e8465ada11, 7: 0x5fcca9b083d2bb28, 8: 0x7ff0a3e711e94c10, 9: 0x1428275b54ea353a, 10: 0x901569cc61b332f2, 11: 0x3b105b1230e0c874, 12: 0x6dab4b398b44a772, 13: 0x81e93125f709245b, 14: 0xe4a481f0b8a07093, 15: 0x910df0442e8e7e05},
     {0: 0x8ee4d8e88e0fae7f, 1: 0x2f5c7fc9b90fefec, 2: 0x864092d2c0d5e613, 3: 0xe98e0744e34b4423, 4: 0x649eff3d855ea032, 5: 0xeed1cb913e9f8fd1, 6: 0xa2eb4efadef34117, 7: 0xa5521913455d458c, 8: 0xfffb9763afab6265, 9: 0xd2a7c8c55123ae0f, 10: 0x55101d5a63bcdab, 11: 0x299b46895ec72cd3, 12: 0x7a266ac8748ae85c, 13: 0x5072301f5d30aec4, 14: 0xcb7029ac90e817fc, 15: 0x12e7009609963392},
     0x59ba3cd0ee39109e, 0xfffb9763afab6265),
]


def _d(arow, bcol, c, profile=None):
    A = np.zeros((16, 16), np.uint64)
    B = np.zeros((16, 8), np.uint64)
    C = np.zeros((16, 8), np.uint64)
    for k, v in arow.items():
        A[0, k] = v
    for k, v in bcol.items():
        B[k, 0] = v
    C[0, 0] = c
    kw = {"profile": profile} if profile is not None else {"arch": "sm_90"}
    return int(layoutsim.mma(NAME, A, B, C, raw=True, **kw)[0, 0])


@pytest.mark.parametrize("arow,bcol,c,measured", H200)
def test_h200_nan_priority_case(arow, bcol, c, measured):
    assert _d(arow, bcol, c) == measured


@pytest.mark.parametrize("order,snan_first", [("CAB", False), ("CAB", True), ("ABC", False),
                                              ("BCA", True), ("CBA", False)])
def test_the_other_priorities_miss_some(order, snan_first):
    alt = PROFILES["sm_90"].with_(nan_f64_order=order, nan_f64_snan_first=snan_first)
    assert any(_d(a, b, c, alt) != m for a, b, c, m in H200)


def test_a_bad_order_is_one_clear_error():
    alt = PROFILES["sm_90"].with_(nan_f64_order="ABB")
    with pytest.raises(layoutsim.LayoutsimError, match="give the operands A, B, C once each"):
        _d({}, {}, 0, alt)


def test_the_replayed_f64_corpora_hold_nan_contests():
    # What the docstring claims is replayed: the four f64 corpora of the 08:00 run, 400 cases each,
    # with NaN contests among them (a step where two operands are NaN with different payloads).
    from pathlib import Path
    from layoutsim.numerics import corpus
    root = Path(__file__).resolve().parents[1] / "data" / "numerics" / "sm_90"
    files = sorted(root.glob("*.f64.f64.f64.f64.npz"))
    assert len(files) == 4
    contests = 0
    for p in files:
        c = corpus.load(p)
        assert (c.n, c.meta["generator"]["seed"], c.meta["gpu"]) == (400, 2, "NVIDIA H200")
        an = np.isnan(c.a.view(np.float64)).any(axis=2)      # (n, M): a NaN in row i of A
        bn = np.isnan(c.b.view(np.float64)).any(axis=1)      # (n, N): a NaN in column j of B
        contests += int((an[:, :, None] & bn[:, None, :]).sum())
    assert sum(corpus.load(p).n for p in files) == 1600 and contests > 0
