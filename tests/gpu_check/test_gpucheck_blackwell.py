"""gpu-check's Blackwell families: tcgen05.ld/st kernels (sm_100a) and sm_120a's mma.sync
.kind:: kernels compile with ptxas (CI), and the host side judges a device correctly.

The stand-in device for tcgen05.ld/st is CUTLASS 4.2's TMEM atoms (tests/data/cute_sm100, see
tests/isa/test_tcgen05.py): the registers a real tcgen05.ld gives are taken from CuTe's map, not
from the catalog, so the comparison is between two sources."""
import re
from pathlib import Path

import numpy as np
import pytest

from gpu_check import build as B
from gpu_check import families as F
from gpu_check.families.tcgen05 import Tcgen05Spec

from gpucheck_helpers import need_nvcc

CUTE = Path(__file__).resolve().parents[1] / "data" / "cute_sm100" / "tmem_load_atoms.npz"
PTX_SHAPE = {"16x256b": "16dp256b", "16x128b": "16dp128b", "16x64b": "16dp64b", "16x32bx2": "16dp32b",
             "32x32b": "32dp32b"}


@need_nvcc
@pytest.mark.parametrize("target, kind, count", [("sm_100a", "tcgen05", 148), ("sm_120a", "mma_kind", 51),
                                                 ("sm_100a", "tcgen05_mma", 145)])
def test_blackwell_kernels_compile(target, kind, count, kernel_cache):
    specs = [s for s in F.nvidia_specs(target, wgmma_all=True) if s.kind == kind]
    assert len(specs) == count
    cubin, kept, rejected, _ = B.compile_specs(specs, target, use_cache=False)
    assert not rejected, rejected
    for s in kept:
        assert s.name.encode() in cubin, s.name


def test_no_blackwell_kernel_for_older_targets():
    assert not [s for s in F.nvidia_specs("sm_90a", wgmma_all=True) if s.kind in ("tcgen05", "mma_kind", "tcgen05_mma")]


def _cute_codes(spec):
    m = re.fullmatch(r"tcgen05\.(ld|st)\.sync\.aligned\.(\w+)\.x(\d+)(\.(un)?pack::16b)?\.b32", spec.entry)
    name = f"SM100_TMEM_LOAD_{PTX_SHAPE[m.group(2)]}{m.group(3)}x" + ("_16b" if m.group(4) else "")
    with np.load(CUTE) as z:
        return z[name]                          # [thread, word, 2]: lane * 65536 + half-column


def _cute_device(spec, inp):
    """What the kernel writes, by CuTe's map (load: registers from the image; store: the image
    the registers make)."""
    codes = _cute_codes(spec).astype(np.int64)
    lane, half = codes // 65536, codes % 65536
    col = half // 2
    if spec.load:
        image = np.asarray(inp, np.uint32).reshape(-1, 32, spec.columns)
        lo = image[:, lane[..., 0], col[..., 0]]
        if spec.frag.slots == 1:
            return lo.reshape(len(image), -1)
        hi = image[:, lane[..., 1], col[..., 1]]
        return ((lo & 0xFFFF) | ((hi & 0xFFFF) << 16)).reshape(len(image), -1)
    regs = np.asarray(inp, np.uint32).reshape(-1, 32, spec.regs)
    image = np.zeros((len(regs), 32, spec.columns), np.uint32)
    if spec.frag.slots == 1:
        image[:, lane[..., 0], col[..., 0]] = regs
    else:
        image[:, lane[..., 0], col[..., 0]] = regs & 0xFFFF
        image[:, lane[..., 1], col[..., 1]] = regs >> 16
    return image.reshape(len(regs), -1)


@pytest.mark.parametrize("op", ["ld", "st"])
def test_tcgen05_checks_pass_on_cute_and_fail_on_a_wrong_map(op):
    specs = [s for s in F.nvidia_specs("sm_100a", wgmma_all=True) if s.kind == "tcgen05" and s.entry.split(".")[1] == op]
    assert len(specs) == 74
    rng = np.random.default_rng(0)
    for spec in specs:
        (probe,) = spec.probes(rng, cases=2)
        res = spec.compare(probe.check, probe.inp, _cute_device(spec, probe.inp), probe.meta)
        assert res.mismatches == 0 and res.compared == 2 * 32 * spec.regs * spec.frag.slots, spec.entry
    import layoutsim
    wrong = Tcgen05Spec(layoutsim.get(f"tcgen05.{op}.16x256b.x1"))
    right = Tcgen05Spec(layoutsim.get(f"tcgen05.{op}.16x64b.x4"))      # same register count
    (probe,) = right.probes(rng, cases=1)
    out = _cute_device(right, probe.inp)
    wrong.columns, wrong.split = right.columns, right.split           # as if the catalog said 16x256b
    assert wrong.compare(probe.check, probe.inp, out, probe.meta).mismatches > 0


# ---- sm_120a's .kind:: mma.sync on the ptxsim backend (the executor runs nvcc's PTX of the kernels) ------
KIND = ("mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e5m2.f32.ue8m0,"
        "mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e3m2.f32.ue8m0,"
        "mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0,"
        "mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3,"
        "mma.m16n8k32.kind::f8f6f4.f32.e4m3.e2m3.f32")


