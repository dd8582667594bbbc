"""gpu_check.descriptors without a GPU: the ids survive the one-hot MMA, the emulated probes run
the whole host side, the fit finds a reading the fake hardware was told to follow, the plan can
tell every candidate reading apart, faults are isolated in worker processes and pinned on the
descriptor or box that caused them, and the kernels compile for sm_90a with the parameter layout
their launches assume."""
import numpy as np
import pytest

from gpucheck_helpers import need_nvcc

from gpu_check.bank_probe import ncu_csv
from gpu_check.descriptors import (corpus, counters, driver, epilogue, group, ids, isolate, kernels, lab, plan, run,
                                   tasks)
from gpu_check.descriptors.emulate import FakeLab
from gpu_check.descriptors.kernels import Probe
from layoutsim import formats as F
from layoutsim import smem

FEW = [Probe("wgmma.m64n16k16.f32.f16.f16", "A", True), Probe("wgmma.m64n128k16.f32.bf16.bf16", "B"),
       Probe("wgmma.m64n32k32.s32.s8.s8", "A"), Probe("wgmma.m64n128k16.f32.f16.f16", "B", True)]


@pytest.mark.parametrize("fmt, out", [("f16", "f32"), ("bf16", "f32"), ("tf32", "f32"), ("e4m3", "f32"),
                                      ("e5m2", "f32"), ("s8", "s32"), ("u8", "s32")])
def test_every_code_comes_back_through_the_accumulator(fmt, out):
    c = ids.codes(fmt)
    assert len(set(c.tolist())) == len(c) > 200
    if fmt not in ("s8", "u8"):                      # normal numbers only: x*1 + 0 is x exactly
        assert (F.classify(fmt, c) == 0).all() and (np.abs(F.decode(fmt, c)) > 0).all()
    d = F.encode(out, F.decode(fmt, c)) if out == "f32" else (F.decode(fmt, c).astype(np.int64) & 0xFFFFFFFF)
    assert np.array_equal(ids.digits_from_output(fmt, out, d), np.arange(len(c)))
    assert ids.digits_from_output(fmt, out, np.array([0x7FC00001]))[0] == -1


def test_digits_name_every_element():
    n, b = 230000, ids.base("u8")
    p = ids.passes(n, b)
    assert p == 3
    digits = [ids.digit(np.arange(n), k, b) for k in range(p)]
    assert np.array_equal(ids.combine(digits, b), np.arange(n))
    digits[1][5] = -1
    assert ids.combine(digits, b)[5] == -1
    assert ids.byte_digits(ids.byte_image(1, 300, 1)).min() >= 0


def _measure_here(lab, probes, tma, path=None):
    campaign = tasks.Campaign(probes=probes, tma=tma)
    parts, findings = tasks.run_here(lab, campaign, campaign.tasks(), log=lambda s: None)
    rec, results = tasks.assemble(campaign, parts, findings, lab.environment(), log=lambda s: None)
    if path:
        rec.save(path)
    return results, rec


def test_emulated_probes_match_the_model_and_the_corpus_replays(tmp_path):
    path = tmp_path / "d.npz"
    tma = plan.tma_cases()[::45]
    results, rec = _measure_here(FakeLab(), FEW, tma, path)
    assert results and all(r.status == "pass" for r in results), [r.diff_text() for r in results][:2]
    assert sum(r.compared for r in results) > 100_000
    kinds = {k for p in rec.probes for k in p["kinds"]}
    assert kinds == {"canonical", "random", "reserved"}
    c, again = corpus.replay(path)
    assert sorted(r.mismatches for r in again) == sorted(r.mismatches for r in results)
    assert len(c.tma) == len(tma) + len(tma[::tasks.GLOBAL_EVERY]) and c.environment["gpu"] == "FakeGPU"
    assert {t["via"] for t in c.tma} == {"param", "global"}


