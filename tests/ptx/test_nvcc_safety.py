"""A .cu file's name, its folder and --nvcc-flag cannot make nvcc run a command or write a file
(issue 22): layoutsim.ptx.nvcc compiles a private copy under a fixed name, reaches folders
through fixed-name links and allows only the flags that change what is compiled.

Each injection name runs `cd; touch MARKER` if a shell ever reads it (a file name cannot hold
`/`): the marker would appear in $HOME, which each test points at a folder of its own. The
`bare nvcc` tests show that the names do inject when nvcc is given them directly, so that the
marker files are a test that can fail."""
import os
import shutil
import subprocess
import tempfile

import pytest

from layoutsim import LayoutsimError
from layoutsim.cli import main
from layoutsim.ptx import compile_cu
from layoutsim.ptx import nvcc as N

NVCC = shutil.which("nvcc")
need_nvcc = pytest.mark.skipif(NVCC is None, reason="compiling a .cu needs nvcc")

KERNEL = """#include "twice.cuh"
extern "C" __global__ void scale(float *x) {
  x[threadIdx.x] = twice(x[threadIdx.x]);
}
"""
HEADER = "#ifndef SCALE\n#define SCALE 2.5f\n#endif\n__device__ __forceinline__ float twice(float v) {\n  return v * SCALE;\n}\n"
NAMES = {"dollar": "$(cd;touch pwn1).cu", "quotes": 'a";cd;touch pwn2;".cu', "backticks": "`cd;touch pwn3`.cu"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """$HOME (where a marker would land), the working folder and the temporary folder, all
    empty and private to the test."""
    for d in ("home", "work", "tmp", "cache"):
        (tmp_path / d).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path / "cache"))   # the run's lowering cache
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path / "home"


def source(folder, name="k.cu"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "twice.cuh").write_text(HEADER)
    (folder / name).write_text(KERNEL)
    return folder / name


