"""The text report lists the global-memory lines beside the shared ones: requests, sectors, the
ideal sectors (what the bytes asked for need) and the excess, sorted by the excess, so a kernel
whose only problem is an uncoalesced load shows it; the JSON has the same per line."""
import json

import pytest

from layoutsim.cli import main

PTX = r"""
.version 8.0
.target sm_90
.address_size 64

.visible .entry strided(.param .u64 in, .param .u64 out, .param .u32 stride)
{
	.reg .f32 %f<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	.loc 1 3 0
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	ld.param.u32 %r1, [stride];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %tid.x;
	mul.lo.s32 %r3, %r2, %r1;
	mul.wide.u32 %rd3, %r3, 4;
	add.s64 %rd4, %rd1, %rd3;
	.loc 1 5 5
	ld.global.f32 %f1, [%rd4];
	mul.wide.u32 %rd5, %r2, 4;
	add.s64 %rd6, %rd2, %rd5;
	.loc 1 6 5
	st.global.f32 [%rd6], %f1;
	ret;
}
	.file	1 "/src/strided.cu"
"""
LOAD, STORE = 22, 26          # the PTX lines of the load and the store


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "strided.ptx"
    path.write_text(PTX)
    return str(path)


def report(capsys, kernel, stride, *extra):
    rc = main(["ptx", "run", kernel, "--kernel", "strided", "--grid", "1", "--block", "64", "--arg",
               "arange:f32:2048", "--arg", "zeros:f32:64", "--arg", f"u32:{stride}", "--quiet", *extra])
    out, _ = capsys.readouterr()
    assert rc == 0
    return out


def global_rows(out):
    """{PTX line: (requests, sectors, ideal, excess)} of the global table."""
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("line  cuda") and "sectors" in ln)
    rows = {}
    for ln in lines[head + 1:]:
        f = ln.split()
        if not f[0].isdigit():
            break
        rows[int(f[0])] = tuple(int(v) for v in f[3:7])
    return rows, lines[head + 1]


def test_uncoalesced_load_shows_its_excess(capsys, kernel):
    out = report(capsys, kernel, 8)            # lane i reads float 8i: one 32-byte sector per lane
    assert "no shared-memory instructions executed" in out
    rows, first = global_rows(out)
    assert first.split()[:2] == [str(LOAD), "strided.cu:5"]          # the worst line first
    assert rows[LOAD] == (2, 64, 8, 56)        # 2 warps x 32 sectors; 128 bytes each = 4 sectors
    assert rows[STORE] == (2, 8, 8, 0)
    assert "global memory: 4 requests, 72 sectors (ideal 16)" in out
    assert max(len(ln) for ln in out.splitlines()) <= 100


def test_coalesced_load_is_ideal(capsys, kernel):
    rows, _ = global_rows(report(capsys, kernel, 1))
    assert rows[LOAD] == (2, 8, 8, 0) and rows[STORE] == (2, 8, 8, 0)


def test_json_per_line_ideal_sectors(capsys, kernel):
    rc = main(["ptx", "run", kernel, "--kernel", "strided", "--grid", "1", "--block", "64", "--arg",
               "arange:f32:2048", "--arg", "zeros:f32:64", "--arg", "u32:8", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    ld = next(s for s in doc["instructions"] if s["line"] == LOAD)
    assert (ld["sectors"], ld["ideal_sectors"], ld["excess_sectors"]) == (64, 8, 56)
    assert doc["global"]["ideal_sectors"] == 16


def test_all_lists_global_lines_in_program_order(capsys, kernel):
    rows, first = global_rows(report(capsys, kernel, 8, "--all"))
    assert list(rows) == [LOAD, STORE]
