"""The harness holds no layout knowledge: hand gpu-check a catalog with one deliberately wrong
map and it must (1) generate exactly the kernels it generates for the true catalog -- kernels
move words, so their text cannot depend on a map -- and (2) report the wrong map when a device
runs them, both live and when a recorded dump is replayed.

The device is the CPU stand-in (fakegpu.py) executing the kernels' true semantics: for MMAs it
reads the registers through the true catalog (what the hardware does), for ldmatrix it follows
the PTX ISA's words, independent of the catalog. The wrong catalog reaches every part of the
harness through the registry (`layoutsim.get`), as a wrong catalog entry would.

fakegpu never reads the kernel text, so it cannot see a kernel that does something other than
what its family intends. The second half runs the generated CUDA itself -- nvcc to PTX, executed
by layoutsim.ptx (gpu_check/backends/ptxsim.py) -- and shows that the true kernels pass and that
kernels rewritten with a lane permutation, or with the mma layout's groupID used to address the
words, are caught. ptxsim cannot replace fakegpu in the first half: the executor moves registers
through the catalog, so it would follow a wrong map as the host does.
"""
import dataclasses
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

import layoutsim
from fakegpu import FakeBackend
from gpu_check import families as F
from gpu_check import record
from gpu_check.checks import layouts
from gpu_check.codegen.cuda import module_source
from layoutsim.fragment import FragmentMap
from layoutsim.isa import registry

# (entry, operand): maps made wrong by exchanging what lanes 1 and 2 hold
WRONG = [("mma.m16n8k16.f32.f16.f16.f32", "D"), ("mma.m16n8k16.f16.f16.f16.f16", "B"),
         ("wgmma.m64n8k16.f32.f16.f16", "A"), ("ldmatrix.x4.trans", "R")]


def _swap_lanes(frag, a=1, b=2):
    order = np.arange(frag.lanes)
    order[[a, b]] = order[[b, a]]
    return FragmentMap(table=frag.table[order].copy(), shape=frag.shape, elem_bits=frag.elem_bits,
                       reg_bits=frag.reg_bits, names=frag.names)


def _wrong_catalog(monkeypatch, name, operand):
    """Make the registry hand out `name` with `operand`'s map wrong; returns (true, wrong)."""
    true = layoutsim.get(name)
    ops = dict(true.operands)
    ops[operand] = dataclasses.replace(ops[operand], fragment=_swap_lanes(ops[operand].fragment))
    wrong = dataclasses.replace(true, operands=ops)
    built = registry._built
    monkeypatch.setattr(registry, "_built", lambda entry: wrong if entry.name == true.name else built(entry))
    assert layoutsim.get(name) is wrong
    return true, wrong


def _device(true_specs):
    """Run a kernel as the hardware would: through the spec the true catalog gives."""
    fake = FakeBackend()

    def launch(spec, inp):
        return fake.launch(None, true_specs[spec.kind], inp, len(inp)).reshape(len(inp), spec.out_words)
    return launch


def _run(specs, launch, recorder=None):
    results = []
    for spec in specs:
        ps = layouts.probes(spec)
        inp = np.concatenate([p.inp for p in ps])
        out = launch(spec, inp)
        meta, start = [], 0
        for p in ps:
            k = len(p.inp)
            results.append(layouts.compare(spec, p.check, inp[start:start + k], out[start:start + k], p.meta))
            meta.append((p.check, start, k, p.meta))
            start += k
        if recorder is not None:
            recorder.add(spec, meta, inp, out)
    return results


@pytest.mark.parametrize("name, operand", WRONG)
def test_a_wrong_catalog_map_changes_no_kernel_and_is_caught(name, operand, monkeypatch, tmp_path):
    true_specs = {s.kind: s for s in F.specs_for(layoutsim.get(name))}
    launch = _device(true_specs)
    # the true catalog passes: the device and the harness agree
    good = _run(true_specs.values(), launch)
    assert good and all(r.status == "pass" for r in good), [r.diff_text() for r in good if r.status != "pass"][:2]

    true, wrong = _wrong_catalog(monkeypatch, name, operand)
    specs = [s for s in F.specs_for(wrong) if s.kind in true_specs]
    assert specs
    for s in specs:                       # the same kernel, word for word
        assert s.source() == true_specs[s.kind].source()
        assert (s.in_words, s.out_words) == (true_specs[s.kind].in_words, true_specs[s.kind].out_words)

    rec = record.LayoutRecorder()
    live = _run(specs, launch, rec)
    bad = [r for r in live if r.status == "fail"]
    assert bad and sum(r.mismatches for r in bad) > 0

    # the dump recorded from that run: replayed against the wrong catalog it fails ...
    path = rec.save(tmp_path / "wrong.npz", {"gpu": "FakeGPU"})
    _, replayed = record.replay(path)
    assert sum(r.mismatches for r in replayed) == sum(r.mismatches for r in live)
    # ... and against the true one it passes: the words on the "device" were right all along
    monkeypatch.undo()
    assert layoutsim.get(name) is true
    _, replayed = record.replay(path)
    assert replayed and all(r.status == "pass" for r in replayed), [r.diff_text() for r in replayed][:2]