@need_nvcc
def test_kind_kernels_pass_every_probe_on_the_executor_with_non_unit_scales(kernel_cache):
    # The kernels' text (scale words loaded after C, {byte-id, thread-id} = {0, 0}) executed by layoutsim.ptx:
    # the exact probes with unit scales and the `scales` probe (random ue8m0 2^-7..2^7 / ue4m3 0.25..30 in the
    # catalog's SFA/SFB bytes, the other bytes random; expected: layoutsim.mma) all pass. The model checking
    # itself (ptxsim), not a GPU: on an RTX 50 the same kernels and comparisons run unchanged.
    from gpu_check.backends.ptxsim import PtxsimBackend
    from gpu_check.run import Session
    s = Session(PtxsimBackend(arch="sm_120", cache=kernel_cache / "ptx"), log=lambda x: None, groups=("layouts",),
                only=KIND)
    s.run()
    lay = [r for r in s.results if r.group == "layouts"]
    assert lay and all(r.status == "pass" for r in lay), [r.diff_text() for r in lay if r.status != "pass"][:2]
    assert sum(r.check == "scales" for r in lay) == 4 and len({r.entry for r in lay}) == 5


@need_nvcc
def test_the_scales_probe_fails_a_device_that_reads_the_other_lane_of_the_pair(kernel_cache):
    from gpu_check.backends.ptxsim import PtxsimBackend
    (spec,) = [s for s in F.nvidia_specs("sm_120a", wgmma_all=True)
               if s.entry == layoutsim_name(KIND.split(",")[0])]
    (probe,) = [p for p in spec.probes(np.random.default_rng(1)) if p.check == "scales"]
    be = PtxsimBackend(arch="sm_120", cache=kernel_cache / "ptx")
    mod = be.load(F.cuda_module_source([spec]))
    n = len(probe.inp)
    good = be.launch(mod, spec, probe.inp, n)
    assert spec.compare("scales", probe.inp, good, probe.meta).mismatches == 0
    swapped = probe.inp.reshape(n, 32, spec.lane_in).copy()
    swapped[:, :, spec.lane_in - 2] = swapped[:, np.arange(32) ^ 1, spec.lane_in - 2]   # SFA of lane l ^ 1
    bad = be.launch(mod, spec, swapped.reshape(n, -1), n)
    assert spec.compare("scales", probe.inp, bad, probe.meta).mismatches > 0


def layoutsim_name(name):
    import layoutsim
    return layoutsim.get(name).name


# ---- tcgen05.mma (sm_100a): shared-memory descriptors, D in TMEM, one thread issues, mbarrier commit --------
def test_tcgen05_mma_kernels_by_default_are_one_per_kind():
    from gpu_check.families.tcgen05_mma import DEFAULT
    specs = [s for s in F.nvidia_specs("sm_100a") if s.kind == "tcgen05_mma"]
    assert sorted(s.entry for s in specs) == sorted(DEFAULT)          # f16, tf32, f8f6f4, i8, mxf8f6f4 1X; N = 64
    assert {s.types for s in specs} == {"f32.f16.f16", "f32.tf32.tf32", "f32.e4m3.e4m3", "s32.s8.s8",
                                         "f32.e4m3.e4m3.ue8m0"}


@need_nvcc
def test_tcgen05_mma_kernels_pass_on_the_executor_and_a_wrong_device_fails(kernel_cache):
    # ptxsim: layoutsim.ptx runs nvcc's PTX of the kernels (the model checking itself, not a GPU); on a B200
    # the same kernels and comparisons (expected D: layoutsim.mma of the case's A, B, C and scales) run unchanged
    from gpu_check.backends.ptxsim import PtxsimBackend
    from gpu_check.families.tcgen05_mma import DEFAULT
    from gpu_check.run import Session
    s = Session(PtxsimBackend(arch="sm_100", cache=kernel_cache / "ptx"), log=lambda x: None, groups=("layouts",),
                only=",".join(DEFAULT))
    s.run()
    lay = [r for r in s.results if r.group == "layouts"]
    assert len(lay) == 10 and all(r.status == "pass" for r in lay), [r.diff_text() for r in lay if r.status != "pass"]
    assert {r.check for r in lay} == {"c_ids", "random"}
    import layoutsim
    (spec,) = [x for x in F.nvidia_specs("sm_100a") if x.entry == DEFAULT[-1]]
    (probe,) = [p for p in spec.probes(np.random.default_rng(2)) if p.check == "random"]
    want = spec.expected(probe.inp).reshape(len(probe.inp), -1)
    assert spec.compare("random", probe.inp, want, probe.meta).mismatches == 0
    rows = want.reshape(-1, 128, spec.n)[:, np.arange(128) ^ 1]      # D's rows in the other lane of a pair
    assert spec.compare("random", probe.inp, rows.reshape(len(rows), -1), probe.meta).mismatches > 0
    A, B, C, sa, sb = spec.unpack_inputs(probe.inp)                  # a device that ignores the scales
    unit = layoutsim.mma(spec.instr, A, B, C, arch="sm_100a", raw=True, types=spec.types, scale_a=np.full_like(sa, 127),
                         scale_b=np.full_like(sb, 127))
    assert spec.compare("random", probe.inp, unit.reshape(len(unit), -1), probe.meta).mismatches > 0