def test_the_fit_finds_what_the_fake_hardware_does():
    odd = smem.Reading(strides="core-matrix", base_offset="xor", base_offset_32B=False)
    dense = smem.TmaReading(pitch="dense")
    results, rec = _measure_here(FakeLab(odd, dense), FEW[:2], plan.tma_cases()[::20])
    assert any(r.status == "fail" for r in results)
    desc, tma = corpus.fit(rec)
    assert desc[odd] == 0 and desc[smem.DOCUMENTED] > 0
    assert tma[dense] == 0 and tma[smem.tma.MEASURED] > 0
    bad = next(r for r in results if r.status == "fail" and r.entry.startswith("wgmma"))
    assert "addresses (observed -1 = no id)" in bad.diff_text()
    tma_bad = next(r for r in results if r.status == "fail" and r.entry.startswith("cp.async"))
    assert "global element index (-1 = nothing landed)" in tma_bad.diff_text()


def _small_plan(n_random=8):
    """One probe, 8 random descriptors, 6 TMA boxes: a plan whose workers start fast."""
    campaign = tasks.Campaign(probes=FEW[:1], tma=plan.tma_cases()[:6])
    campaign.cases[0]["random"] = campaign.cases[0]["random"][:n_random]
    return tasks.Campaign.from_json(campaign.to_json())


def test_the_plan_survives_json():
    campaign = _small_plan()
    again = tasks.Campaign.from_json(campaign.to_json())
    assert again.tasks() == campaign.tasks() and again.cases == campaign.cases and again.tma == campaign.tma
    assert [tasks.Task.from_key(t.key) for t in campaign.tasks()] == campaign.tasks()


def test_workers_pin_a_fault_on_its_descriptor_and_survive_a_crash(tmp_path):
    """A descriptor that faults costs only its own data: its task is rerun one descriptor at a
    time, and the fault is pinned on it (its decoded fields are reported); one that kills the
    worker outright is reported as such; every other descriptor is measured and matches."""
    campaign = _small_plan()
    rnd = campaign.cases[0]["random"]
    faulty, crashing = rnd[5].desc, rnd[2].desc
    spec = {"kind": "fake", "fault": [faulty], "crash": [crashing]}
    lines = []
    parts, findings, env = isolate.run(campaign, spec, campaign.tasks(["canonical", "random"]), tmp_path,
                                       log=lines.append)
    assert env["gpu"] == "FakeGPU"
    kinds = sorted((f["kind"], f["descriptors"][0]) for f in findings)
    assert kinds == sorted([("fault", f"{faulty:#018x}"), ("fault", f"{crashing:#018x}")])
    crash = next(f for f in findings if f["descriptors"][0] == f"{crashing:#018x}")
    assert "the worker died (exit 86)" in crash["message"]
    fault = next(f for f in findings if f["descriptors"][0] == f"{faulty:#018x}")
    assert "illegal memory access" in fault["message"] and fault["decoded"] == str(smem.Descriptor.decode(faulty))
    assert sum("one descriptor per task" in x for x in lines) == 1
    assert sum(x.startswith("[isolate] worker") for x in lines) == 5    # canonical, random, then 1 + 1 per fault
    rec, results = tasks.assemble(campaign, parts, findings, env, log=lambda s: None, fit=False)
    assert all(r.status == "pass" for r in results if r.status != "error")
    measured = {int(v) for p in rec.probes for v in p["values"]}
    want = {c.desc for ph in ("canonical", "random") for c in campaign.cases[0][ph]} - {faulty, crashing}
    assert measured == want


def test_a_phase_that_faults_throughout_is_abandoned(tmp_path):
    """The first H200 run: every TMA copy through the parameter faulted. After FAULTS_SYSTEMATIC
    faults with nothing measured the phase stops; the global-memory path still runs."""
    campaign = _small_plan()
    spec = {"kind": "fake", "fault_tma_via": "param"}
    todo = campaign.tasks(["tma"]) + [tasks.Task("tma-global", -1, (j,)) for j in range(6)]
    parts, findings, _ = isolate.run(campaign, spec, todo, tmp_path, log=lambda s: None)
    assert [f["kind"] for f in findings] == ["fault"] * isolate.FAULTS_SYSTEMATIC + ["not run"] * 3
    assert findings[0]["tma_case"]["box"] == campaign.tma[0].box
    assert "systematic" in findings[-1]["message"]
    assert sorted(parts) == sorted(f"tma-global.-1.{j}" for j in range(6))


