"""No option is silently ignored (issue 14): in every mode of every `layoutsim` subcommand, each
of the subcommand's options, given with a value that would matter, either changes what the
command prints and writes, or is refused with exit code 2 and one line naming it.

The options are read from the parser itself (every subcommand in layoutsim.cli.COMMANDS, every
option it has), so an option added later must be given a sample value in SAMPLES, and then it
is checked in every mode, with nothing else to update: the class, not a list of cases.
"""
import argparse
import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from layoutsim.cli import COMMANDS, build_parser, main
from tool_needs import missing

ROOT = Path(__file__).resolve().parents[2]
MMA = "mma.m16n8k16.f32.f16.f16.f32"
WGMMA = "wgmma.m64n64k16.f32.f16.f16"
DESC = "0x4000004000010040"
TRANSPOSE = str(ROOT / "docs" / "examples" / "transpose.sm_90.ptx")
PIC = "pic.svg"
SECONDS = re.compile(r'\d+\.\d+ s\b|"seconds": [\d.e-]+')     # timings differ from run to run

# (subcommand path, mode, base command line: it succeeds, and every option below is tried on it)
MODES = [
    (("query",), "lane", [MMA, "--operand", "A", "--lane", "3"]),
    (("query",), "element", ["ldmatrix.x4", "--element", "2,5"]),
    (("show",), "nvidia", [MMA, "--operand", "A"]),
    (("show",), "amd", ["v_wmma_f32_16x16x16_f16", "--arch", "gfx1201", "--operand", "A"]),
    (("list",), "family", ["--family", "wgmma"]),
    (("banks",), "addr", ["--op", "ld.shared.v4.b32", "--addr", "lane*s", "--var", "s=16"]),
    (("banks",), "tile", ["--op", "st.shared.v4.b32", "--tile", "64x32", "--fill", "--index", "1"]),
    (("banks",), "fragment", ["--op", "ldmatrix.x4", "--tile", "64x32", "--fragment", f"{MMA}:A"]),
    (("coalesce",), "addr", ["--op", "ld.global.v4.b32", "--addr", "lane*s", "--var", "s=16"]),
    (("coalesce",), "stride", ["--op", "ld.global.b32", "--stride", "1,2"]),
    (("coalesce",), "list", ["--list-ops"]),
    (("swizzle-search",), "tile", ["--tile", "32x32"]),
    (("render",), "fragment", [MMA, "--operand", "A", "-o", PIC]),
    (("render",), "desc", [WGMMA, "--operand", "A", "--desc", DESC, "-o", PIC]),
    (("render",), "banks-addr", ["--banks", "--op", "ld.shared.b32", "--addr", "lane*s", "--var", "s=8",
                                 "-o", PIC]),
    (("render",), "banks-tile", ["--banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--fragment", f"{MMA}:A",
                                 "-o", PIC]),
    (("desc", "decode"), "value", [DESC]),
    (("desc", "decode"), "instr", [DESC, "--instr", WGMMA]),
    (("desc", "decode"), "sm100", ["0x4000404000010040", "--arch", "sm_100"]),
    (("desc", "encode"), "fields", ["--start", "0x400", "--lbo", "16", "--sbo", "1024"]),
    (("desc", "encode"), "instr", ["--start", "0x400", "--instr", WGMMA]),
    (("desc", "check"), "descriptor", [DESC, "--instr", WGMMA]),
    (("desc", "check"), "tma", [DESC, "--instr", WGMMA, "--tma-box", "64x64", "--tma-swizzle", "128B"]),
    (("ptx", "run"), "text", [TRANSPOSE, "--kernel", "transpose_conflicts", "--grid", "2", "--block", "32,8",
                              "--arg", "arange:f32:64x64", "--arg", "zeros:f32:64x64", "--arg", "i32:64"]),
]
# `layoutsim triton` needs Triton (the optional extra): its modes are tried where it is installed
HAS_TRITON = not missing(["python:triton"])
TRITON_KERNELS = str(ROOT / "gpu_check" / "triton_corpus" / "kernels.py")
if HAS_TRITON:
    MODES += [
        (("triton", "run"), "text", [f"{TRITON_KERNELS}:vector_add", "--grid", "4", "--arg", "arange:f32:1000",
                                     "--arg", "ones:f32:1000", "--arg", "zeros:f32:1000", "--arg", "i32:1000",
                                     "--meta", "BLOCK=256"]),
        (("triton", "layouts"), "text", [f"{TRITON_KERNELS}:softmax_rows", "--arg", "zeros:f32:64x100",
                                         "--arg", "zeros:f32:64x100", "--arg", "i32:100", "--arg", "i32:100",
                                         "--meta", "BLOCK=128"]),
    ]

