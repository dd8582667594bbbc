"""`layoutsim query / show / list`: output, JSON schema, and one-line errors with exit 2."""
import json
import subprocess
import sys

import pytest

from layoutsim.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_query_lane_text(capsys):
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--lane", "13")
    assert code == 0
    for name, elem in (("c0", "C[3][2]"), ("c1", "C[3][3]"), ("c2", "C[11][2]"), ("c3", "C[11][3]")):
        assert any(name in line and elem in line for line in out.splitlines())


def test_query_json_schema_exact(capsys):
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "A",
                       "--lane", "13", "--json")
    doc = json.loads(out)
    assert set(doc) == {"instruction", "arch", "operand", "entries"}
    assert doc["instruction"] == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    assert all(set(e) == {"lane", "reg", "slot", "name", "matrix", "row", "col"} for e in doc["entries"])
    assert doc["entries"][1] == {"lane": 13, "reg": 0, "slot": 1, "name": "a1", "matrix": 0, "row": 3, "col": 3}


# Values, not only keys. PTX ISA 9.0, 9.7.14.5.8 (m16n8k16, .f16): B is held as b0..b3 with
# row = threadID_in_group*2 + (i & 1) (+8 for b2, b3), col = groupID; lane 5 is groupID 1,
# threadID_in_group 1. The arch is the one asked for, not the instruction's first (sm_80).
def test_query_json_values(capsys):
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "B",
                       "--lane", "5", "--arch", "sm_90", "--json")
    assert code == 0
    assert json.loads(out) == {
        "instruction": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "arch": "sm_90",
        "operand": "B", "entries": [
            {"lane": 5, "reg": reg, "slot": slot, "name": f"b{2 * reg + slot}", "matrix": 0,
             "row": 2 + slot + 8 * reg, "col": 1} for reg in (0, 1) for slot in (0, 1)]}
    # without --arch the first arch the instruction exists on is reported
    _, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--lane", "0", "--json")
    assert json.loads(out)["arch"] == "sm_80" and json.loads(out)["operand"] == "C"
    # an operand named like its format must still report the operand: wgmma D is f32
    _, out, _ = run(capsys, "query", "wgmma.m64n8k16.f32.f16.f16", "--operand", "D", "--lane", "45",
                    "--arch", "sm_90", "--json")
    doc = json.loads(out)
    assert (doc["arch"], doc["operand"]) == ("sm_90", "D")
    # PTX ISA 9.7.15.5.1: lane 45 is warp 1 (rows 16..31), groupID 3, threadID_in_group 1
    assert [(e["name"], e["row"], e["col"]) for e in doc["entries"]] == [
        ("d0", 19, 2), ("d1", 19, 3), ("d2", 27, 2), ("d3", 27, 3)]
    # the inverse query names the element's holders with the same values
    _, out, _ = run(capsys, "query", "ldmatrix.x4.trans", "--element", "5,2", "--matrix", "1", "--json")
    doc = json.loads(out)
    assert (doc["operand"], doc["arch"]) == ("R", "sm_75")
    # .trans: lane L holds column L/4, rows 2(L%4), 2(L%4)+1 -> element (5, 2) is lane 10 hi half
    assert [(e["lane"], e["reg"], e["slot"], e["name"], e["matrix"], e["row"], e["col"])
            for e in doc["entries"]] == [(10, 1, 1, "r1.hi", 1, 5, 2)]


def test_query_text_modes(capsys):
    # the text output of each mode, with values (PTX ISA 9.7.14.5.8 and .7, as above)
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--element", "11,3")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32  [sm_80]"
    assert lines[1] == "operand C: 16x8 f32, 4 x 32-bit registers per lane (1 element each), 32 lanes"
    assert lines[-2:] == ["C[11][3] is held by:", "  lane  13  c3 = C[11][3]       (reg 3)"]
    code, out, _ = run(capsys, "query", "mma.m16n8k8.f32.tf32.tf32.f32", "--operand", "B")
    body = [ln for ln in out.splitlines() if ln.startswith("  lane")]
    assert code == 0 and len(body) == 64 and "holds" not in out and "held by" not in out
    assert body[:3] == ["  lane   0  b0 = B[0][0]        (reg 0)", "  lane   0  b1 = B[4][0]        (reg 1)",
                        "  lane   1  b0 = B[1][0]        (reg 0)"]
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "A", "--lane", "13")
    assert code == 0 and "lane 13 holds:\n  lane  13  a0 = A[3][2]        (reg 0 bits 0-15)\n" in out


def test_query_element_and_all(capsys):
    _, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--element", "11,3", "--json")
    assert [(e["lane"], e["name"]) for e in json.loads(out)["entries"]] == [(13, "c3")]
    _, out, _ = run(capsys, "query", "ldmatrix.x4", "--element", "2,5", "--matrix", "3", "--json")
    assert [(e["lane"], e["reg"], e["slot"]) for e in json.loads(out)["entries"]] == [(10, 3, 1)]
    _, out, _ = run(capsys, "query", "mma.m16n8k8.f32.tf32.tf32.f32", "--operand", "B", "--json")
    assert len(json.loads(out)["entries"]) == 8 * 8


