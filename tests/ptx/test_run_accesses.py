"""Run.accesses(line): the lanes and addresses of a memory line's first warp executions (a
bounded sample), Run.render_access: one of them over banks or sectors, and `ptx run --show-line
LINE [--picture FILE]` on the command line."""
import json
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim import archs
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError
from layoutsim.ptx.samples import PER_LINE

ROOT = Path(__file__).resolve().parents[2]
TRANSPOSE = ROOT / "docs" / "examples" / "transpose.sm_90.ptx"
COLUMN_READ, ROW_LOAD = 198, 111        # ld.shared.f32 of a column (transpose.cu:9), ld.global.f32 (:7)


@pytest.fixture(scope="module")
def run():
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    return P.run(TRANSPOSE.read_text(), "transpose_conflicts", (2, 2), (32, 8),
                 [x, np.zeros((64, 64), np.float32), np.int32(64)])


def test_a_conflicting_lines_lanes(run):
    recs = run.accesses(COLUMN_READ)
    line = next(s for s in run.instructions if s.line == COLUMN_READ)
    assert line.executions == 32 and len(recs) == PER_LINE          # the first executions only
    first = recs[0]
    assert first["space"] == "shared" and first["op"] == "ld.shared.b32" and first["cuda"]["line"] == 9
    assert first["cta"] == [0, 0, 0] and first["warp"] == 0 and first["mask"] == 0xFFFFFFFF
    s0 = archs.user_smem_base("sm_90")         # the tile's shared address: after the reserved KiB
    assert first["addresses"] == [s0 + 128 * lane for lane in range(32)]    # one bank for the whole warp
    assert (first["wavefronts"], first["ideal"]) == (32, 1)
    assert [r["warp"] for r in recs] == list(range(8))
    assert recs[1]["addresses"][0] == s0 + 4                            # warp 1 reads the next column


def test_a_global_line_and_a_cuda_line(run):
    g = run.accesses(ROW_LOAD)[0]
    assert g["space"] == "global" and (g["requests"], g["sectors"], g["ideal_sectors"]) == (1, 4, 4)
    assert np.array_equal(np.diff(g["addresses"]), [4] * 31)
    by_cuda = run.accesses("transpose.cu:9")
    assert {r["cuda"]["line"] for r in by_cuda} == {9} and COLUMN_READ in {r["ptx_line"] for r in by_cuda}
    with pytest.raises(LayoutsimError, match=r"line 5: no such line; the PTX lines with sampled accesses are "
                                             r"111, .*198"):
        run.accesses(5)


def test_pictures(run, tmp_path):
    rec = run.render_access(COLUMN_READ, tmp_path / "banks.svg")
    assert rec["kind"] == "banks" and rec["accesses"][0]["wavefronts"] == 32 and rec["ptx_line"] == COLUMN_READ
    assert "PTX line 198" in (tmp_path / "banks.svg").read_text()
    rec = run.render_access(ROW_LOAD, tmp_path / "sectors.svg", execution=1)
    assert rec["sectors"] == 4 and (tmp_path / "sectors.svg").stat().st_size > 0
    with pytest.raises(LayoutsimError, match=r"execution 8: line 111 has 8 sampled execution\(s\)"):
        run.render_access(ROW_LOAD, tmp_path / "x.svg", execution=8)


def test_show_line_on_the_command_line(capsys, tmp_path):
    argv = ["ptx", "run", str(TRANSPOSE), "--kernel", "transpose_conflicts", "--grid", "2", "--block", "32,8",
            "--arg", "arange:f32:64x64", "--arg", "zeros:f32:64x64", "--arg", "i32:64", "--show-line", "198"]
    assert main(argv + ["--json", "--picture", str(tmp_path / "p.svg")]) == 0
    doc = json.loads(capsys.readouterr()[0])
    assert len(doc["accesses"]) == PER_LINE and doc["accesses"][0]["wavefronts"] == 32
    assert doc["picture"]["file"] == str(tmp_path / "p.svg") and (tmp_path / "p.svg").exists()
    assert main(argv + ["--quiet"]) == 0
    out = capsys.readouterr()[0]
    assert "line 198 (transpose.cu:9) ld.shared.f32 %f7, [%r137+-64] (ld.shared.b32): first 8 warp" in out
    assert "  CTA (0, 0, 0) warp 0, lanes 0xffffffff: 32 wavefronts (ideal 1):" in out
    assert max(len(ln) for ln in out.splitlines()) <= 100
    assert main(argv[:-2] + ["--picture", str(tmp_path / "q.svg")]) == 2
    assert "--show-line" in capsys.readouterr()[1] and not (tmp_path / "q.svg").exists()
    assert main(argv + ["--picture", str(tmp_path / "p.bmp")]) == 2          # refused before the run
    assert "name a .svg, .html or .png file" in capsys.readouterr()[1]


def test_samples_are_kept_as_arrays_and_read_the_same_in_every_way(run):
    """The samples are made into rows when first read (samples.Samples.rows): the same rows from a
    pickled run, from a run split over processes (jobs=2, Samples.merge), and the run holds no batch."""
    import pickle
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    args = [x, np.zeros((64, 64), np.float32), np.int32(64)]
    fresh = P.run(TRANSPOSE.read_text(), "transpose_conflicts", (2, 2), (32, 8), args)
    assert fresh.__dict__["_samples"].batch is None                  # not read yet: no batch held
    assert pickle.loads(pickle.dumps(fresh)).samples == run.samples == fresh.samples
    split = P.run(TRANSPOSE.read_text(), "transpose_conflicts", (2, 2), (32, 8), args, jobs=2, batch_threads=256)
    one = P.run(TRANSPOSE.read_text(), "transpose_conflicts", (2, 2), (32, 8), args, batch_threads=256)
    assert split.samples == one.samples and sum(map(len, one.samples)) > 0