# a value of each option that matters wherever the option applies (dest -> arguments after it;
# None: a flag). PER_MODE, by (path, dest) or (path, mode, dest): where one value cannot matter
# everywhere (the default arch differs, a base already uses the value).
SAMPLES = {
    "operand": "B", "arch": "sm_80", "wave": "64", "json": None, "lane": "5", "element": "1,1", "matrix": "1",
    "family": "ldmatrix", "op": "ld.shared.b32", "addr": "lane*4", "offsets": ",".join(["0"] * 32),
    "tile": "32x32", "var": "s=32", "active": "0-7", "dtype": "f32", "pad": "8", "pitch": "40",
    "swizzle": "3,3,3", "swizzle_unit": "byte", "base": "16", "fragment": f"{MMA}:B", "at": "16,0",
    "stored": "col", "block": "8,0", "fill": None, "index": "2", "rules": "wide_ld=none,wide_st=pairs",
    "verbose": None, "stride": "4", "picture": "sectors.svg", "format": "html", "list_ops": None,
    "read": "ld.shared.v4.b32", "write": "st.shared.b32", "read_weight": "3", "write_weight": "3",
    "max_pad_bytes": "16", "top": "1", "output": "other.svg", "desc": "0x4000004000010000", "trans": None,
    "lanes": "0-7", "reg": "0", "phase": "1", "access": "ld.shared.v2.b32", "rows": "0-3", "cols": "0-3",
    "first_holder": None, "banks": None, "label": "mine", "layout": "pad=8", "value": DESC,
    "instr": "wgmma.m64n128k16.f32.f16.f16", "start": "0x800", "lbo": "32", "sbo": "2048",
    "base_offset": "1", "smem_bytes": "1024", "tma_box": "64x32", "tma_swizzle": "64B", "tma_dst": "0x800",
    "tma_at": "8,0", "tma_coords": "0,8", "other": "0x4000004000010080", "other_trans": None,
    "kernel": "transpose_padded", "grid": "1", "arg": "i32:1", "shared_bytes": "1024",
    "out": "outdir", "ctas": "1", "jobs": "2", "racecheck": None, "all": None, "nvcc_flag": "-O3", "quiet": None,
    "initcheck": None, "show_line": "198", "max_steps": "5", "timeout": "1e-6", "cluster": "2",
    "symbol": "c_Kernel=f32:1",       # the example kernel has no such variable: refused in one line
    "meta": "num_warps=2", "config": "0", "lanes": None,
}
PER_MODE = {
    (("render",), "arch"): "sm_90", (("render",), "banks-addr", "op"): "ld.shared.v2.b32",
    (("banks",), "fragment", "rules"): "matrix=as-v4", (("render",), "banks-addr", "arch"): "sm_80",
    (("render",), "banks-tile", "arch"): "sm_80", (("desc", "check"), "tma_coords"): "4,0",
    (("desc", "decode"), "rows"): "2", (("desc", "encode"), "rows"): "2", (("desc", "decode"), "arch"): "sm_100",
    (("desc", "decode"), "sm100", "arch"): "sm_90",
    (("ptx", "run"), "block"): "32,4", (("query",), "arch"): "sm_90", (("show",), "arch"): "sm_90",
    (("swizzle-search",), "arch"): "sm_80", (("show",), "wave"): "64", (("coalesce",), "rules"): "sectors=per_lane",
    (("coalesce",), "base"): "64", (("swizzle-search",), "tile"): "64x64",
}
# options whose effect does not show in one short run's output, on purpose
NOT_IN_OUTPUT = {
    (("ptx", "run"), "jobs"): "runs the CTAs in processes: the same results by design",
    (("ptx", "run"), "quiet"): "silences progress lines, which only a run of more than 2 s prints",
}


def _subparser(path):
    p = build_parser()
    for name in path:
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        p = sub.choices[name]
    return p


def _options(path):
    """(dest, --spelling) of every option of the subcommand."""
    return [(a.dest, max(a.option_strings, key=len)) for a in _subparser(path)._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)]


def _run(path, argv, folder):
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main([*path, *argv])
            except SystemExit as e:         # argparse's own errors
                rc = e.code
    finally:
        os.chdir(cwd)
    files = {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return rc, SECONDS.sub("", out.getvalue()), err.getvalue(), files


def test_every_subcommand_has_modes():
    paths = {path[0] for path, _, _ in MODES}
    assert paths == {c.replace("_", "-") for c in COMMANDS if HAS_TRITON or c != "triton"}


CASES = [(path, mode, base, dest, flag) for path, mode, base in MODES for dest, flag in _options(path)]


@pytest.mark.parametrize("path,mode,base,dest,flag", CASES,
                         ids=[f"{' '.join(c[0])}-{c[1]}-{c[4]}" for c in CASES])
def test_an_option_changes_the_output_or_is_refused(tmp_path, path, mode, base, dest, flag):
    if (path, dest) in NOT_IN_OUTPUT:
        pytest.skip(NOT_IN_OUTPUT[(path, dest)])
    value = PER_MODE.get((path, mode, dest), PER_MODE.get((path, dest), SAMPLES.get(dest)))
    assert dest in SAMPLES or (path, dest) in PER_MODE, f"give {flag} a sample value in SAMPLES"
    if value is None and flag in base:
        pytest.skip(f"{flag} is part of this mode")
    extra = [flag] if value is None else [f"{flag}={value}"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rc0, out0, err0, files0 = _run(path, base, tmp_path / "a")
    assert rc0 == 0, (path, base, err0)
    rc, out, err, files = _run(path, [*base, *extra], tmp_path / "b")
    if rc == 2:                             # refused, or a value this mode cannot take: one line
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
        return
    assert rc in (0, 1), (rc, err)
    assert (out, files) != (out0, files0), f"{' '.join(path)} {' '.join(base)}: {' '.join(extra)} changed nothing"


@pytest.mark.parametrize("argv,needle", [
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*4", "--var", "s=2"], "--var s: not used"),
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*b", "--var", "a=2", "--var", "b=a*4", "--var", "c=1"],
     "--var c: not used"),
    (["coalesce", "--op", "ld.global.b32", "--addr", "lane*4", "--var", "s=2"], "--var s: not used"),
    (["render", "--banks", "--op", "ld.shared.b32", "--offsets", ",".join(["0"] * 32), "--var", "s=2"],
     "--var is for --addr"),
])
def test_a_variable_nothing_reads_is_refused(capsys, argv, needle):
    """--var NAME=VALUE is one value of the expression: a value no expression reads is refused
    (a variable read only by a later variable that is used counts as used)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_a_variable_read_through_another_is_used(capsys):
    assert main(["banks", "--op", "ld.shared.b32", "--addr", "lane*b", "--var", "a=2", "--var", "b=a*4"]) == 0