def test_show_grid(capsys):
    code, out, _ = run(capsys, "show", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "A")
    assert code == 0
    row11 = [line for line in out.splitlines() if line.strip().startswith("11 ")][0]
    assert row11.split()[1:5] == ["T12:a2", "T12:a3", "T13:a2", "T13:a3"]
    _, out, _ = run(capsys, "show", "ldmatrix.x1", "--json")
    assert json.loads(out)["grid"][0][2][1] == "T8:r0.hi"


def test_list(capsys):
    _, out, _ = run(capsys, "list", "--arch", "sm_80", "--json")
    names = [e["name"] for e in json.loads(out)["instructions"]]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in names
    assert not any(n.startswith(("stmatrix", "wgmma")) for n in names)
    assert not any("e4m3" in n for n in names)
    _, out, _ = run(capsys, "list", "--arch", "sm_90", "--family", "wgmma")
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in out


@pytest.mark.parametrize("argv,needle", [
    (["query", "mma.m16n8k16.f32.f16.f16.f33", "--operand", "C", "--lane", "1"], "did you mean"),
    (["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "Q", "--lane", "1"], "has no operand 'Q'"),
    (["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--lane", "32"], "lane 32 out of range"),
    (["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--element", "16,0"], "outside"),
    (["query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "C", "--element", "x"], "ROW,COL"),
    (["query", "wgmma.m64n64k16.f32.f16.f16", "--operand", "D", "--lane", "128"], "lanes 0-127"),
    (["query", "stmatrix.x4", "--arch", "sm_80", "--lane", "1"], "introduced with sm_90"),
    (["list", "--arch", "sm_91"], "unknown arch"),
    (["query", "ldmatrix.x4", "--matrix", "4", "--element", "0,0"], "outside"),
])
def test_errors_one_line_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_console_entry_point_no_traceback_and_no_numba():
    # A real process: the error path prints one line, and a query never imports numba.
    code = ("import sys, runpy; sys.argv=['layoutsim','query','mma.m16n8k16.f32.f16.f16.f32',"
            "'--operand','C','--lane','13'];\n"
            "from layoutsim.cli import main; rc = main(sys.argv[1:]);\n"
            "assert 'numba' not in sys.modules, 'numba imported on the query path'; sys.exit(rc)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "layoutsim.cli", "query", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.startswith("layoutsim: error: unknown instruction 'nope'")


def test_family_wmma_lists_amd_and_nvcuda_wmma(capsys):
    code, out, _ = run(capsys, "list", "--family", "wmma", "--json")
    fams = {e["family"] for e in json.loads(out)["instructions"]}
    assert code == 0 and fams == {"wmma", "wmma.load"}
    code, out, _ = run(capsys, "list", "--family", "wmma.load", "--json")
    assert {e["vendor"] for e in json.loads(out)["instructions"]} == {"nvidia"}


def test_measured_wmma_map_is_not_said_to_be_introduced_with_sm_90(capsys):
    # nvcuda::wmma exists from sm_70 (clang BuiltinsNVPTX.def: __hmma_* need sm_70); only the
    # map is measured on sm_90
    code, _, err = run(capsys, "query", "wmma.load.a.row.m16n16k16.f16", "--arch", "sm_80", "--lane", "0")
    assert code == 2 and "introduced with" not in err and "from sm_70" in err and "measured" in err


def test_amd_wmma_query_and_show_say_what_backs_the_arithmetic(capsys):
    """An AMD WMMA whose arithmetic replays AMD's gfx1201 captures says so (the counts CI replays,
    GFX12_CAPTURES); where no capture covers it (fp8 WMMA, gfx11 f16 results, SWMMAC floats) the
    same line says UNVERIFIED. Other families print no such line."""
    from layoutsim.numerics.profiles import GFX12_CAPTURES
    code, out, _ = run(capsys, "query", "v_wmma_f32_16x16x16_f16", "--arch", "gfx1201", "--operand", "A",
                       "--lane", "0")
    line = next(ln for ln in out.splitlines() if ln.startswith("arithmetic (layoutsim.mma): "))
    assert code == 0 and f"matches {GFX12_CAPTURES['dot2']} DOT2 and {GFX12_CAPTURES['wmma']} WMMA" in line
    assert "captured on AMD hardware (gfx1201" in line and "UNVERIFIED" not in line
    for argv in (("show", "v_wmma_f32_16x16x16_fp8_fp8", "--arch", "gfx1201", "--operand", "D", "--json"),
                 ("query", "v_wmma_f16_16x16x16_f16", "--arch", "gfx1100", "--operand", "D", "--json"),
                 ("query", "v_swmmac_f32_16x16x32_f16", "--arch", "gfx1201", "--operand", "A", "--json")):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "UNVERIFIED ASSUMPTION" in json.loads(out)["arithmetic"], argv
    code, out, _ = run(capsys, "query", "v_wmma_i32_16x16x16_iu8", "--arch", "gfx1201", "--operand", "A", "--json")
    assert "captured on AMD hardware" in json.loads(out)["arithmetic"]
    code, out, _ = run(capsys, "query", "mma.m16n8k16.f32.f16.f16.f32", "--operand", "A", "--lane", "0")
    assert "arithmetic" not in out
