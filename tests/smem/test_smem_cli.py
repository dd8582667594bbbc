"""`layoutsim desc`, `render --desc` and the code spellings of `swizzle-search`: output, JSON
schema, exit codes (0 sound / 1 problem / 2 bad input, one line)."""
import json
import subprocess
import sys

import pytest

from layoutsim.cli import main

F16 = "wgmma.m64n128k16.f32.f16.f16"
D128 = "0x4000004000010040"          # start 0x400, LBO 16, SBO 1024, 128B (PTX bit table)


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_decode_text(capsys):
    rc, out, _ = run(["desc", "decode", D128, "--instr", F16, "--operand", "A", "--rows", "2"], capsys)
    assert rc == 0
    assert "start        0x0040 x 16 = 0x400 (1024)" in out
    assert "SBO          0x0040 x 16 = 1024 bytes" in out
    assert "1 = 128B (Swizzle<3,4,3> on byte addresses, repeats every 1024 bytes)" in out
    assert "     0  0x00400    0x00410" in out          # row 0: chunks in order
    assert "     1  0x00490    0x00480" in out          # row 1: chunks swapped (c ^ 1)
    assert "... 62 more rows" in out


def test_decode_json_schema(capsys):
    rc, out, _ = run(["desc", "decode", D128, "--instr", F16, "--operand", "B", "--json"], capsys)
    j = json.loads(out)
    assert rc == 0 and list(j) == ["value", "fields", "swizzle", "reading", "notes", "confirmed", "operand"]
    assert j["fields"]["sbo"] == {"raw": 64, "bytes": 1024} and j["swizzle"]["cute"] == "Swizzle<3,4,3>"
    assert j["operand"]["shape"] == [16, 128] and j["operand"]["addresses"][0][1] == 0x490
    rc, out, _ = run(["desc", "decode", D128, "--json"], capsys)
    assert "operand" not in json.loads(out)


def test_encode_defaults_to_the_dense_tile(capsys):
    rc, out, _ = run(["desc", "encode", "--start", "0x400", "--swizzle", "128B", "--instr", F16, "--json"], capsys)
    assert json.loads(out)["value"] == "0x4000004000010040"
    rc, out, _ = run(["desc", "encode", "--start", "1024", "--lbo", "128", "--sbo", "256", "--json"], capsys)
    assert json.loads(out)["value"] == "0x0000001000080040"


def test_check_exit_codes(capsys):
    rc, out, _ = run(["desc", "check", D128, "--instr", F16], capsys)
    assert rc == 0 and out.rstrip().endswith("sound: no problem found")
    rc, out, _ = run(["desc", "check", "0x4000004000010048", "--instr", F16], capsys)
    assert rc == 1 and "PROBLEM [alignment] start:" in out
    rc, out, _ = run(["desc", "check", D128, "--instr", F16, "--tma-box", "32x64", "--tma-swizzle", "64B",
                      "--json"], capsys)
    j = json.loads(out)
    assert rc == 1 and not j["sound"] and {p["kind"] for p in j["problems"]} == {"tma"}
    rc, out, _ = run(["desc", "check", D128, "--instr", F16, "--operand", "B",
                      "--other", "0x4000004000010040"], capsys)
    assert rc == 1 and "PROBLEM [overlap]" in out


def test_check_the_innermost_tma_coordinate(capsys):
    """The H200 faulted on boxes starting 3, 8 and 4 bytes into a 16-byte unit (tests/data/
    descriptors/tma_sm_90.npz); f16 coordinate 4 is 8 bytes, 8 is 16."""
    box = ["--instr", F16, "--tma-box", "64x64", "--tma-swizzle", "128B"]
    rc, out, _ = run(["desc", "check", D128, *box, "--tma-coords", "8,0"], capsys)
    assert rc == 0 and "TMA rule: TMA pitch=span anchor=absolute (confirmed on NVIDIA H200" in out
    rc, out, _ = run(["desc", "check", D128, *box, "--tma-coords", "4,0"], capsys)
    problems = [ln for ln in out.splitlines() if ln.startswith("PROBLEM")]
    assert rc == 1 and problems == ["PROBLEM [fault] tma_coords: TMA coordinate c0=4 x 2 B = 8 bytes: the innermost "
                                    "coordinate must start on a multiple of 16 bytes (the H200 faults with an "
                                    "illegal instruction otherwise)"]
    rc, out, _ = run(["desc", "check", D128, *box, "--tma-coords", "4,0", "--json"], capsys)
    j = json.loads(out)
    assert rc == 1 and j["tma"]["coords"] == [4, 0] and j["tma"]["reading"] == {"pitch": "span", "anchor": "absolute"}
    assert [(p["kind"], p["field"]) for p in j["problems"]] == [("fault", "tma_coords")]


