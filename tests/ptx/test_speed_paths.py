"""The executor's speed paths give what the plain ones give (issue 26):

  * a hotspot sample's bank counts are the ones costs.py computed for that warp access, handed on
    with the `costed` event; they equal the bank model's (layoutsim.banks) for the sampled
    addresses, every sample of every shared line of a CuTe GEMM (ldmatrix, cp.async, st.shared);
  * the lowering runner.program starts in a thread while the program links (sass.start) is the
    one computed in line, and one started for a program that then fails to link is dropped;
  * a float Plan's cfg and block path, kept per Plan (numerics.api), are float_config's and
    block.path's, and repeated MMAs on one Plan give the bits fresh Plans give;
  * the wgmma descriptor decodings kept per value (warpcore.wgmma) are smem.operand_addresses';
  * fma.rn.f32's double rounding (ops_float.fma32_rn) gives fma32's round-to-odd bits on every
    lane: random bit patterns (NaN, Inf, subnormals), cancellations, constructed halfway points
    and subnormal results;
  * a TMA box's shared bytes kept per (map, destination) (ops_async._landing) are
    smem.box_addresses', and a box's global bytes (GlobalMap.box_bytes_at) are
    GlobalMap.elements' offsets and inside mask, a kernel-built map is decoded once per
    content (tensormap._device_map); runs of the TMA kernels with none of them kept are the same runs;
  * a step's costing kept and replayed (costs.py) gives the run that costing every step afresh
    gives: counts, notes, samples, buffers.
The expected values are the models' own (layoutsim.banks, float_config, a fresh Plan)."""
import numpy as np
import pytest

import layoutsim
import layoutsim.ptx as P
from gpu_check.kernel_corpus import corpus as C
from gpu_check.realworld.build import DATA as REALWORLD
from layoutsim import banks
from layoutsim.numerics import api, block
from gpu_check.kernel_corpus import launches as KL
from layoutsim import smem
from layoutsim.ptx import costs as K, lowering as L, ops_async, ops_float, runner, sass as S
from layoutsim.ptx import tensormap as TM, types as PT
from layoutsim.smem import Descriptor, operand_addresses
from layoutsim.warpcore import wgmma as core_wgmma

TOOLS = L.find_ptxas() is not None and L.find_nvdisasm() is not None


def _realworld(name):
    e = {x["name"]: x for x in C.load_manifest(REALWORLD)}[name]
    ptx = (REALWORLD / C.run_ptx(e)).read_text()
    return P.run(ptx, e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, C.load_inputs(e, REALWORLD)),
                 shared_bytes=e["shared_bytes"])


def test_every_shared_sample_has_the_bank_models_counts():
    r = _realworld("cute_hgemm_sm80_tn")
    seen = 0
    for site, rows in enumerate(r.samples):
        for rec in rows:
            if rec["space"] != "shared":
                continue
            offs = np.array([[a if a is not None else 0 for a in rec["addresses"]]], np.int64)
            active = np.array([[a is not None for a in rec["addresses"]]])
            assert rec["wavefronts"] == int(banks.wavefronts_batch(rec["op"], offs, r.arch, active=active)[0]), rec
            assert rec["ideal"] == int(banks.ideal_batch(rec["op"], offs, r.arch, active=active)[0]), rec
            seen += 1
    assert seen > 50                     # ldmatrix, cp.async and st.shared lines, 8 samples each


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "_PROGRAMS", {})
    monkeypatch.setattr(S, "_MEMO", {})
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path))


@pytest.mark.skipif(not TOOLS, reason=f"needs ptxas and nvdisasm ({L.install_hint('ptxas', 'nvdisasm')})")
def test_a_started_lowering_is_the_one_computed_in_line(fresh, monkeypatch):
    e = {x["name"]: x for x in C.load_manifest()}["warp_reduce"]
    ptx = (C.DATA / e["ptx"]["sm_90"]).read_text() + "// not the committed text\n"
    module = runner.load(ptx)
    key = S.start(ptx, module, "sm_90")
    assert key in S._PENDING
    started = S._computed(ptx, *key)
    assert key not in S._PENDING
    monkeypatch.setattr(S, "_MEMO", {})
    monkeypatch.setattr(S, "_read_cache", lambda *a: None)
    assert S._computed(ptx, *key) == started and started[0]


