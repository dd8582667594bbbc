"""The harness holds no layout knowledge: hand gpu-check a catalog with one deliberately wrong
map and it must (1) generate exactly the kernels it generates for the true catalog -- kernels
move words, so their text cannot depend on a map -- and (2) report the wrong map when a device
runs them, both live and when a recorded dump is replayed.

The device is the CPU stand-in (fakegpu.py) executing the kernels' true semantics: for MMAs it
reads the registers through the true catalog (what the hardware does), for ldmatrix it follows
the PTX ISA's words, independent of the catalog. The wrong catalog reaches every part of the
harness through the registry (`layoutsim.get`), as a wrong catalog entry would.
"""
import dataclasses

import numpy as np
import pytest

import layoutsim
from fakegpu import FakeBackend
from gpu_check import families as F
from gpu_check import record
from gpu_check.checks import layouts
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