def _fits(c):
    return (all(0 <= o and o + b <= g for o, b, g in zip(c.coords, c.box, c.gdims))
            and c.gdims[0] * c.elem_bytes % 16 == 0 and c.inner_aligned)


def test_tma_boxes_keep_the_innermost_coordinate_on_16_bytes():
    """The second H200 run (2026-12-01) faulted on every box it tried, all at innermost byte
    offsets off 16 (plan.COORD_ALIGN); the boxes measured now stay on it, the sanity box (the
    counters' first box, which loaded fine) runs first, and the tma-coords phase tests the rule:
    an aligned control, then offsets 3, 8 and 4 bytes."""
    cases = plan.tma_cases()
    main = [c for c in cases if not c.coord_probe]
    rule = [c for c in cases if c.coord_probe]
    assert cases[0] == plan.TmaCase(*plan.SANITY_BOX) == counters.tma_boxes()[0][1]
    assert len(main) == 181 and all(_fits(c) for c in main) and any(c.coords[0] for c in main)
    assert [c.coords[0] * c.elem_bytes % 16 for c in rule] == [0, 3, 8, 4]
    assert all(_fits(c) or not c.inner_aligned for c in rule)
    assert all(_fits(c) for _, c in counters.tma_boxes())
    campaign = tasks.Campaign(probes=[], tma=cases)
    assert campaign.tasks(["tma"])[0].cases == (0,)
    assert [t.cases[0] for t in campaign.tasks(["tma-coords"])] == [cases.index(c) for c in rule]
    assert not {t.cases[0] for t in campaign.tasks(["tma", "tma-global"])} & {cases.index(c) for c in rule}


def test_the_coordinate_rule_costs_one_worker_per_faulting_box(tmp_path):
    """If the rule holds, each box off it faults alone (after its aligned control ran) and is
    reported with its coordinates; the boxes on it are all measured."""
    cases = plan.tma_cases()
    campaign = tasks.Campaign(probes=[], tma=cases[:4] + [c for c in cases if c.coord_probe])
    spec = {"kind": "fake", "fault_tma_coords": True}
    parts, findings, _ = isolate.run(campaign, spec, campaign.tasks(["tma", "tma-coords"]), tmp_path,
                                     log=lambda s: None)
    assert [f["kind"] for f in findings] == ["fault"] * 3
    assert sorted(f["tma_case"]["coords"][0] for f in findings) == [1, 3, 4]
    assert "innermost coordinate" in findings[0]["message"]
    assert sorted(parts) == sorted(f"{ph}.-1.{j}" for ph, j in [("tma", 0), ("tma", 1), ("tma", 2), ("tma", 3),
                                                                 ("tma-coords", 4)])


@pytest.mark.parametrize("gpu_faults", [True, False])
def test_a_predicted_fault_is_a_match(tmp_path, gpu_faults):
    """The coordinate rule's boxes compare faults: a GPU that faults on the 3 boxes off the rule
    (as the H200 did, 2026-12-01) matches the model with no error; one that lets them land
    contradicts it (3 mismatches)."""
    cases = plan.tma_cases()
    campaign = tasks.Campaign(probes=[], tma=cases[:1] + [c for c in cases if c.coord_probe])
    spec = {"kind": "fake", "fault_tma_coords": gpu_faults}
    parts, findings, _ = isolate.run(campaign, spec, campaign.tasks(["tma", "tma-coords"]), tmp_path,
                                     log=lambda s: None)
    _, results = tasks.assemble(campaign, parts, findings, {}, log=lambda s: None, fit=False)
    rule = [r for r in results if r.check.startswith("faults")]
    assert len(rule) == 1 and rule[0].cases == 4
    assert rule[0].mismatches == (0 if gpu_faults else 3)
    assert not [r for r in results if r.status == "error"]


