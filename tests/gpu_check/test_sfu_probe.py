"""The approximate-math probe (gpu_check/sfu) without a GPU: the table codec, the sin/cos cubin
patch on the real probe build, and the driver against its CPU stand-in (--dry-run)."""
import json
import struct
import subprocess

import numpy as np
import pytest

from gpu_check.sfu import measure as M
from layoutsim.numerics import sfu_tables as TB
from gpu_check.sfu.patch import ONE, TWO_PI_INV, patch_sincos, text_sections

from gpucheck_helpers import need_nvcc


def test_ordered_is_a_monotone_bijection_on_float_bits():
    vals = np.array([-np.inf, -3.0, -1e-40, -0.0, 0.0, 1e-40, 1.0, np.inf], np.float32)
    o = TB.ordered(vals.view(np.uint32))
    assert list(o) == sorted(o) and len(set(o.tolist())) == len(o)           # -0 and +0 differ
    bits = np.array([0, 0x80000000, 0x7FC00000, 0xFFFFFFFF, 0x3F800000, 0x00000001], np.uint32)
    assert (TB.unordered(TB.ordered(bits)) == bits).all()


def test_table_codec_gives_the_table_back_bit_for_bit():
    rng = np.random.default_rng(5)
    x = np.arange(1 << 16) / 2.0 ** 16
    ref = TB.round_f32_ftz(np.exp2(x))
    table = (TB.ordered(ref) + rng.integers(-2, 3, ref.size) * (rng.random(ref.size) < 0.1))
    table = TB.unordered(table)
    meta, blobs = TB.encode(table, ref)
    assert meta["err_dtype"] == "int8" and meta["ref_dtype"] == "int16"      # steps of about 88..177 ulps
    assert (TB.decode(meta, blobs) == table).all()
    assert meta["error_ulps"]["nonzero"] == int((table != ref).sum())
    meta["sha256"] = "0" * 64
    with pytest.raises(ValueError, match="SHA-256"):
        TB.decode(meta, blobs)


def test_round_f32_ftz_flushes_subnormal_results():
    bits = TB.round_f32_ftz([2.0 ** -127, -2.0 ** -130, 2.0 ** -126, 1.0 + 2.0 ** -24])
    assert list(bits) == [0, 0x80000000, 0x00800000, 0x3F800000]               # last: tie to even


