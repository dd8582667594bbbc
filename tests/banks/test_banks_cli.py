"""`layoutsim banks` and `layoutsim swizzle-search`: output, JSON schema, exit codes, lazy numba."""
import json
import subprocess
import sys

import pytest

from layoutsim.cli import main


def run(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_banks_text(capsys):
    rc, out, _ = run(["banks", "--op", "ldmatrix.x4", "--addr", "(lane%8)*128 + (lane//8)*16"], capsys)
    assert rc == 0
    assert out.startswith("ldmatrix.x4 on sm_90: 32 wavefronts (ideal 4, 28 from bank conflicts)")
    assert "bank 0: 8 words" in out and "model: " in out


def test_banks_json_schema(capsys):
    rc, out, _ = run(["banks", "--op", "ld.shared.v4.b32", "--addr", "lane*16", "--json"], capsys)
    j = json.loads(out)
    assert rc == 0 and list(j) == ["op", "arch", "wavefronts", "ideal", "conflicts", "phases", "extrapolated", "notes"]
    assert (j["op"], j["arch"], j["wavefronts"], j["ideal"], j["conflicts"]) == ("ld.shared.v4.b32", "sm_90", 4, 4, 0)
    assert [p["lanes"] for p in j["phases"]] == [list(range(k, k + 8)) for k in range(0, 32, 8)]
    assert all(p["wavefronts"] == 1 for p in j["phases"])


def test_banks_offsets_active_and_vars(capsys):
    offs = ",".join(str(4 * 32 * i) for i in range(32))
    rc, out, _ = run(["banks", "--op", "ld.shared.b32", "--offsets", offs, "--active", "0-3,8", "--json"], capsys)
    assert json.loads(out)["wavefronts"] == 5
    rc, out, _ = run(["banks", "--op", "ldmatrix.x4", "--addr", "(lane%8)*stride", "--var", "stride=144", "--json"], capsys)
    assert json.loads(out)["wavefronts"] == 4
    rc, out, _ = run(["banks", "--op", "ld.shared.b32", "--offsets", ",".join(["_"] * 31 + ["64"]), "--json"], capsys)
    assert json.loads(out)["phases"][0]["lanes"] == [31]


def test_banks_tile_fragment_and_fill(capsys):
    frag = ["banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--dtype", "f16", "--fragment",
            "mma.m16n8k16.f32.f16.f16.f32:A", "--at", "16,16"]
    rc, out, _ = run(frag + ["--pad", "8", "--json"], capsys)
    assert json.loads(out)["wavefronts"] == 4
    rc, out, _ = run(frag + ["--json"], capsys)
    assert json.loads(out)["wavefronts"] == 16
    rc, out, _ = run(["banks", "--op", "st.shared.v4.b32", "--tile", "64x32", "--pad", "8", "--fill"], capsys)
    assert "total: 64 wavefronts (ideal 32, 32 from bank conflicts)" in out
    rc, out, _ = run(["banks", "--op", "st.shared.v4.b32", "--tile", "64x32", "--pad", "8", "--fill", "--json"], capsys)
    assert [a["wavefronts"] for a in json.loads(out)] == [8] * 8
    rc, out, _ = run(["banks", "--op", "st.shared.v4.b32", "--tile", "64x32", "--fill", "--index", "3", "--json"], capsys)
    assert json.loads(out)["wavefronts"] == 4
    rc, out, _ = run(["banks", "--op", "ldmatrix.x4", "--tile", "128x64", "--swizzle", "3,3,3", "--block", "16,32", "--json"], capsys)
    assert json.loads(out)["wavefronts"] == 4


def test_banks_amd_says_unverified(capsys):
    rc, out, _ = run(["banks", "--op", "ds_read_b128", "--arch", "gfx1100", "--addr", "lane*16"], capsys)
    assert rc == 0 and "unverified on hardware" in out and "{0-3,20-23}" in out
    rc, out, _ = run(["banks", "--op", "ds_read_b128", "--arch", "gfx1100", "--addr", "lane*16", "--json"], capsys)
    assert "unverified on hardware" in json.loads(out)["phases"][0]["source"]


@pytest.mark.parametrize("argv,needle", [
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*2"], "hardware faults"),
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*4 + 300000"], "beyond sm_90"),
    (["banks", "--op", "ld.shared.b32", "--offsets", "0,4,8"], "32 offsets"),
    (["banks", "--op", "ldmatrx.x4", "--addr", "lane*16"], "did you mean: ldmatrix.x4"),
    (["banks", "--op", "ld.shared.b32", "--addr", "__import__('os')"], "not allowed"),
    (["banks", "--op", "ld.shared.b32", "--addr", "lane", "--rules", "wide_ld=sometimes"], "wide_ld"),
    (["banks", "--op", "ld.shared.b32", "--tile", "8x8"], "one of --fragment"),
    (["banks", "--op", "ld.shared.b32", "--active", "0-40", "--addr", "lane*4"], "lanes 0-31"),
    (["swizzle-search", "--tile", "60x64"], "not a whole number"),
    (["swizzle-search", "--tile", "64"], "ROWSxCOLS"),
])
def test_bad_input_exit_2_one_line(argv, needle, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == ""
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_swizzle_search_cli(capsys):
    rc, out, _ = run(["swizzle-search", "--tile", "128x64", "--dtype", "f16", "--read", "ldmatrix.x4",
                      "--write", "st.shared.v4.b32", "--top", "3"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[2].split()[:3] == ["1", "Swizzle<3,3,3>", "128"]
    assert any("plain (no pad, no swizzle)" in line and "1152" in line for line in lines)
    rc, out, _ = run(["swizzle-search", "--tile", "128x64", "--json", "--top", "2"], capsys)
    j = json.loads(out)
    assert j["candidates"][0]["swizzle"] == [3, 3, 3] and j["baseline"]["total"] == 1152


def test_commands_do_not_import_numba():
    code = ("import sys; from layoutsim.cli import main; "
            "main(['query', 'mma.m16n8k16.f32.f16.f16.f32', '--operand', 'C', '--lane', '13']); "
            "main(['banks', '--op', 'ld.shared.v4.b32', '--addr', 'lane*16']); "
            "main(['swizzle-search', '--tile', '64x32']); "
            "assert 'numba' not in sys.modules, 'numba imported'")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