def test_the_plan_tells_every_reading_apart():
    """Every pair of candidate readings predicts a different address somewhere in the plan."""
    readings = smem.candidate_readings()
    seen = {}
    for probe in (Probe("wgmma.m64n16k16.f32.f16.f16", "A"), FEW[0]):      # K- and MN-major
        safe, _ = plan.cases(probe, 0x400)
        values = np.array([c.desc for c in safe], np.uint64)
        for r in readings:
            seen.setdefault(r, []).append(run.model(probe, values, r).tobytes())
    keys = {r: b"".join(v) for r, v in seen.items()}
    assert len(set(keys.values())) == len(readings)
    tma = plan.tma_cases()
    outs = {r: b"".join(run.tma_model(c, 0x400, r).tobytes() for c in tma) for r in smem.tma.candidate_readings()}
    assert len(set(outs.values())) == 4


def test_every_case_stays_in_the_id_region_under_every_reading():
    for probe in FEW:
        safe, risky = plan.cases(probe, 0x400)
        assert len(safe) >= plan.RANDOM_PER_PROBE + 4 and len(risky) == plan.RESERVED_PER_PROBE
        values = np.array([c.desc for c in safe + risky], np.uint64)
        assert plan.fits(probe, values, 0x400, smem.candidate_readings()).all()
        assert all(smem.Descriptor.decode(int(c.desc)).reserved for c in risky)
        assert not any(smem.Descriptor.decode(int(c.desc)).reserved for c in safe)


def test_probe_sources_use_the_forms_ptx_defines():
    src = {p.name: p.source() for p in FEW}
    a = src[FEW[0].name]
    assert "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;" in a
    b = src[FEW[1].name]
    assert "m64n128k16.f32.bf16.bf16" in b and "p, 1, 1, 0;" in b and "areg[t * 4 + 3]" in b
    s8 = src[FEW[2].name]
    assert ", %16, %17, p;" in s8               # integer wgmma: no scale or transpose immediates
    assert "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes" in kernels.TMA_SOURCE


@need_nvcc
def test_the_probes_compile_for_sm_90a_with_the_parameters_their_launches_assume(kernel_cache):
    """pycuda packs the wgmma probes' scalars and pointers at natural alignment, which is where the
    cubin wants them; the TMA kernel's tensor map sits at parameter offset 0x70 (CUtensorMap is
    alignas(128) and sm_90's parameters start at constant-bank offset 0x210), where no packed
    buffer puts it: that is why it is launched with kernelParams (driver.Kernel)."""
    cubin, secs, cmd = lab.build(plan.probes())
    assert len(cubin) > 10_000 and "sm_90a" in cmd
    sass, missing = lab.sass_check(cubin, plan.probes())
    assert missing == [] or sass == {}
    names = driver.kernel_names(cubin)
    assert sorted(names) == sorted([p.name for p in plan.probes()] + [kernels.TMA_NAME])
    for name in names:
        params = driver.cubin_params(cubin, name)
        offsets, sizes = [o for o, _ in params], [s for _, s in params]
        if name == kernels.TMA_NAME:
            assert sizes == [size for _, size in kernels.TMA_PARAMS]
            assert offsets[0] == 0x70 and (0x210 + offsets[0]) % 128 == 0
            assert offsets != driver.packed_offsets(sizes)
        else:
            assert sizes == [8, 8, 4, 8, 8, 4, 4] and offsets == driver.packed_offsets(sizes)