@pytest.mark.parametrize("argv, text", [
    (["desc", "decode", "0xzz"], "descriptor wants an integer, not '0xzz'"),
    (["desc", "decode", "0x10000000000000000"], "descriptor 18446744073709551616 is out of range"),
    (["desc", "decode", D128, "--instr", F16, "--rows", "0"], "--rows 0 is out of range; valid: 1..4096"),
    (["desc", "decode", D128, "--rows", "3"], "--rows does not apply without --instr"),
    (["desc", "check", D128, "--instr", F16, "--tma-swizzle", "128B", "--tma-at", "1,1"],
     "--tma-swizzle, --tma-at do not apply without --tma-box"),
    (["desc", "encode", "--start", "0", "--lbo", "0", "--sbo", "0", "--base-offset", "8"], "--base-offset 8 is out"),
    (["desc", "encode", "--start", "8", "--lbo", "0", "--sbo", "0"], "start=8: must be a multiple of 16"),
    (["desc", "encode", "--start", "0"], "give --lbo and --sbo, or --instr"),
    (["desc", "encode", "--start", "0", "--lbo", "0", "--sbo", "0", "--swizzle", "96B"], "unknown swizzle mode '96B'"),
    (["desc", "check", D128, "--instr", F16, "--operand", "C"], "valid: A, B"),
    (["desc", "check", D128, "--instr", "wgmma.m64n64k8.f32.tf32.tf32", "--trans"], "only for .f16/.bf16"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64x64", "--tma-swizzle", "64B"], "at most 64 bytes"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64"], "(2 or 3 dimensions)"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64x300"], "--tma-box dimension 300 is out of range"),
    (["desc", "check", D128, "--instr", F16, "--tma-coords", "4,0"], "--tma-coords needs --tma-box"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64x64", "--tma-coords", "4"], "wants 2 integers"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64x64", "--tma-coords", "0,4294967296"],
     "--tma-coords 4294967296 is out of range"),
    (["desc", "check", D128, "--instr", F16, "--tma-box", "64x64", "--tma-at", "1"], "--tma-at wants ROW,COL"),
    (["desc", "decode", D128, "--instr", "mma.m16n8k16.f32.f16.f16.f32"], "not a wgmma"),
    (["render", F16, "--operand", "A", "--desc", "0x40000040000100400"], "--desc 73786980692885767168 is out of range"),
    (["desc", "encode", "--start", "-16", "--lbo", "0", "--sbo", "0"], "--start -16 is out of range; valid: 0..262128"),
    (["desc", "encode", "--start", "0", "--lbo", "0x40000", "--sbo", "0"], "--lbo 262144 is out of range; valid: 0..262128"),
    (["desc", "encode", "--start", "0", "--lbo", "0", "--sbo", "-1"], "--sbo -1 is out of range; valid: 0..262128"),
    (["render", F16, "--operand", "A", "--desc", "0x4000004000013800"],
     "A descriptor Descriptor(start=0x38000, lbo=16, sbo=1024, swizzle=128B) = 0x4000004000013800 puts A[24][0] at "
     "address 0x38c00, outside shared memory"),
])
def test_bad_input_is_one_line_exit_2(argv, text, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and text in err, err


def test_render_descriptor_tile(tmp_path, capsys):
    path = tmp_path / "a.svg"
    rc, out, _ = run(["render", F16, "--operand", "A", "--desc", D128, "-o", str(path), "--json"], capsys)
    j = json.loads(out)
    assert rc == 0 and j["kind"] == "descriptor" and j["words"] == 64 * 16 // 2
    assert j["rows"][:2] == [0x400, 0x480]
    svg = path.read_text()
    assert "m1" in svg and "k8-9" in svg and "bank 4" in svg


def test_swizzle_search_prints_code(capsys):
    rc, out, _ = run(["swizzle-search", "--tile", "64x64", "--top", "2"], capsys)
    assert rc == 0
    assert "#1 Swizzle<3,3,3>: TMA/wgmma 128B; C++: (row * 64 + col) ^ (((row * 64 + col) >> 3) & 0x38)" in out
    rc, out, _ = run(["swizzle-search", "--tile", "64x64", "--top", "2", "--json"], capsys)
    j = json.loads(out)
    assert j["candidates"][0]["tma_wgmma"] == "128B" and j["baseline"]["tma_wgmma"] == "none"
    assert j["candidates"][1]["cute"] is None and j["candidates"][1]["cxx"] == "row * 72 + col"


def test_desc_does_not_import_numba():
    code = ("import sys; from layoutsim.cli import main; main(['desc', 'decode', '" + D128 + "']); "
            "assert 'numba' not in sys.modules, 'numba imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_check_a_tma_destination_outside_shared_memory(capsys):
    box = ["--instr", F16, "--tma-box", "64x64", "--tma-swizzle", "128B"]
    rc, out, _ = run(["desc", "check", D128, *box, "--tma-dst", "0x38c00"], capsys)
    problems = [ln for ln in out.splitlines() if ln.startswith("PROBLEM")]
    assert rc == 1 and problems == ["PROBLEM [fault] tma_dst: TMA destination 0x38c00: the 64x64 box of 2-byte "
                                    "elements (128B swizzle) lands on bytes up to 0x3abff, outside shared memory "
                                    "(232448 bytes per block on sm_90: 0..0x38bff): the copy would fault"]
    rc, out, _ = run(["desc", "check", D128, *box, "--tma-dst", "0x400", "--smem-bytes", "4096", "--json"], capsys)
    j = json.loads(out)
    assert rc == 1 and [(p["kind"], p["field"]) for p in j["problems"]] == [("fault", "lbo/sbo"), ("fault", "tma_dst")]


def test_encode_takes_the_largest_field_value(capsys):
    """start, LBO and SBO keep bits 4-17 of the byte value (PTX ISA 9.7.15.5.1.2.2): 0x3fff0 is the most."""
    rc, out, _ = run(["desc", "encode", "--start", "0x3fff0", "--lbo", "0x3fff0", "--sbo", "0", "--json"], capsys)
    assert rc == 0 and json.loads(out)["value"] == "0x000000003fff3fff"


def test_render_refuses_a_descriptor_outside_shared_memory_with_the_check_line(capsys):
    bad = "0x4000004000013800"
    rc, out, _ = run(["desc", "check", bad, "--instr", F16, "--operand", "A", "--json"], capsys)
    line = json.loads(out)["problems"][0]["message"]
    rc, out, err = run(["render", F16, "--operand", "A", "--desc", bad, "-o", "/nonexistent/never.svg"], capsys)
    assert rc == 2 and out == "" and err.strip() == f"layoutsim: error: {line}"
