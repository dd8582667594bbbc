"""Output cites only documents a user can open (issue 14): no `tests/data/...` or
`docs/validation/...` path (the source tree's corpora and reports are not installed) in what any
command prints, in any catalog entry's or arch profile's text, or in any string of the
layoutsim package that is not a docstring, unless it is part of a URL. layoutsim.cite says how
to cite instead (the documentation page and the corpus by file name).
"""
import ast
import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from gpu_check.cli import main as gpu_check
from layoutsim.cli import main as layoutsim
from layoutsim.files import measured_data

ROOT = Path(__file__).resolve().parents[2]
PATH = re.compile(r"(?:tests/data|docs/validation)/")
URL = re.compile(r"https?://\S*$")
MMA = "mma.m16n8k16.f32.f16.f16.f32"
WGMMA = "wgmma.m64n64k16.f32.f16.f16"
DESC = "0x4000004000010040"


def uncited(text):
    """The tests/data/ and docs/validation/ paths in `text` that no URL leads up to."""
    bad = []
    for m in PATH.finditer(text):
        word = re.split(r"[\s(\"'\[,;]", text[:m.start()])[-1]
        if not URL.match(word):
            bad.append(text[max(0, m.start() - 60):m.end() + 40])
    return bad


def test_the_scanner_sees_paths_and_lets_urls_pass():
    assert uncited("confirmed (tests/data/descriptors/x.npz)") and uncited("see docs/validation/README.md")
    assert not uncited("https://github.com/o/r/blob/main/tests/data/x.json and corpus x.json")


COMMANDS = [
    (layoutsim, ["query", MMA, "--operand", "A", "--lane", "3"]),
    (layoutsim, ["query", "v_wmma_f32_16x16x16_f16", "--arch", "gfx1201", "--operand", "A", "--lane", "3",
                 "--json"]),
    (layoutsim, ["show", "v_wmma_f32_16x16x16_f16", "--arch", "gfx1100", "--operand", "C"]),
    (layoutsim, ["show", "v_mfma_f32_16x16x16_f16", "--arch", "gfx942", "--operand", "A"]),
    (layoutsim, ["show", WGMMA, "--operand", "A"]),
    (layoutsim, ["list"]),
    (layoutsim, ["banks", "--op", "ldmatrix.x4", "--addr", "(lane%8)*128 + (lane//8)*16"]),
    (layoutsim, ["banks", "--op", "ld.shared.v4.b32", "--addr", "lane*16", "--json"]),
    (layoutsim, ["banks", "--op", "ds_read_b128", "--arch", "gfx1201", "--addr", "lane*16"]),
    (layoutsim, ["banks", "--op", "ds_read_b128", "--arch", "gfx942", "--addr", "lane*16", "--json"]),
    (layoutsim, ["coalesce", "--op", "ld.global.v4.b32", "--addr", "lane*16", "-v"]),
    (layoutsim, ["coalesce", "--op", "ld.global.b32", "--stride", "--json"]),
    (layoutsim, ["coalesce", "--op", "global_load_b32", "--arch", "gfx1201", "--stride"]),
    (layoutsim, ["coalesce", "--list-ops"]),
    (layoutsim, ["swizzle-search", "--tile", "32x32", "--json"]),
    (layoutsim, ["desc", "decode", DESC, "--instr", WGMMA]),
    (layoutsim, ["desc", "encode", "--start", "0x400", "--swizzle", "128B", "--instr", WGMMA, "--json"]),
    (layoutsim, ["desc", "check", DESC, "--instr", WGMMA, "--tma-box", "64x64", "--tma-swizzle", "128B"]),
    (layoutsim, ["desc", "check", DESC, "--instr", WGMMA, "--tma-box", "64x64", "--json"]),
    (layoutsim, ["ptx", "run", str(ROOT / "docs" / "examples" / "transpose.sm_90.ptx"), "--kernel",
                 "transpose_padded", "--grid", "1", "--block", "32,8", "--arg", "arange:f32:32x32",
                 "--arg", "zeros:f32:32x32", "--arg", "i32:32", "--racecheck", "--json"]),
    (gpu_check, ["replay", "dump.npz", "--only", "m16n8k16"]),       # the H200 dump, linked here
    (gpu_check, ["report", str(ROOT / "docs" / "validation" / "h200.json")]),
]


@pytest.mark.parametrize("main,argv", COMMANDS, ids=[" ".join(a[:3]) for _, a in COMMANDS])
def test_what_every_command_prints_cites_what_a_user_can_open(tmp_path, monkeypatch, main, argv):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dump.npz").symlink_to(measured_data("layouts") / "layouts_sm_90.npz")   # not the path it prints
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc in (0, 1), err.getvalue()[-500:]
    assert not uncited(out.getvalue() + err.getvalue())


def test_render_pictures_cite_what_a_user_can_open(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in ([WGMMA, "--operand", "A", "--desc", DESC, "-o", "d.svg"], [MMA, "--operand", "C", "-o", "c.svg"],
                 ["--banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--fragment", f"{MMA}:A", "-o", "b.svg"]):
        with contextlib.redirect_stdout(io.StringIO()):
            assert layoutsim(["render", *argv]) == 0
    for pic in tmp_path.glob("*.svg"):
        assert not uncited(pic.read_text()), pic.name


def test_every_catalog_entry_and_profile_cites_what_a_user_can_open():
    import layoutsim
    from layoutsim.numerics.profiles import PROFILES
    for e in layoutsim.listing():
        inst = layoutsim.get(e.name, arch=e.archs[0], wave=e.wave)
        text = json.dumps([inst.source, inst.confirmed, list(inst.notes), getattr(inst, "arch_note", "")],
                          default=str)
        assert not uncited(text), e.name
    for p in PROFILES.values():
        assert not uncited(json.dumps([p.confirmed, dict(p.sources)], default=str)), p.arch


def _strings(path):
    """The string constants of a module that are not docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_string_of_the_package_cites_the_source_tree():
    found = [f"{p.relative_to(ROOT)}:{line}: {bad[0]!r}" for p in sorted((ROOT / "layoutsim").rglob("*.py"))
             for line, s in _strings(p) if (bad := uncited(s))]
    assert not found, "\n".join(found)