def test_cubin_params_reads_the_kparam_records():
    """A hand-made ELF with one .nv.info.k section: two EIATTR_KPARAM_INFO records (as nvcc writes
    them: the size in bits 18-31 of the last word) around an unrelated attribute."""
    import struct
    info = struct.pack("<BBH", 0x04, 0x17, 12) + struct.pack("<IHHI", 0, 1, 0x80, (4 << 18) | 0x1F000)
    info += struct.pack("<BBH", 0x03, 0x1b, 0xFF)
    info += struct.pack("<BBH", 0x04, 0x17, 12) + struct.pack("<IHHI", 0, 0, 0x70, (128 << 18) | 0x1F000)
    names = b"\0.shstrtab\0.nv.info.k\0"
    body = names + info
    shoff = 64 + len(body)
    shoff += -shoff % 8
    head = b"\x7fELF" + bytes(0x24) + struct.pack("<Q", shoff) + bytes(0x3A - 0x30) + struct.pack("<HHH", 64, 3, 1)
    head += bytes(64 - len(head))

    def sh(name, off, size):
        return struct.pack("<IIQQQQIIQQ", name, 0, 0, 0, off, size, 0, 0, 0, 0)
    elf = head + body + bytes(shoff - 64 - len(body))
    elf += sh(0, 0, 0) + sh(1, 64, len(names)) + sh(11, 64 + len(names), len(info))
    assert driver.cubin_params(elf, "k") == [(0x70, 128), (0x80, 4)]
    assert driver.kernel_names(elf) == ["k"]
    with pytest.raises(KeyError):
        driver.cubin_params(elf, "other")
    assert driver.packed_offsets([128, 8, 4, 4, 8, 4]) == [0, 128, 136, 140, 144, 152]


def test_tensormap_arguments():
    a = driver.arguments(0x7000, (40, 21, 11), 2, (32, 16, 3), "64B")
    assert a["globalStrides"] == [80, 80 * 21] and a["boxDim"] == [32, 16, 3] and a["swizzle"] == 2
    assert a["dataType"] == 1 and a["rank"] == 3 and a["interleave"] == 0


def test_counter_differences():
    """(m[hi] - m[lo]) / (hi - lo) per op; the noise is the spread of the repeat-lo launches of one
    kernel; a counter moves when its difference exceeds that."""
    lo, hi = counters.REPEATS
    rows = []
    for n, (label, entry, under, swz, major, rep) in enumerate(counters.launches()):
        wobble = 10 * (n % 3) if rep == lo else 0                 # fill noise on the store counter
        kernel = "desc_probe_tma" if entry is None else f"desc_probe_{under}_{major}"
        rows.append((kernel, {ncu_csv.LD: 100 + 7 * rep, ncu_csv.ST: 50 + wobble,
                                                     "x.sum": 3 * rep}))
    parsed = ncu_csv.parse(ncu_csv.synthesize(rows, metrics=(ncu_csv.LD, ncu_csv.ST, "x.sum")))
    out = counters.per_op(parsed, [ncu_csv.LD, ncu_csv.ST, "x.sum"])
    assert len(out["per_op"]) == len(counters.launches()) // 2
    assert counters.launches("tma") == [x for x in counters.launches() if x[1] is None]
    for x in out["per_op"]:
        assert x["per_op"][ncu_csv.LD] == {"value": 7.0, "noise": 0.0, "moves": True}
        assert x["per_op"]["x.sum"]["value"] == 3.0 and x["per_op"]["x.sum"]["moves"]
        st = x["per_op"][ncu_csv.ST]
        assert abs(st["value"]) <= st["noise"] and not st["moves"]
    out["metrics"] = [ncu_csv.LD, ncu_csv.ST, "x.sum"]
    text = "\n".join(counters.summary(out))
    assert "per op wgmma none K=7" in text
    assert "within noise for every op: data_pipe_lsu_wavefronts_mem_shared_op_st.sum" in text


