"""Triton's tl.dot_scaled compiled for sm_120a runs in the executor: layoutsim.triton.launch(...,
arch="sm_120a"). Triton 3.6.0 lowers a 64x64 dot_scaled of e2m1 x e2m1 to
mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X (two ue8m0 scales per row and
column in one scale register) and e4m3 / e5m2 ones to m16n8k32 .kind::mxf8f6f4 .scale_vec::1X, with
{byte-id, thread-id} = {0, 0} and the scale registers its own compiler builds (getSM120DotScaledScaleLayout:
lane bit 0 -> row + 8 of A's scales, the quad's lanes sharing B's): compiled here at test time, no PTX
committed. This is the cross-check of the catalog's SFA/SFB maps (isa/ptx_mma_kind.sf_fragment) against an
implementation that runs on RTX 50 GPUs: a wrong row, lane or byte would put another row's scale (2^-7 ..
2^7 here) on a row. No sm_120 GPU exists here (from documents, not measured); the expected values are
  - bit for bit layoutsim.mma's chain of mma.sync MMAs per 16x8 tile, one per K-step in order from a
    zero accumulator;
  - the float64 product within a loose bound (2**-16 relative to |A| @ |B| with the scales), a sanity check.
Triton 3.6's mixed e4m3 x e2m1 lowering is not run: its fp4 unpacking declares registers inside a
`{ }` block of inline PTX, which the executor's parser refuses (a0#1 is not a register)."""
import re

import numpy as np
import pytest

from triton_needs import needs_triton

pytestmark = needs_triton
pytest.importorskip("triton")
from test_triton_sm100_scaled import _launch, _within_bound   # noqa: E402  (the same kernel)

CASES = [   # A's and B's formats, the mma.sync form Triton picks, K per MMA
    ("e2m1", "e2m1", "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0", 64),
    ("e4m3", "e4m3", "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0", 32),
    ("e5m2", "e4m3", "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e5m2.e4m3.f32.ue8m0", 32),
]
BM = BN = 64
K = 256


def _chain(name, A, B, sa, sb, k_step):
    """layoutsim.mma's D (raw f32 [BM, BN]) of the mma.sync chain: per 16x8 tile, one MMA per K-step."""
    import layoutsim
    tm, tn = BM // 16, BN // 8
    acc = np.zeros((tm, tn, 16, 8), np.uint32)
    for k in range(0, K, k_step):
        s = slice(k // 32, (k + k_step) // 32)
        a = np.broadcast_to(A[:, k:k + k_step].reshape(tm, 1, 16, k_step), (tm, tn, 16, k_step))
        b = np.broadcast_to(B[k:k + k_step].reshape(k_step, tn, 8).transpose(1, 0, 2)[None], (tm, tn, k_step, 8))
        fa = np.broadcast_to(sa[:, s].reshape(tm, 1, 16, -1), (tm, tn, 16, s.stop - s.start))
        fb = np.broadcast_to(sb[:, s].T.reshape(-1, tn, 8).transpose(1, 0, 2)[None], (tm, tn, s.stop - s.start, 8))
        acc = layoutsim.mma(name, np.ascontiguousarray(a), np.ascontiguousarray(b), acc, arch="sm_120", raw=True,
                            scale_a=np.ascontiguousarray(fa), scale_b=np.ascontiguousarray(fb))
    return acc.transpose(0, 2, 1, 3).reshape(BM, BN)


@pytest.mark.parametrize("fa,fb,name,k_step", CASES, ids=[f"{c[0]}x{c[1]}" for c in CASES])
def test_triton_dot_scaled_on_sm120a_is_the_mma_sync_model_bit_for_bit(fa, fb, name, k_step):
    import layoutsim
    A, B, sa, sb, r = _launch(fa, fb, K, arch="sm_120a", BM=BM, BN=BN, seed=120)
    full = layoutsim.get(name).name
    forms = set(re.findall(r"mma\.sync\.aligned\.[\w:.]+", r.triton.ptx))
    assert forms == {full}
    assert set(re.findall(r"\{ *(\d+), *(\d+) *\}", r.triton.ptx)) == {("0", "0")}    # byte-id, thread-id 0
    got = r.buffers[4].view(np.uint32)
    assert np.array_equal(got, _chain(name, A, B, sa, sb, k_step))
    assert r.fidelity["documented"] > 0
    assert _within_bound(got, fa, fb, A, B, sa, sb)