def test_a_lowering_started_for_a_program_that_fails_is_dropped(fresh):
    e = {x["name"]: x for x in C.load_manifest()}["warp_reduce"]
    ptx = (C.DATA / e["ptx"]["sm_90"]).read_text() + "// other text\n"
    with pytest.raises(layoutsim.LayoutsimError):
        P.run(ptx, "no_such_kernel", (1, 1, 1), (32, 1, 1), [])
    assert S._PENDING == {}


def test_a_plans_kept_config_is_its_own_and_repeats_give_fresh_plans_bits():
    name = "mma.m16n8k16.f32.f16.f16.f32"
    inst, prof = api.resolve(name, "sm_90")
    plan = api.make_plan(inst, prof)
    rng = np.random.default_rng(5)
    for _ in range(3):
        A = rng.integers(0, 1 << 16, (4, 16, 16), dtype=np.uint64).astype(np.uint16)   # every f16, Inf/NaN too
        B = rng.integers(0, 1 << 16, (4, 16, 8), dtype=np.uint64).astype(np.uint16)
        Cm = rng.integers(0, 1 << 32, (4, 16, 8), dtype=np.uint64).astype(np.uint32)
        got = api.run(plan, A, B, Cm)
        assert np.array_equal(got, api.run(api.make_plan(inst, prof), A, B, Cm))
    _, cfg, paths, *_ = api._configured(plan)
    assert np.array_equal(cfg, api.float_config(plan))
    assert paths == {(16, 8, 16): block.path(api.float_config(plan), 16, 8, 16)}


def test_kept_descriptor_addresses_are_the_decoders():
    """warpcore.wgmma.addresses keeps each descriptor value's decoding: every value, repeated or
    new, in any order, gives smem.operand_addresses' array for it."""
    ins = layoutsim.get("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16")
    vals = np.array([Descriptor(start=s, lbo=16, sbo=1024, swizzle=sw).encode()
                     for s in (0, 1024, 8192) for sw in ("none", "128B", "64B")], np.uint64)
    for which, trans in (("A", False), ("B", False), ("B", True)):
        for desc in (vals, vals[::-1], np.concatenate([vals[:3], vals[:3]])):
            got = core_wgmma.addresses(ins, which, desc, trans)
            assert np.array_equal(got, operand_addresses(ins, which, desc, trans))


def _fma_operands(rng, kind, n):
    if kind == 0:                       # every bit pattern: NaN, Inf, subnormal, zeros
        return [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32) for _ in range(3)]
    if kind == 1:                       # products of many bits, cancelled by z
        x, y = ((1 + rng.integers(0, 1 << 23, n) * 2.0 ** -23).astype(np.float32) for _ in range(2))
        z = -(x.astype(np.float64) * y).astype(np.float32) * rng.choice([1, -1, 0.5], n).astype(np.float32)
        return [x, y, z]
    if kind == 2:                       # exact sums on and next to f32 halfway points
        x = (1 + rng.integers(0, 1 << 12, n) * 2.0 ** -12).astype(np.float32)
        y = (1 + rng.integers(0, 1 << 11, n) * 2.0 ** -11).astype(np.float32)
        return [x, y, (rng.integers(-(1 << 20), 1 << 20, n) * 2.0 ** -24).astype(np.float32)]
    return [(rng.standard_normal(n) * 2.0 ** e).astype(np.float32) for e in (-70, -60, -128)]   # subnormal results


def test_fma_rn_f32_double_rounding_is_round_to_odds():
    rng = np.random.default_rng(3)
    f32 = PT.get("f32")
    with np.errstate(all="ignore"):
        for trial in range(160):
            x, y, z = _fma_operands(rng, trial % 4, 2048)
            for lo in range(0, 2048, 64):         # batches of 64 lanes: a risky lane sends its batch to fma32
                a, b, c = x[lo:lo + 64], y[lo:lo + 64], z[lo:lo + 64]
                fast = np.asarray(ops_float.fma32_rn(a, b, c), np.float32).view(np.uint32)
                exact = np.asarray(ops_float.fma32(a, b, c, f32, "rn", False, False)).view(np.uint32)
                assert np.array_equal(fast, exact), (a, b, c)


def _same_runs(a, b):
    assert a.warp_instructions == b.warp_instructions
    assert a.instructions == b.instructions and a.samples == b.samples
    assert a.shared_wavefronts == b.shared_wavefronts and a.global_totals == b.global_totals
    assert len(a.buffers) == len(b.buffers) and all(np.array_equal(x, y) for x, y in zip(a.buffers, b.buffers))