def test_epilogue_patterns_cost_what_bank_arithmetic_says():
    """ldmatrix/stmatrix.x4 read 8 rows of one 16-byte chunk per phase: 128-byte rows put them
    all in one group of 4 banks (8-way, 32 wavefronts), a swizzle spreads them over 2, 4 or 8
    chunk positions (16, 8 or 4 wavefronts)."""
    from gpu_check.bank_probe import corpus as bank_corpus
    from layoutsim.banks import nvidia
    pats = epilogue.patterns()
    model = bank_corpus.predictions(pats, nvidia.DEFAULT)
    want = {"none, 128-byte rows": 32, "32B swizzle on 128-byte rows": 16, "64B swizzle on 128-byte rows": 8,
            "128B swizzle": 4, "64B swizzle": 4, "32B swizzle": 4}
    for p, m in zip(pats, model):
        label = p["tag"].split(" 64x")[0]
        if p["op"].startswith(("ldmatrix", "stmatrix")):
            assert m == want[label], (p["tag"], p["op"], m)
        else:
            assert m == 4, (p["tag"], p["op"], m)


def test_group_skips_other_gpus():
    class Amd:
        vendor, arch = "amd", "gfx1201"
    r = group.measure(Amd())
    assert [x.status for x in r] == ["skip"] and "sm_90" in r[0].note


def test_kernel_launch_hands_the_driver_one_pointer_per_parameter(monkeypatch):
    """driver.Kernel.launch passes cuLaunchKernel an array of pointers to each value (kernelParams),
    no argument buffer; a stand-in libcuda records what each pointer points at."""
    import ctypes
    seen = {}

    class Lib:
        def cuModuleLoadData(self, module, image):
            return 0

        def cuModuleGetFunction(self, fn, module, name):
            seen["name"] = name
            return 0

        def cuFuncSetAttribute(self, fn, attr, value):
            seen["attr"] = (attr, value)
            return 0

        def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            sizes = [size for _, size in kernels.TMA_PARAMS]
            seen["params"] = [ctypes.string_at(params[i], n) for i, n in enumerate(sizes)]
            seen["launch"] = (gx, gy, gz, bx, by, bz, shared, stream, extra)
            return 0

    monkeypatch.setattr(driver, "_LIB", Lib())
    k = driver.Kernel(b"\x7fELF....", kernels.TMA_NAME)
    tmap = bytes(range(128))
    k.launch([tmap, ctypes.c_uint64(0), ctypes.c_uint32(640), ctypes.c_int32(3), ctypes.c_int32(-1),
              ctypes.c_int32(0), ctypes.c_int32(2), ctypes.c_uint32(4096), ctypes.c_uint32(512),
              ctypes.c_uint64(0x7F0000001000), ctypes.c_int32(5)], shared=4112)
    got = seen["params"]
    assert seen["name"] == kernels.TMA_NAME.encode() and seen["attr"] == (8, 4112)
    assert got[0] == tmap and got[2] == (640).to_bytes(4, "little")
    assert got[4] == (-1).to_bytes(4, "little", signed=True)
    assert got[9] == (0x7F0000001000).to_bytes(8, "little") and got[10] == (5).to_bytes(4, "little")
    assert seen["launch"] == (1, 1, 1, 128, 1, 1, 4112, None, None)


def test_the_group_runs_from_the_registry_and_records_its_corpus(tmp_path, monkeypatch):
    """`gpu-check run --group descriptors` on the CPU stand-in: the registry finds the group, it
    needs no session kernels, measures (emulated) and keeps the corpus under RECORD/descriptors/."""
    import types
    from fakegpu import FakeBackend
    from gpu_check import checks
    small = tasks.Campaign(probes=FEW[:1], tma=plan.tma_cases()[:3])
    monkeypatch.setattr(tasks, "Campaign", lambda: small)
    mod = checks.group("descriptors")
    assert mod.NEEDS_KERNELS is False
    session = types.SimpleNamespace(backend=FakeBackend(), record=tmp_path, log=lambda s: None)
    results = mod.run(session)
    assert results and all(r.group == "descriptors" and r.status == "pass" for r in results)
    c = corpus.load(tmp_path / "descriptors" / "descriptors_sm_90.npz")
    assert len(c.probes) == 3 and len(c.tma) == 3 + 1          # phases of one probe; TMA (+ the global cross-check)