@pytest.fixture(scope="module")
def probe_cubin(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe")
    out = d / "probe.cubin"
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-o", str(out), str(M.HERE / "probe.cu")], check=True)
    return out.read_bytes()


@need_nvcc
def test_probe_compiles_and_its_sincos_multipliers_are_patched(probe_cubin):
    names = {n for n, _, _ in text_sections(probe_cubin)}
    for k in ("build_table", "check", "errhist", "compose", "sincos_dump", "sincos_compare", "dump16", "check16x2"):
        assert f".text.{k}" in names
    patched, hits = patch_sincos(probe_cubin)
    # every kernel that can evaluate sin or cos (op is a runtime argument) holds one FMUL.RZ each
    assert sorted({s for s, _ in hits}) == [".text.build_table", ".text.check", ".text.errhist",
                                           ".text.sincos_compare", ".text.sincos_dump"]
    assert len(hits) == 10 and TWO_PI_INV not in patched
    assert patched.count(ONE) >= 10 and len(patched) == len(probe_cubin)


@need_nvcc
def test_patch_refuses_a_multiplier_outside_an_immediate_field(probe_cubin):
    name, off, size = next(t for t in text_sections(probe_cubin) if t[0] == ".text.dump16")
    bad = bytearray(probe_cubin)
    bad[off + 8:off + 12] = TWO_PI_INV                                        # byte 8 of an instruction
    with pytest.raises(ValueError, match="immediate"):
        patch_sincos(bytes(bad))


def test_hypotheses_and_their_tables():
    assert [h for h, _ in M.hypotheses("ex2")][:2] == [0 | 20 << 4, 0 | 21 << 4]
    assert M.tables_of("ex2", 1 | 23 << 4) == [(0, 23, 1 << 23), (1, 23, 1 << 23)]
    assert M.tables_of("sin", 1 | 23 << 4) == [(0, 23, 1 << 23)]
    assert M.tables_of("rsqrt", 0) == [(0, 0, 1 << 23), (1, 0, 1 << 23)]
    x = M.canonical_inputs("lg2", 1, 0, 4)
    assert list(x) == [0.5, 0.5 + 2.0 ** -24, 0.5 + 2 * 2.0 ** -24, 0.5 + 3 * 2.0 ** -24]
    assert list(M.canonical_inputs("ex2", 1, 2, 3)) == [-0.0, -0.25, -0.5]
    t = M.canonical_inputs("tanh", 0, 15, 1 << 17)                           # K = 8: 9 + 8 top bits
    assert struct.pack("<f", t[(1 << 16) + 5]) == struct.pack("<I", ((1 << 16) + 5) << 15)


def test_dry_run_writes_what_a_model_is_built_from(tmp_path):
    out = tmp_path / "sfu"
    assert M.main(["--out", str(out), "--dry-run", "--ops", "ex2,tanh"]) == 0
    doc = json.loads((out / "sfu.json").read_text())
    assert doc["environment"]["dry_run"] and doc["problems"] == []
    assert doc["f32"]["ex2"]["best"] == {"hyp": 1 | 20 << 4, "mismatches": 0, "exact": True}
    assert len(doc["f32"]["ex2"]["hypotheses"]) == 10
    kept = {(t["op"], t["table"]): t for t in doc["tables"]}
    assert set(kept) == {("ex2", "T0_F20"), ("ex2", "T1_F20"), ("tanh", "T0_K8")}
    meta = kept["ex2", "T1_F20"]
    blobs = {k: (out / "tables" / f"ex2.T1_F20.{k}.bz2").read_bytes() for k in ("ref", "err")}
    t = TB.decode(meta, blobs)                                               # the stand-in answers 2^-x exactly
    assert t[1 << 19] == np.float32(2.0 ** -0.5).view(np.uint32)
    with np.load(out / "f16_tables.npz") as z:
        assert sorted(z.files) == [f"op{i}" for i in range(8)]
    assert set(doc["compose"]) == {"ex2", "rcp", "rsqrt", "lg2", "sqrt"}


def test_table_budget_is_honoured(tmp_path):
    out = tmp_path / "sfu"
    assert M.main(["--out", str(out), "--dry-run", "--ops", "ex2", "--table-budget-mb", "0.01"]) == 0
    doc = json.loads((out / "sfu.json").read_text())
    assert [t["kept"] for t in doc["tables"]] == [False, False]
    assert not list((out / "tables").glob("*.bz2"))


def test_bad_ops_is_one_line_exit_2(tmp_path, capsys):
    assert M.main(["--out", str(tmp_path), "--dry-run", "--ops", "exp"]) == 2
    err = capsys.readouterr().err
    assert "unknown 'exp'" in err and len(err.strip().splitlines()) == 1


def test_commit_takes_only_a_gpu_measurement_with_the_tables_layoutsim_reads(tmp_path, capsys):
    from gpu_check.sfu import commit
    out = tmp_path / "sfu"
    assert M.main(["--out", str(out), "--dry-run", "--ops", "ex2"]) == 0
    assert commit.main([str(out), "--check"]) == 2
    assert "--dry-run result" in capsys.readouterr().err
    doc = json.loads((out / "sfu.json").read_text())
    doc["environment"]["dry_run"] = False                  # the stand-in's ex2 tables have 20 fraction bits
    (out / "sfu.json").write_text(json.dumps(doc))
    assert commit.main([str(out), "--check"]) == 2
    err = capsys.readouterr().err
    assert "table ex2.T0_F23 was not kept" in err and len(err.strip().splitlines()) == 1
    assert commit.main([str(tmp_path / "nothing"), "--check"]) == 2
    assert "has no sfu.json" in capsys.readouterr().err