@pytest.mark.parametrize("name", ["cute_sgemm_sm70_tn", "cute_hgemm_sm80_tn", "cute_tiled_copy_vectorized"])
def test_kept_step_costings_change_nothing(name, monkeypatch):
    """costs.py keeps a step's costing by its threads and addresses and replays it: every count,
    note, sample and buffer of the run is what costing every step afresh gives."""
    kept = _realworld(name)
    monkeypatch.setattr(K, "STEP_THREADS", 0)          # no step kept: each costed afresh
    monkeypatch.setattr(K, "_BLOCKS", {})
    _same_runs(kept, _realworld(name))


def _maps():
    """GlobalMaps of every swizzle, 1-5 dimensions, 1-, 2- and 4-byte elements, dense and padded strides."""
    for box, e, swz, dims in [((64, 64), 2, "128B", (256, 192)), ((16, 8), 4, "64B", (32, 128)),
                              ((32, 4, 2), 1, "32B", (64, 16, 8)), ((8, 2, 2, 2, 3), 2, "none", (16, 4, 4, 4, 9)),
                              ((8,), 4, "none", (40,))]:
        buf = np.zeros(int(np.prod(dims)) * e + 4096, np.uint8)
        for strides in (None, tuple(TM.dense_strides(dims, e)[i] + 16 * (i + 1) for i in range(len(dims) - 1))):
            arg = P.TensorMapArg(buffer=0, dims=dims, box=box, swizzle=swz, elem_bytes=e, strides_bytes=strides)
            yield TM.GlobalMap(arg, "test", buf, TM.GLOBAL_BASE + 256)


def test_kept_tma_box_bytes_are_the_models():
    """Boxes inside, straddling and outside the tensor: box_bytes_at gives elements()' inside mask
    (None: all inside) and, for the elements inside, its offsets (bytes in order); _landing's kept addresses are
    smem.box_addresses' (and read-only)."""
    rng = np.random.default_rng(5)
    for gm in _maps():
        box, e = gm.tmap.box, gm.e
        for _ in range(40):
            c = tuple(int(rng.integers(-b, d + 1)) for b, d in zip(box, gm.dims.tolist()))
            c = (c[0] - c[0] % max(1, 16 // e),) + c[1:]
            off, inside = gm.elements(c)
            heap, got = gm.box_bytes_at(c)
            assert (got is None) == bool(inside.all())
            if got is not None:
                assert np.array_equal(got, inside)
            m = np.repeat(inside.reshape(-1), e)
            assert np.array_equal(heap[m], (off[inside][:, None] + np.arange(e)).reshape(-1))
        for at in (0, 1024, 2048 + 128):
            why, sa, sab = ops_async._landing(gm.tmap, at, 1 << 17)
            assert why is None and not sa.flags.writeable and not sab.flags.writeable
            want = smem.box_addresses(gm.tmap, at, smem_bytes=1 << 17)
            assert np.array_equal(sa, want)
            assert np.array_equal(sab, (want[..., None] + np.arange(e)).reshape(-1))
        assert ops_async._landing(gm.tmap, 1 << 17, 1 << 17)[0] == smem.box_fault(gm.tmap, 1 << 17, 1 << 17)


def _launch(part, name):
    s = KL.setup(part, name)
    return P.run(s.ptx, s.kernel, s.grid, s.block, s.args, **s.options)


@pytest.mark.parametrize("launch", ["kernels/tma_wgmma_gemm", "clusters/multicast_2",
                                    "triton/flaggems_mm_hopper_tma"])
def test_kept_tma_boxes_change_nothing(launch, monkeypatch):
    """Every count, sample and buffer of a TMA kernel's run is the one the per-element path
    (GlobalMap.elements, smem.box_addresses each copy; a kernel-built map decoded each copy:
    FlagGems') gives."""
    kept = _launch(*launch.split("/"))
    monkeypatch.setattr(TM.GlobalMap, "box_bytes_at", lambda self, coords: None)
    monkeypatch.setattr(ops_async, "_landing", ops_async._landing.__wrapped__)
    monkeypatch.setattr(TM, "_device_map", TM.DeviceMap)
    _same_runs(kept, _launch(*launch.split("/")))
