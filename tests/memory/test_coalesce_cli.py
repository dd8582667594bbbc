"""`layoutsim coalesce`: text, --json schema, the --stride table, the picture, one-line errors.

Expected counts: the Best Practices Guide's 32-byte segments (sequential 4-byte words: 4 per
warp; stride s words: min(4 s, 32)) and Nsight Compute's one request per instruction; see
test_memory_model.py for the sources."""
import json
import subprocess
import sys

import pytest

from layoutsim.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_text_report(capsys):
    rc, out, _ = run(capsys, "coalesce", "--op", "ld.global.b32", "--addr", "lane*8", "--active", "0-15")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == ("ld.global.b32 on sm_90: 1 request, 4 sectors of 32 B (ideal 2), 1 line of 128 B, "
                        "1 wavefront")
    assert lines[1] == "16 active lanes ask for 64 B; 128 B of sectors move (50% used)"
    assert lines[3] == "  lanes  0-15  0 0 0 0 1 1 1 1 2 2 2 2 3 3 3 3"
    assert lines[4] == "  lanes 16-31  " + " ".join(["."] * 16)
    assert "sector  3 at 0x00060 (line 0x00000): lanes 12-15" in out


def test_json_schema(capsys):
    rc, out, _ = run(capsys, "coalesce", "--op", "ld.global.v4.b32", "--addr", "lane*32", "--json")
    d = json.loads(out)
    assert rc == 0 and list(d) == ["op", "arch", "vendor", "active_lanes", "requests", "sectors",
                                   "ideal_sectors", "lines", "wavefronts", "excess_sectors", "sector_bytes",
                                   "bytes_requested", "bytes_fetched", "sector_lanes", "rule", "source", "status",
                                   "extrapolated", "notes"]
    assert (d["requests"], d["sectors"], d["ideal_sectors"], d["lines"], d["wavefronts"]) == (1, 32, 16, 8, 2)
    assert d["sector_lanes"][1] == {"sector": 32, "lanes": [1]}


def test_stride_table_is_the_segment_count(capsys):
    rc, out, _ = run(capsys, "coalesce", "--op", "ld.global.b32", "--stride", "--json")
    t = json.loads(out)
    assert rc == 0 and [r["stride"] for r in t["rows"]] == [1, 2, 4, 8, 16, 32]
    assert [r["sectors"] for r in t["rows"]] == [min(4 * s, 32) for s in (1, 2, 4, 8, 16, 32)]
    assert {r["requests"] for r in t["rows"]} == {1} and {r["ideal_sectors"] for r in t["rows"]} == {4}
    rc, out, _ = run(capsys, "coalesce", "--op", "ld.global.v4.b32", "--stride", "0,1,2", "--base", "64")
    lines = out.splitlines()
    assert rc == 0 and lines[0] == "ld.global.v4.b32 on sm_90: lane L at 64 + L*stride*width (sectors of 32 B)"
    assert lines[2].split() == ["0", "0", "1", "1", "1", "1", "1", "1.0"]        # H200 #66: ideal 1
    assert lines[3].split() == ["1", "16", "1", "16", "16", "5", "2", "16.0"]   # bytes 64..575: sectors 2..17, lines 0..4


def test_amd_stride_table(capsys):
    rc, out, _ = run(capsys, "coalesce", "--op", "global_load_b32", "--arch", "gfx1201", "--stride", "1,32")
    lines = out.splitlines()
    assert rc == 0 and lines[2].split() == ["1", "4", "1", "2", "2", "1", "-", "2.0"]
    assert lines[3].split() == ["32", "128", "32", "32", "2", "32", "-", "1.0"]
    assert "unverified on hardware" in out


def test_picture(capsys, tmp_path):
    path = tmp_path / "s.svg"
    rc, out, _ = run(capsys, "coalesce", "--op", "st.global.v2.b32", "--addr", "lane*24", "--picture", str(path),
                     "--json")
    d = json.loads(out)
    assert rc == 0 and d["picture"]["format"] == "svg" and d["picture"]["lines_drawn"] == d["lines"] == 6
    svg = path.read_text()
    assert "<svg" in svg and "st.global.v2.b32 on sm_90" in svg and ">31<" in svg


def test_list_ops(capsys):
    rc, out, _ = run(capsys, "coalesce", "--list-ops")
    assert rc == 0 and "ld.global.nc.v4.b32" in out and "cp.async.cg.shared.global.16" in out
    assert "AMD (with --arch gfx1100..gfx1201): global_load_u8" in out


@pytest.mark.parametrize("argv,message", [
    (["--op", "ld.global.b32"], "give the addresses: --addr EXPR, --offsets LIST or --stride [LIST]"),
    (["--addr", "lane*4"], "give --op"),
    (["--op", "ld.global.b32", "--stride", "1,x"], "--stride wants comma-separated element strides"),
    (["--op", "ld.global.b32", "--stride", "-1"], "--stride: 1 to 64 strides"),
    (["--op", "ld.global.b32", "--addr", "lane*4", "--base", "64"], "--base is for --stride tables"),
    (["--op", "ld.global.b32", "--offsets", "0,4"], "takes one offset per lane: 32 offsets, not 2"),
    (["--op", "ld.global.b32", "--addr", "lane*4", "--rules", "ideal=most"], "rule ideal='most'"),
    (["--op", "ld.global.b32", "--stride", "--picture", "x.svg"], "--picture draws one access"),
    (["--op", "ld.global.b32", "--addr", "lane*4", "--format", "svg"], "--format is for --picture FILE"),
    (["--op", "ld.global.b32", "--addr", "lane*4", "--var", "s=2x"], "cannot parse expression"),
    (["--op", "ld.global.b32", "--addr", "lane*4", "--active", "40"], "lane 40 out of range in '40': a warp has lanes 0-31"),
])
def test_bad_input_one_line_exit_2(capsys, argv, message):
    rc, out, err = run(capsys, "coalesce", *argv)
    assert rc == 2 and out == "" and message in err and err.count("\n") == 1


def test_cli_process_no_numba_no_traceback():
    code = ("import sys; from layoutsim.cli import main; rc = main(['coalesce', '--op', 'ld.global.b32', "
            "'--addr', 'lane*4', '--json']); assert 'numba' not in sys.modules; sys.exit(rc)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and json.loads(p.stdout)["sectors"] == 4


def test_picture_title_is_the_report_line(capsys, tmp_path):
    """One wavefront, one line, one request: singular words, the same line the text prints."""
    path = tmp_path / "one.svg"
    rc, out, _ = run(capsys, "coalesce", "--op", "ld.global.b32", "--addr", "lane*4", "--picture", str(path))
    head = out.splitlines()[0]
    assert rc == 0 and head == "ld.global.b32 on sm_90: 1 request, 4 sectors of 32 B (ideal 4), 1 line of 128 B, 1 wavefront"
    assert f"<title>{head}</title>" in path.read_text() or f">{head}<" in path.read_text()
    assert "1 wavefronts" not in path.read_text() and "1 lines" not in path.read_text()


def test_picture_into_a_missing_folder_is_refused_and_creates_nothing(capsys, tmp_path):
    target = tmp_path / "some" / "missing" / "dir" / "x.svg"
    rc, out, err = run(capsys, "coalesce", "--op", "ld.global.b32", "--addr", "lane*4", "--picture", str(target))
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert f"folder {target.parent} does not exist (create it first)" in err
    assert not (tmp_path / "some").exists()
