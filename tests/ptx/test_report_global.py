"""The text report lists the global-memory lines beside the shared ones: requests, sectors, the
ideal sectors (what the bytes asked for need) and the excess, sorted by the excess, so a kernel
whose only problem is an uncoalesced load shows it; the JSON has the same per line."""
import json

from report_kernels import KERNEL, line_of

from layoutsim.cli import main

LOAD, STORE = line_of("strided", "ld.global"), line_of("strided", "st.global")


def report(capsys, stride, *extra):
    rc = main(["ptx", "run", KERNEL, "--kernel", "strided", "--grid", "1", "--block", "64", "--arg",
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


def test_uncoalesced_load_shows_its_excess(capsys):
    out = report(capsys, 8)            # lane i reads float 8i: one 32-byte sector per lane
    assert "no shared-memory instructions executed" in out
    rows, first = global_rows(out)
    assert first.split()[:2] == [str(LOAD), "report.cu:22"]          # the worst line first
    assert rows[LOAD] == (2, 64, 8, 56)        # 2 warps x 32 sectors; 128 bytes each = 4 sectors
    assert rows[STORE] == (2, 8, 8, 0)
    assert "global memory: 4 requests, 72 sectors (ideal 16)" in out
    assert max(len(ln) for ln in out.splitlines()) <= 100


def test_coalesced_load_is_ideal(capsys):
    rows, _ = global_rows(report(capsys, 1))
    assert rows[LOAD] == (2, 8, 8, 0) and rows[STORE] == (2, 8, 8, 0)


def test_json_per_line_ideal_sectors(capsys):
    rc = main(["ptx", "run", KERNEL, "--kernel", "strided", "--grid", "1", "--block", "64", "--arg",
               "arange:f32:2048", "--arg", "zeros:f32:64", "--arg", "u32:8", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    assert rc == 0
    ld = next(s for s in doc["instructions"] if s["line"] == LOAD)
    assert (ld["sectors"], ld["ideal_sectors"], ld["excess_sectors"]) == (64, 8, 56)
    assert doc["global"]["ideal_sectors"] == 16


def test_all_lists_global_lines_in_program_order(capsys):
    rows, first = global_rows(report(capsys, 8, "--all"))
    assert list(rows) == [LOAD, STORE]
