"""gpu-check discover beyond f16/bf16 (issue 10): s8/u8 fragments measured by base-255 digits over
two loads, tf32 and f64 fragments, s32/f32/f64 accumulators; decoded end to end on the CPU
stand-in, loaded by the catalog loader, and applied to the catalog file only when consistent."""
import json

import numpy as np
import pytest
from fakegpu import FakeBackend, _wmma_map

from gpu_check import cli
from gpu_check import discover as D
from gpu_check.families import wmma_load as W
from layoutsim.errors import LayoutsimError
from layoutsim.isa import ptx_wmma

NEW = ("s8", "u8", "s32", "tf32", "f64")
SPECS = [s for s in W.specs() if s.fmt in NEW or s.shape == (16, 16, 8)]


def _discover(specs, fault=None):
    fake = FakeBackend(fault=fault)
    outs = [[fake.launch(None, s, image, 1) for image in s.images()] for s in specs]
    return D.decode_all(specs, outs, fake.environment()), fake


def test_every_new_kind_is_generated():
    kinds = {(s.use, s.shape, s.fmt) for s in SPECS}
    for shape in W.SHAPES:
        assert {(u, shape, f) for u in "ab" for f in ("s8", "u8")} | {("c", shape, "s32")} <= kinds
    assert {("a", (16, 16, 8), "tf32"), ("b", (16, 16, 8), "tf32"), ("c", (16, 16, 8), "f32"),
            ("a", (8, 8, 4), "f64"), ("b", (8, 8, 4), "f64"), ("c", (8, 8, 4), "f64")} <= kinds
    assert len(SPECS) == 42


def test_ids_survive_as_raw_bits():
    for s in SPECS:
        ids = np.concatenate([s.element_ids(p).ravel() for p in range(s.passes)])
        if s.fmt == "tf32":                     # 13 low bits clear: a rounding to tf32 keeps them
            assert not (ids & np.uint64(0x1FFF)).any()
        if s.integer:                           # codes 1..255 of a byte; 0 is the ldm padding
            assert ids.min() >= 1 and ids.max() <= (255 if s.elem_bits == 8 else 2 ** 32 - 1)
    big = next(s for s in SPECS if s.entry == "wmma.load.a.sync.aligned.row.m32n8k16.s8")
    assert big.passes == 2 and big.rows * big.cols == 512 and big.ldm == 16
    # B of m32n8k16 row-major is 8 bytes a row: padded to the 16-byte ldm load_matrix_sync needs
    small = next(s for s in SPECS if s.entry == "wmma.load.b.sync.aligned.row.m32n8k16.s8")
    assert small.ldm == 16 and small.passes == 1


@pytest.mark.parametrize("spec", SPECS, ids=[s.entry for s in SPECS])
def test_decoded_map_is_the_emulated_one_and_loads_into_the_catalog(spec):
    (e,), _ = _discover([spec])
    assert e["valid"] and e["replication"] == 1 and e["loads"] == spec.passes
    assert np.array_equal(np.asarray(e["table"]), _wmma_map(spec))
    assert e["reg_bits"] == (64 if spec.fmt == "f64" else 32)
    env = FakeBackend().environment()
    inst = ptx_wmma._build(json.loads(json.dumps(e)), env)()    # through JSON, as the catalog reads it
    frag = inst.operand(e["operand"]).fragment
    assert frag.reg_bits == e["reg_bits"] and frag.slots == e["slots"]
    assert np.array_equal(frag.table.reshape(32, -1, 3)[..., 1:], _wmma_map(spec))


def test_a_wrong_second_digit_is_caught():
    spec = next(s for s in SPECS if s.entry == "wmma.load.a.sync.aligned.row.m32n8k16.s8")
    calls = []

    def fault(s, out):
        calls.append(1)
        if len(calls) == 2:                     # the high-digit load: lane 3's x[0] says digit 0
            out[3 * W.MAXE] &= np.uint32(0xFFFFFF00)
        return out
    (e,), _ = _discover([spec], fault=("m32n8k16_s8", fault))
    assert not e["valid"] and e["invalid_ids"] == 1 and e["table"][3][0] == [-1, -1]


def _recorded(tmp_path, entries):
    return D.save(entries, FakeBackend().environment(), tmp_path / "layouts" / "wmma_discovered.json")


def test_apply_refuses_a_changed_or_missing_map_and_takes_a_consistent_one(tmp_path):
    new, _ = _discover(SPECS)
    doc = json.loads(ptx_wmma.DATA.read_text())
    names = {e["name"] for e in new}
    old = doc["entries"] = [e for e in doc["entries"] if e["name"] not in names]   # the f16/bf16 maps
    catalog = tmp_path / "nvcuda_wmma_sm_90.json"
    catalog.write_text(json.dumps(doc))
    # the fake's f16 maps are made up: they differ from the H200's, so this must be refused
    fake_old, _ = _discover([s for s in W.specs() if s not in SPECS][:1])
    with pytest.raises(LayoutsimError, match="differs from the catalog"):
        D.apply(_recorded(tmp_path, fake_old + new), catalog)
    with pytest.raises(LayoutsimError, match="lacks"):
        D.apply(_recorded(tmp_path, new), catalog)
    path, added = D.apply(_recorded(tmp_path, old + new), catalog)
    doc = json.loads(path.read_text())
    assert len(doc["entries"]) == len(old) + 42 and sorted(added) == sorted(e["name"] for e in new)
    assert doc["environment"]["gpu"] == "FakeGPU"


def test_apply_on_the_command_line(tmp_path, capsys, monkeypatch):
    from layoutsim import package_data
    # read as from a clone (where --apply may write); nothing valid is given, so nothing is written
    monkeypatch.setattr(package_data, "source_checkout", lambda: package_data.ROOT)
    assert cli.main(["discover", "--apply", str(tmp_path / "none.json")]) == 2
    assert cli.main(["discover", "--apply", str(tmp_path / "none.json"), "--record", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--record with --apply" in err[1]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert cli.main(["discover", "--apply", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