# ---- the generated kernel text, executed ------------------------------------------------------
# A handful of entries per family (each launch costs the executor about a second): both mma
# operand kinds (16-bit and integer, "r" registers; f64, "d" registers), the e2e kernel with D in
# registers and with D through stmatrix, ldmatrix and stmatrix plain and .trans, wgmma 16-bit and
# integer.
EXECUTED = [("mma.m16n8k16.f32.f16.f16.f32", "mma"), ("mma.m16n8k32.s32.s8.u8.s32", "mma"),
            ("mma.m8n8k4.f64.f64.f64.f64", "mma"), ("mma.m16n8k16.f32.f16.f16.f32", "e2e"),
            ("mma.m16n8k16.f16.f16.f16.f16", "e2e"), ("ldmatrix.x4.trans", "ldmatrix"),
            ("ldmatrix.x1", "ldmatrix"), ("stmatrix.x4", "stmatrix"), ("stmatrix.x2.trans", "stmatrix"),
            ("wgmma.m64n8k16.f32.f16.f16", "wgmma"), ("wgmma.m64n8k32.s32.u8.s8", "wgmma")]

# The audit's mutation: the words a lane stores go to the slot of another lane (4k+1 <-> 4k, ...),
# in every kernel whose store is indexed by lane (or by thread, for wgmma).
_STORE = re.compile(r"\bout( \+ |\[)\(\(size_t\)cs \* (32|128) \+ (lane|t)\)")
# The issue's: groupID = lane>>2 in every kernel, used as layout knowledge would use it -- the
# kernel reads each lane's words at (threadID_in_group, groupID) order instead of its own.
_LANE_DEF = re.compile(r"(const int (lane|t) = threadIdx\.x(?: & 31)?;)")
_LANE_IN = re.compile(r"\b((?:in|img)(?: \+ |\[)(?:\(?\(size_t\)cs \* 32 \+ |\d+ \+ )?)(lane|t)\b")


def _permuted_store(src):
    return _STORE.subn(r"out\1((size_t)cs * \2 + (\3 ^ ((\3 >> 2) & 1)))", src)


def _group_id(src):
    src, n = _LANE_DEF.subn(r"\1\n    const int groupID = (\2 & 31) >> 2;", src)
    src, m = _LANE_IN.subn(r"\1(((\2) & ~31) + ((\2) & 3) * 8 + groupID)", src)
    return src, min(n, m)


MUTATIONS = {"permuted_store": _permuted_store, "group_id": _group_id}
MUTATED = ([("permuted_store", e, k) for e, k in EXECUTED if k in ("mma", "ldmatrix", "wgmma")]
           + [("permuted_store", "mma.m16n8k16.f32.f16.f16.f32", "e2e")]          # D in registers
           + [("group_id", e, k) for e, k in EXECUTED])


@pytest.fixture(scope="module")
def ptxsim():
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed: the generated CUDA cannot be compiled to PTX here")
    from gpu_check.backends.ptxsim import PtxsimBackend
    # PTX cached per (source, target, nvcc) hash across runs, so a rerun compiles nothing
    return PtxsimBackend(cache=Path(tempfile.gettempdir()) / f"gpu_check_ptxsim_{os.getuid()}")


def _spec(entry, kind):
    return next(s for s in F.specs_for(layoutsim.get(entry)) if s.kind == kind)


@pytest.fixture(scope="module")
def modules(ptxsim):
    """{None: the true kernels, mutation: its rewrite}, every EXECUTED kernel in one translation
    unit each: nvcc, not the executor, is what costs here (about a second a run)."""
    src = module_source([_spec(e, k) for e, k in EXECUTED])
    return {None: ptxsim.load(src), **{m: ptxsim.load(f(src)[0]) for m, f in MUTATIONS.items()}}


def _executed(ptxsim, module, spec):
    return _run([spec], lambda s, inp: ptxsim.launch(module, s, inp, len(inp)).reshape(len(inp), s.out_words))


@pytest.mark.parametrize("entry, kind", EXECUTED)
def test_the_generated_kernels_pass_when_executed(entry, kind, ptxsim, modules):
    res = _executed(ptxsim, modules[None], _spec(entry, kind))
    assert res and all(r.status == "pass" for r in res), [r.diff_text() for r in res if r.status != "pass"][:2]
    assert sum(r.compared for r in res) >= 32 * 8


@pytest.mark.parametrize("mutation, entry, kind", MUTATED)
def test_a_mutated_kernel_text_is_caught(mutation, entry, kind, ptxsim, modules):
    spec = _spec(entry, kind)
    assert MUTATIONS[mutation](spec.source())[1], f"{mutation} no longer applies to the {kind} kernel: update it"
    res = _executed(ptxsim, modules[mutation], spec)
    bad = [r for r in res if r.status == "fail"]
    assert bad and sum(r.mismatches for r in bad) > 0, f"{mutation} of {spec.name} passed every check"
