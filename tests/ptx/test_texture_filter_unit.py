"""Linear filtering's arithmetic against the GPU: the designed probe of gpu_check/textures/filter_probe.py
(texel pairs and blocks sampled at exact weights; measured on an H100, 2026-12-07; a subset of the
results kept in tests/data/textures/filter_probe.npz, the inputs regenerated from their seeds here).
Every kept result of the 1D and 2D f32, 1D f16, u8 and s16 normalized probes equals the executor's
(layoutsim.ptx.texture.filter_unit and corner_weights); of the 3D probe's 32768, all but the
THREE_D_DIFFERING recorded here (one ulp each; replay.KNOWN's 3d_f32_linear word is the same
residue). Probes not measured yet (1d_s8n, norm_bits, a1d_border, 3d_pairs) are skipped until their results
are committed (`python -m gpu_check.textures.filter_probe --commit DIR`)."""
import numpy as np
import pytest

from gpu_check.textures import cases as C, filter_probe as F, replay

DATA = F.COMMITTED / "filter_probe.npz"
THREE_D_DIFFERING = 79       # of the 32768 3D samples: the weights and passes hold, these are 1 ulp off

pytestmark = pytest.mark.skipif(not DATA.is_file(), reason="no filter probe measurement committed")


@pytest.fixture(scope="module")
def kept():
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", list(F.PROBES))
def test_the_filter_unit_gives_the_gpus_bits(name, kept, monkeypatch):
    if f"{name}/index" not in kept:
        pytest.skip(f"probe {name} not measured yet")
    geom, make = F.PROBES[name][0], F.PROBES[name][3]
    texels, rows = make()
    idx = kept[f"{name}/index"]
    monkeypatch.setitem(C.SIZES, geom, texels.shape)
    out, _ = replay.run_case(F.probe_case(name, len(idx)), texels, rows[idx])
    differ = int((out[:len(idx), 0] != kept[f"{name}/out"]).sum())
    assert differ == (THREE_D_DIFFERING if name == "3d" else 0), name
    assert len(idx) >= 4096


def test_the_3d_weights_are_the_z_x_y_splits():
    """One 3D sample of the probe, by hand: weights (69, 224, 9) / 256 on a block whose texel
    (x0, y1, z0) is 2^12 and more times its others' (row 48 of the 3d probe), so the GPU's
    result over that texel is its weight: 157 / 256 (the split of x then y before z, 158)."""
    from layoutsim.ptx.texture import corner_weights
    a = [np.array([69]), np.array([224]), np.array([9])]          # x, y, z weights in 1/256
    w = [int(v[0]) for v in corner_weights(a)]
    part0 = 256 - 9                                              # z split: exact
    x1 = (part0 * 69 + 128) >> 8                                 # 66.6 -> 67
    col0 = part0 - x1                                            # 180
    w000 = (col0 * (256 - 224) + 128) >> 8                       # 22.5 -> 23: the diagonal takes the tie
    assert w[0] == w000 == 23 and w[2] == col0 - w000 == 157
    assert sum(w) == 256