def cli(capsys, path, *extra):
    rc = main(["ptx", "run", str(path), "--kernel", "scale", "--grid", "1", "--block", "32",
               "--arg", "ones:f32:32", "--json", *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def nothing_left(home):
    """No marker, nothing written in the working folder, the private folders removed."""
    assert sorted(os.listdir(home)) == []
    assert sorted(os.listdir(".")) == []
    assert sorted(os.listdir(tempfile.tempdir)) == []


def one_line_exit_2(rc, out, err, message):
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1, (rc, out, err)
    assert err.startswith("layoutsim: error: ") and message in err, err


@need_nvcc
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_the_names_inject_into_bare_nvcc(home, tmp_path, name):
    path = source(tmp_path / "src", name)
    subprocess.run([NVCC, "-ptx", "-arch=sm_90", path.name, "-o", "k.ptx"], cwd=path.parent, capture_output=True)
    assert len(os.listdir(home)) == 1                  # what the issue found: the marker is made


@need_nvcc
@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_a_cu_name_runs_no_command(capsys, home, tmp_path, name):
    import json
    path = source(tmp_path / "src", name)
    rc, out, err = cli(capsys, path)
    if '"' in name:                   # cannot be written into the PTX's .file line: one line, exit 2
        one_line_exit_2(rc, out, err, "rename the file")
    else:
        assert rc == 0, err
        files = {i["cuda"]["file"] for i in json.loads(out)["instructions"] if i["cuda"]}
        assert files == {str(path)}                    # the user's path, not the private copy's
    nothing_left(home)


@need_nvcc
def test_a_folder_name_runs_no_command_and_its_headers_are_found(home, tmp_path):
    folder = tmp_path / "d$(cd;touch pwn4)`cd;touch pwn5`"
    ptx = compile_cu(source(folder), "sm_90")
    files = [ln.split('"')[1] for ln in ptx.splitlines() if ln.strip().startswith(".file")]
    assert files == [str(folder / "k.cu"), str(folder / "twice.cuh")]     # mapped back from the links
    assert ".loc\t2 5 " in ptx                      # the header's line 5 (`return v * SCALE;`)
    nothing_left(home)


@need_nvcc
def test_an_include_folder_with_shell_characters_is_used_not_run(home, tmp_path):
    inc = tmp_path / "inc$(cd;touch pwn6)"
    inc.mkdir()
    (inc / "twice.cuh").write_text(HEADER.replace("SCALE;", "3.0f;"))
    (tmp_path / "k.cu").write_text(KERNEL.replace('"twice.cuh"', "<twice.cuh>"))
    ptx = compile_cu(tmp_path / "k.cu", "sm_90", [f"-I {inc}"])
    assert "0f40400000" in ptx and f'"{inc}/twice.cuh"' in ptx     # 3.0f, from the header of that folder
    nothing_left(home)


@need_nvcc
def test_a_parent_include_is_not_taken_from_beside_the_private_folder(home, tmp_path):
    """`#include "../common/c.h"` from src/a/k.cu means src/common/c.h: a copy one folder deep
    in the temporary folder would find TMP/../common/c.h first."""
    src = tmp_path / "src"
    (src / "common").mkdir(parents=True)
    (src / "common" / "c.h").write_text("#define SCALE 5.0f\n")
    planted = tmp_path / "common"
    planted.mkdir()
    (planted / "c.h").write_text('#error "the planted header was included"\n')
    path = source(src / "a")
    path.write_text('#include "../common/c.h"\n' + KERNEL)
    assert "0f40A00000" in compile_cu(path, "sm_90")                # 5.0f
    nothing_left(home)


@need_nvcc
def test_the_private_folder_is_0700_and_removed(home, tmp_path, monkeypatch):
    seen = []
    real = N._compile

    def spy(tmp, *a):
        seen.append((tmp, os.stat(tmp).st_mode & 0o777))
        return real(tmp, *a)
    monkeypatch.setattr(N, "_compile", spy)
    compile_cu(source(tmp_path / "src"), "sm_90")
    (tmp, mode), = seen
    assert mode == 0o700 and not tmp.exists()


@need_nvcc
def test_a_compile_error_is_one_line_naming_the_users_file(capsys, home, tmp_path):
    path = source(tmp_path / "src")
    path.write_text(KERNEL.replace("twice(x[threadIdx.x])", "nosuch(x[threadIdx.x])"))
    rc, out, err = cli(capsys, path)
    one_line_exit_2(rc, out, err, f"{path}: nvcc failed: {path}(3): error: identifier \"nosuch\" is undefined")
    nothing_left(home)


@need_nvcc
def test_macro_and_flags_that_change_the_compile_are_passed(home, tmp_path):
    path = source(tmp_path / "src")
    plain = compile_cu(path, "sm_90")
    assert "0f40200000" in plain                                     # 2.5f
    ptx = compile_cu(path, "sm_90", ["-DSCALE=4.0f", "-std=c++17", "--expt-relaxed-constexpr",
                                     "--expt-extended-lambda", "-maxrregcount=32", "-O3", "-Xptxas -O3",
                                     "-Xptxas=-O2", f"-I{tmp_path}", "-U NOT_DEFINED"])
    assert "0f40800000" in ptx and "0f40200000" not in ptx           # 4.0f


@pytest.mark.parametrize("flag,canonical", [
    ("-std=c++17", ["-std=c++17"]), ("--std=c++20", ["-std=c++20"]), ("-std c++14", ["-std=c++14"]),
    ("-DN", ["-DN"]), ("-D N=4", ["-DN=4"]), ("--define-macro=T=unsigned int", ["-DT=unsigned int"]),
    ("-DF=(a*2)<<3", ["-DF=(a*2)<<3"]), ("-UN", ["-UN"]), ("-U N", ["-UN"]),
    ("--expt-relaxed-constexpr", ["--expt-relaxed-constexpr"]), ("-expt-extended-lambda", ["--expt-extended-lambda"]),
    ("--extended-lambda", ["--extended-lambda"]), ("-maxrregcount=64", ["-maxrregcount=64"]),
    ("--maxrregcount 32", ["-maxrregcount=32"]), ("-O0", ["-O0"]), ("-O3", ["-O3"]), ("-G", ["-G"]),
    ("-Xptxas -O3", ["-Xptxas=-O3"]), ("-Xptxas=-O1", ["-Xptxas=-O1"]), ("--ptxas-options=-O0", ["-Xptxas=-O0"]),
])
def test_allowed_flags_in_their_one_nvcc_form(flag, canonical):
    assert N.check_flags([flag]) == [("tokens", canonical)]


@pytest.mark.parametrize("flag,folder", [("-I include", "include"), ("-Iinclude", "include"),
                                         ("-I=include", "include"), ("--include-path=include", "include"),
                                         ("-I d$(cd;touch x)`y`;z", "d$(cd;touch x)`y`;z")])
def test_an_include_folder_goes_through_a_link_whatever_its_name(flag, folder):
    assert N.check_flags([flag]) == [("include", folder)]


@pytest.mark.parametrize("flag,message", [
    ("--compiler-bindir=/tmp/planted", "'--compiler-bindir' is not allowed"),
    ("-ccbin=/tmp/planted", "'-ccbin' is not allowed"),
    ("-time=t.csv", "'-time' is not allowed"), ("-o", "'-o' is not allowed"),
    ("--output-file=x.ptx", "'--output-file' is not allowed"), ("-keep", "'-keep' is not allowed"),
    ("--keep-dir=k", "'--keep-dir' is not allowed"), ("-save-temps", "'-save-temps' is not allowed"),
    ("--dryrun", "'--dryrun' is not allowed"), ("--version", "'--version' is not allowed"),
    ("-Xcompiler=-fplugin=x.so", "'-Xcompiler' is not allowed"), ("-E", "'-E' is not allowed"),
    ("-arch=sm_80", "(the target is --arch / arch=)"), ("-lineinfo", "(it is always given)"),
    ("-Xptxas -v", "the ptxas options allowed are -O0..-O3"), ("-maxrregcount=0", "N from 1 to 255"),
    ("-I", "give the value in the same flag"), ("-D", "give the value in the same flag"),
    ("-DX=$(cd;touch pwn7)", "the macro value may hold"), ("-DX=`cd;touch pwn8`", "the macro value may hold"),
    ('-DX="a"', "the macro value may hold"), ("-DX=a;cd;touch pwn9", "the macro value may hold"),
    ("-DX=a\\", "the macro value may hold"), ("-DX=a\ncd", "the macro value may hold"),
    ("-DX=a|b", "the macro value may hold"), ("-D 1X", "NAME a C identifier"), ("-D $(x)", "NAME a C identifier"),
    ("-U a-b", "NAME a C identifier"), ('-I a"b', "without '\"', backslash"), ("-Ia\nb", "without '\"', backslash"),
])
def test_other_flags_and_unsafe_values_are_refused_by_name(capsys, home, tmp_path, flag, message):
    path = source(tmp_path / "src")
    rc, out, err = cli(capsys, path, f"--nvcc-flag={flag}")
    one_line_exit_2(rc, out, err, message)
    if "not allowed" in message:
        assert "allowed: -std=c++NN, -I DIR" in err
    nothing_left(home)


@need_nvcc
@pytest.mark.parametrize("flag", ["-DX=$(cd;touch pwn)", "-I/nowhere`cd;touch pwn`"])
def test_bare_nvcc_runs_a_macro_value_or_an_include_folder(home, tmp_path, flag):
    """Why -D values are checked and -I folders go through links: nvcc escapes `"` in a -D value
    but not `$(...)`, and `$` in an -I path but not a backtick."""
    path = source(tmp_path / "src")
    subprocess.run([NVCC, "-ptx", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.ptx"), flag], capture_output=True)
    assert os.listdir(home) == ["pwn"]


@need_nvcc
def test_a_planted_compiler_is_not_run(capsys, home, tmp_path):
    bindir = tmp_path / "bindir"
    bindir.mkdir()
    for tool in ("gcc", "g++", "cc", "c++"):
        (bindir / tool).write_text(f"#!/bin/sh\ntouch {home}/planted\n")
        (bindir / tool).chmod(0o755)
    rc, out, err = cli(capsys, source(tmp_path / "src"), f"--nvcc-flag=--compiler-bindir={bindir}")
    one_line_exit_2(rc, out, err, "'--compiler-bindir' is not allowed")
    nothing_left(home)


def test_without_nvcc_one_line(home, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "home"))
    with pytest.raises(LayoutsimError, match=r"^nvcc is not installed; cannot compile '.*k\.cu' \(install the CUDA"):
        compile_cu(source(tmp_path / "src"))


@pytest.mark.parametrize("call,message", [
    (lambda p: compile_cu(p, flags="-O3"), "give a list of flags"),
    (lambda p: compile_cu(p, flags=[3]), "give a string such as"),
    (lambda p: compile_cu(str(p)[:-3] + ".ptx"), "give the path of a .cu file"),
    (lambda p: compile_cu(p, arch="gfx1201"), "nvcc compiles for NVIDIA targets"),
    (lambda p: compile_cu(p, arch="sm_99x"), "unknown arch 'sm_99x'"),
    (lambda p: compile_cu(p.parent / "missing.cu"), "cannot read CUDA source"),
])
def test_compile_cu_bad_input(tmp_path, call, message):
    with pytest.raises(LayoutsimError, match=message.replace("(", r"\(")):
        call(source(tmp_path / "src"))
