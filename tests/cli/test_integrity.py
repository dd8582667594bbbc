"""Issue 22, security and integrity, each a one-line error (exit 2) or a quiet recomputation:
outputs never go through a symbolic link, never keep setuid, and an empty output path is an
error (layoutsim.files); a damaged package data file names itself and how to restore it
(layoutsim.package_data); a bad lowering cache file is recomputed; strings read from files reach
the terminal escaped. (discover --apply: tests/gpu_check/test_discover_apply.py.)"""
import functools
import importlib
import json
import os
import shutil
import stat

import pytest

from gpu_check import cli as gcli
from layoutsim import package_data
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError
from layoutsim.files import check_dir, make_dir, write_atomic

MMA = "mma.m16n8k16.f32.f16.f16.f32"


def _one_line_error(capsys):
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def linked(tmp_path, monkeypatch):
    """tmp/real (a folder), tmp/link -> real, tmp/real/sub; the current folder is tmp."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("path", ["link/x.svg", "link/sub/x.svg", "./link/x.svg", "link/../real/x.svg"])
def test_a_relative_output_through_a_link_is_refused(linked, path):
    with pytest.raises(LayoutsimError, match=r"link is a symbolic link"):
        write_atomic(path, "new")
    assert sorted(p.name for p in (linked / "real").iterdir()) == ["sub"]


def test_an_absolute_output_is_refused_when_its_own_folder_is_a_link(linked):
    with pytest.raises(LayoutsimError, match=r"/link is a symbolic link"):
        write_atomic(linked / "link" / "x.svg", "new")
    # a link above the folder named (a /tmp that is a link) is the system's: allowed
    write_atomic(linked / "link" / "sub" / "x.svg", "new")
    assert (linked / "real" / "sub" / "x.svg").read_text() == "new"
    write_atomic("real/sub/y.svg", "ok")                    # no link on the way: written
    assert (linked / "real" / "sub" / "y.svg").read_text() == "ok"


def test_output_folders_through_a_link_are_refused(linked):
    for path in ("link/new", "link/sub", str(linked / "link")):
        with pytest.raises(LayoutsimError, match="symbolic link"):
            make_dir(path)
    with pytest.raises(LayoutsimError, match="symbolic link"):
        check_dir("link/sub")
    assert sorted(p.name for p in (linked / "real").iterdir()) == ["sub"]


def test_commands_refuse_an_output_through_a_link(linked, capsys):
    assert main(["render", MMA, "--operand", "C", "-o", "link/pic.svg"]) == 2
    assert "link is a symbolic link" in _one_line_error(capsys)
    assert main(["coalesce", "--op", "ld.global.b32", "--addr", "lane*4", "--picture", "link/s.svg"]) == 2
    assert "link is a symbolic link" in _one_line_error(capsys)
    assert gcli.main(["source", "--out", "link/k.cu"]) == 2
    assert "link is a symbolic link" in _one_line_error(capsys)
    assert sorted(p.name for p in (linked / "real").iterdir()) == ["sub"]


@pytest.mark.parametrize("bits", [stat.S_ISUID, stat.S_ISGID, stat.S_ISVTX])
def test_overwriting_drops_setuid_setgid_and_sticky_and_keeps_the_rest(tmp_path, bits):
    path = tmp_path / "tool"
    path.write_text("old")
    path.chmod(0o750 | bits)
    if not stat.S_IMODE(path.stat().st_mode) & bits:
        pytest.skip("this file system does not keep the bit")
    write_atomic(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750 and path.read_text() == "new"


def test_an_empty_path_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for fn in (lambda: write_atomic("", "x"), lambda: make_dir(""), lambda: check_dir("", missing_ok=True)):
        with pytest.raises(LayoutsimError, match="'' is not a"):
            fn()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["render", MMA, "--operand", "C", "-o", ""],
    ["render", MMA, "--operand", "C", "--output="],
    ["coalesce", "--op", "ld.global.b32", "--addr", "lane*4", "--picture", ""],
    ["ptx", "run", "none.ptx", "--kernel", "k", "--grid", "1", "--block", "32", "--out", ""],
])
def test_layoutsim_refuses_an_empty_output(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "'' is not a" in _one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["source", "--out", ""],
    ["run", "--report", ""],
    ["run", "--record", ""],
    ["discover", "--record", ""],
    ["discover", "--apply", ""],
    ["amd", "--keep", ""],
])
def test_gpu_check_refuses_an_empty_path(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    # --apply '' must be refused for its path, also where layoutsim is installed (CI), not a checkout
    monkeypatch.setattr(package_data, "source_checkout", lambda: package_data.ROOT)
    assert gcli.main(argv) == 2
    err = _one_line_error(capsys)
    assert "''" in err and "GPU" not in err, err
    assert list(tmp_path.iterdir()) == []


def test_gpu_check_report_refuses_empty_outputs(tmp_path, capsys):
    rep = tmp_path / "r.json"
    rep.write_text('{"environment": {}, "groups": {}, "totals": {}, "results": []}')
    for opt in ("--markdown", "--confirmed"):
        assert gcli.main(["report", str(rep), opt, ""]) == 2
        assert "'' is not a file path" in _one_line_error(capsys)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# ---- package data: a damaged file is one line naming it and how to restore it ---------------------


_CACHED = ("layoutsim.isa.registry", "layoutsim.isa.ptx_wmma", "layoutsim.ptx.sass", "layoutsim.ptx.wmma",
           "layoutsim.numerics.sfu", "layoutsim.numerics.corpus")


def _fresh_caches(monkeypatch):
    """Every cached function of the loaders replaced by an empty cache of its own for the test:
    the originals keep theirs (other tests hold the catalog's Entry objects and compare them)."""
    for name in _CACHED:
        mod = importlib.import_module(name)
        for attr, value in list(vars(mod).items()):
            if hasattr(value, "cache_clear") and hasattr(value, "__wrapped__"):
                monkeypatch.setattr(mod, attr, functools.lru_cache(maxsize=None)(value.__wrapped__))


@pytest.fixture
def copies(tmp_path, monkeypatch):
    """Point a loader at a copy of its file (the checkout's files are never damaged): copy(module,
    attribute) -> the copied path, the module's constant patched, the loaders' caches fresh (the
    on-disk cache too: a table decoded by an earlier run must not stand in for the damaged file)."""
    _fresh_caches(monkeypatch)
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path / "cache"))

    def copy(module, attr="DATA"):
        mod = importlib.import_module(module)
        src = getattr(mod, attr)
        dst = tmp_path / module / src.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
        monkeypatch.setattr(mod, attr, dst)
        return dst
    return copy


def _damaged(fn, path, words=""):
    with pytest.raises(package_data.DamagedData) as err:
        fn()
    msg = str(err.value)
    assert msg.startswith(f"layoutsim data file {path} is damaged (") and "\n" not in msg, msg
    assert "pip install --force-reinstall layoutsim" in msg and words in msg, msg
    return msg


def _edit_json(path, edit):
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


TRUNCATED = ("truncated", lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "JSON")
DEEP = ("deep", lambda p: p.write_text("[" * 100000 + "]" * 100000), "nested too deeply")
MISSING = ("missing", lambda p: p.unlink(), "No such file")


def _wmma_catalog():
    from layoutsim.isa import ptx_wmma
    return ptx_wmma.entries()


@pytest.mark.parametrize("name, damage, words", [
    TRUNCATED, DEEP,
    ("no use", lambda p: _edit_json(p, lambda d: d["entries"][0].pop("use")), "has no 'use'"),
    ("wrong type", lambda p: _edit_json(p, lambda d: d["entries"][5].update(rows="16")), "not an integer"),
    ("environment", lambda p: _edit_json(p, lambda d: d.update(environment=[])), "not an object"),
])
def test_the_wmma_catalog(copies, name, damage, words):
    path = copies("layoutsim.isa.ptx_wmma")
    damage(path)
    _damaged(_wmma_catalog, path, words)


def test_a_wmma_map_the_fragment_checks_refuse(copies):
    from layoutsim.isa import ptx_wmma
    path = copies("layoutsim.isa.ptx_wmma")

    def twice(d):
        d["entries"][0]["table"][0][0] = d["entries"][0]["table"][0][1]
    _edit_json(path, twice)
    entry = _wmma_catalog()[0]
    _damaged(entry.build, path, "not a bijection")
    assert ptx_wmma.DATA == path


def test_layoutsim_list_says_one_line_on_a_damaged_catalog(copies, capsys):
    path = copies("layoutsim.isa.ptx_wmma")
    _edit_json(path, lambda d: d["entries"].append({"name": "wmma.load.a.sync.aligned.row.m8n8k8.f16"}))
    for argv in (["list"], ["query", "wmma.load.a.row.m16n16k16.f16", "--lane", "0"]):
        assert main(argv) == 2
        err = _one_line_error(capsys)
        assert f"{path} is damaged" in err and "has no 'operand'" in err


@pytest.mark.parametrize("name, damage, words", [
    TRUNCATED, DEEP,
    ("layouts type", lambda p: _edit_json(p, lambda d: d.update(layouts="all")), "'layouts'] is a string"),
    ("no date", lambda p: _edit_json(p, lambda d: d.pop("date")), "has no 'date'"),
])
def test_confirmed_json_for_both_readers(copies, name, damage, words):
    from layoutsim.isa import registry
    from layoutsim.numerics import corpus
    path = copies("layoutsim.isa.registry", "CONFIRMED")
    damage(path)
    _damaged(registry.confirmed, path, words)
    _damaged(corpus.confirmed_numerics, path, words)


@pytest.mark.parametrize("name, damage, words", [
    TRUNCATED, DEEP,
    ("rows", lambda p: _edit_json(p, lambda d: d["kernels"].update({k: {"f": [{"line": "x"}]} for k in d["kernels"]})),
     "not an integer"),
    ("kernel", lambda p: _edit_json(p, lambda d: d["kernels"].clear()), "which 'kernels' lacks"),
])
def test_the_lowering_data(copies, name, damage, words):
    from layoutsim.ptx import sass
    path = copies("layoutsim.ptx.sass")
    damage(path)
    _damaged(lambda: sass._committed("0" * 64, "sm_90"), path, words)


def test_the_lowering_data_is_checked_once_per_content(copies, monkeypatch):
    """Which PTX a committed lowering file describes comes from the summary an earlier process
    cached under the SHA-256 of the file's bytes, not from parsing and checking the whole file again
    (~50 ms of every `ptx run`, issue 26); a file changed since has other bytes: checked, refused."""
    from layoutsim.ptx import sass
    path = copies("layoutsim.ptx.sass")
    sha, kernel = next(iter((h, f) for f, h in json.loads(path.read_text())["ptx_sha256"].items()))
    assert sass._committed("0" * 64, "sm_90") == (None, None)         # checks the file, caches the summary
    checks, check = [], sass._check_data
    monkeypatch.setattr(sass, "_check_data", lambda doc: checks.append(doc) or check(doc))
    sass._summary.cache_clear()                                       # a later process
    assert sass._committed("0" * 64, "sm_90") == (None, None) and checks == []
    rows, source = sass._committed(sha, "sm_90")                      # a hit: the whole file, checked
    assert rows and f"{path.name}: {kernel}" in source and len(checks) == 1
    TRUNCATED[1](path)
    sass._summary.cache_clear()
    sass._load.cache_clear()
    _damaged(lambda: sass._committed("0" * 64, "sm_90"), path, "JSON")


@pytest.mark.parametrize("name, damage, words", [
    TRUNCATED, DEEP,
    ("no op", lambda p: _edit_json(p, lambda d: d["entries"][0].pop("op")), "has no 'op'"),
    ("no tile", lambda p: _edit_json(p, lambda d: [e.update(sass=["FFMA"]) for e in d["entries"] if "sass" in e]),
     "neither accesses nor a tensor-core SASS tile"),
])
def test_the_wmma_lowering_data(copies, name, damage, words):
    from layoutsim.ptx import wmma
    path = copies("layoutsim.ptx.wmma")
    damage(path)
    _damaged(lambda: wmma.entry("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16"), path, words)


@pytest.mark.parametrize("name, damage, words", [
    TRUNCATED, DEEP, MISSING,
    ("no table", lambda p: _edit_json(p, lambda d: d["tables"].pop("rcp.T0")), "has no tables[rcp.T0]"),
    ("hypothesis", lambda p: _edit_json(p, lambda d: d["f32"]["rcp"].update(hypotheses=[])), "hypothesis 0"),
    ("n type", lambda p: _edit_json(p, lambda d: d["tables"]["rcp.T0"].update(n=1.5)), "not an integer"),
])
def test_the_sfu_measurements(copies, name, damage, words):
    from layoutsim.numerics import sfu
    folder = copies("layoutsim.numerics.sfu")
    damage(folder / "measured.json")
    _damaged(lambda: sfu.info("rcp.approx.ftz.f32"), folder / "measured.json", words)


@pytest.mark.parametrize("which", ["ref", "err"])
@pytest.mark.parametrize("damage", ["garbage", "truncated", "other table"])
def test_the_sfu_tables(copies, which, damage):
    from layoutsim.numerics import sfu
    folder = copies("layoutsim.numerics.sfu")
    blob = folder / f"rcp.T0.{which}.bz2"
    if damage == "garbage":
        blob.write_bytes(b"BZh9" + b"\0" * 100)
    elif damage == "truncated":
        blob.write_bytes(blob.read_bytes()[:-50])
    else:
        shutil.copy(folder / f"rsqrt.T0.{which}.bz2", blob)
    _damaged(lambda: sfu.table("rcp", "T0"), folder / "rcp.T0.{ref,err}.bz2")


@pytest.mark.parametrize("damage", ["garbage", "missing member", "other values"])
def test_the_sfu_16_bit_tables(copies, damage):
    import numpy as np
    from layoutsim.numerics import sfu
    folder = copies("layoutsim.numerics.sfu")
    npz = folder / "f16.npz"
    if damage == "garbage":
        npz.write_bytes(b"PK\3\4" + b"\0" * 64)
        words = "not a valid .npz archive"
    else:
        z = dict(np.load(npz))
        if damage == "missing member":
            del z["tanh.approx.f16"]
            words = "KeyError"
        else:
            z["tanh.approx.f16"] = z["tanh.approx.f16"][::-1].copy()
            words = "does not match its recorded SHA-256"
        np.savez(npz, **z)
    _damaged(lambda: sfu.table16("tanh.approx.f16"), npz, words)


def test_the_restore_hint_names_the_file_in_a_checkout(monkeypatch):
    from layoutsim.isa import ptx_wmma
    monkeypatch.setattr(package_data, "source_checkout", lambda: package_data.ROOT)   # as in a clone
    assert package_data.restore_hint(ptx_wmma.DATA) == \
        "restore it with `git checkout -- layoutsim/isa/data/nvcuda_wmma_sm_90.json` (a source checkout)"
    monkeypatch.setattr(package_data, "source_checkout", lambda: None)
    assert "pip install --force-reinstall layoutsim" in package_data.restore_hint(ptx_wmma.DATA)


def test_the_shipped_files_load(monkeypatch):
    from layoutsim.isa import ptx_wmma, registry
    from layoutsim.numerics import sfu
    from layoutsim.ptx import sass, wmma
    _fresh_caches(monkeypatch)
    assert len(ptx_wmma.entries()) == 78 and registry.confirmed()["gpu"] == "NVIDIA H200"
    assert sass._data()["arch"] == "sm_90" and wmma.entry("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16")
    assert sfu.table("rcp", "T0").size and sfu.table16("tanh.approx.f16").size == 65536


# ---- the lowering cache: a cache file is trusted only when it is this PTX's, else recomputed ------
ROWS = {"k": [{"line": 3, "ptx": "ld.global.u32", "op": "ld.global.u32", "sass": ["LDG.E"]}]}


@pytest.fixture
def lowering(tmp_path, monkeypatch):
    """sass._computed with a stand-in ptxas (it counts its calls) and the cache under tmp_path."""
    from layoutsim.ptx import lowering as L
    from layoutsim.ptx import sass
    calls = []
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sass, "_MEMO", {})
    monkeypatch.setattr(L, "find_ptxas", lambda: "/bin/true")
    monkeypatch.setattr(L, "find_nvdisasm", lambda: "/bin/true")
    monkeypatch.setattr(L, "tool_version", lambda path: "stand-in")
    monkeypatch.setattr(L, "lower", lambda ptx, *a, **k: calls.append(ptx) or (ROWS, b""))

    def compute(ptx="// kernel A\n"):
        sass._MEMO.clear()
        return sass._computed(ptx, "sha-" + ptx, "sm_90")
    compute()                                       # the first run fills the cache
    (entry,) = (tmp_path / "cache" / "lowering").iterdir()
    return compute, entry, calls


def test_a_good_cache_entry_is_used(lowering):
    compute, entry, calls = lowering
    assert compute() == (ROWS, "ptxas -arch=sm_90 now (stand-in) with nvdisasm -g", None) and len(calls) == 1
    doc = json.loads(entry.read_text())
    from layoutsim.ptx.sass import CACHE_FORMAT
    assert doc["format"] == CACHE_FORMAT and doc["key"] == entry.stem


@pytest.mark.parametrize("damage", ["truncated", "not JSON", "deep", "rows type", "no rows", "line type",
                                    "old format", "another PTX's", "a list"])
def test_a_bad_cache_entry_is_recomputed_and_replaced(lowering, damage):
    compute, entry, calls = lowering
    good = json.loads(entry.read_text())
    if damage == "another PTX's":                  # a valid entry of another PTX copied to this name
        compute("// kernel B\n")
        other = next(p for p in entry.parent.iterdir() if p != entry)
        shutil.copy(other, entry)
    else:
        bad = dict(good)
        text = {"truncated": entry.read_text()[:40], "not JSON": "\x00\xff", "deep": "[" * 100000,
                "a list": "[1, 2]"}.get(damage)
        if text is None:
            if damage == "rows type":
                bad["rows"] = "LDG"
            elif damage == "no rows":
                del bad["rows"]
            elif damage == "line type":
                bad["rows"] = {"k": [{"line": "3", "sass": ["LDG.E"]}]}
            else:
                bad["format"] = 0
            text = json.dumps(bad)
        entry.write_text(text)
    n = len(calls)
    assert compute()[0] == ROWS and len(calls) == n + 1 and calls[-1] == "// kernel A\n"
    assert json.loads(entry.read_text()) == good                   # replaced by the right one
    assert compute()[0] == ROWS and len(calls) == n + 1            # and read back from now on


@pytest.mark.parametrize("kind", ["folder", "symlink"])
def test_a_folder_or_a_link_where_the_entry_goes_is_not_followed(lowering, tmp_path, kind):
    compute, entry, calls = lowering
    entry.unlink()
    elsewhere = tmp_path / "elsewhere.json"
    if kind == "folder":
        entry.mkdir()
    else:
        elsewhere.write_text(json.dumps({"format": 1, "key": entry.stem, "rows": {"k": []}, "source": "planted"}))
        entry.symlink_to(elsewhere)
    for _ in range(2):                            # every run recomputes; none crashes
        n = len(calls)
        assert compute()[0] == ROWS and len(calls) == n + 1
    assert entry.is_dir() if kind == "folder" else entry.is_symlink()
    if kind == "symlink":
        assert json.loads(elsewhere.read_text())["source"] == "planted"      # never written through


# ---- strings read from files are escaped before they reach the terminal ---------------------------
EVIL = "H200\x1b]0;owned\x07\x1b[2J\x9b31m\u202etxt\x7f"


def _report(tmp_path):
    from gpu_check import report as R
    from gpu_check.checks.common import Result
    bad = Result("layouts", f"mma{EVIL}", "ids", cases=1, compared=4, mismatches=1, status="fail", note=EVIL)
    rep = R.make_report(["gpu-check", "run"], {"gpu": EVIL, "arch": "sm_90", "date": "2026-12-04"}, {},
                        [bad.finish()], {"layouts": {"entries": 1, "checks": 1, "cases": 1, "compared": 4,
                                                     "mismatches": 1, "failed": 1, "notes": [EVIL]}})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rep))
    return path


def _no_controls(text):
    return not any(c in text for c in "\x1b\x07\x9b\u202e\x7f")


def test_gpu_check_report_escapes_control_characters(tmp_path, capsys):
    path = _report(tmp_path)
    assert gcli.main(["report", str(path)]) == 1
    out = capsys.readouterr().out
    assert _no_controls(out) and "H200\\x1b]0;owned\\x07" in out and "\\u202etxt\\x7f" in out, out
    assert out.count("\\x1b[2J") >= 3                 # environment, note and the failing entry
    assert gcli.main(["report", str(path), "--json"]) == 1
    out = capsys.readouterr().out
    assert _no_controls(out) and json.loads(out)["environment"]["gpu"] == EVIL    # json.dumps escapes
    md = tmp_path / "page.md"
    gcli.main(["report", str(path), "--markdown", str(md)])
    assert _no_controls(md.read_text()) and "H200\\x1b" in md.read_text()


def test_printed_results_of_a_recorded_file_are_escaped(capsys):
    import argparse
    from gpu_check.checks.common import Result
    bad = Result("layouts", f"mma{EVIL}", "ids", cases=1, compared=4, mismatches=1, note=EVIL).finish()
    args = argparse.Namespace(json=False, command="replay")
    assert gcli._print_results(args, [bad], {}, lambda t: f"replay of x: recorded on {EVIL}") == 1
    out = capsys.readouterr().out
    assert _no_controls(out) and "recorded on H200\\x1b]0;owned" in out and "mmaH200\\x1b]0;owned" in out


def test_printable_keeps_lines_and_escapes_the_rest():
    from layoutsim.errors import printable
    assert printable("a\nb\tc\x1b[0m\u2066\u0085") == "a\nb\\tc\\x1b[0m\\u2066\\x85"
    assert printable("plain ünïcode → ok") == "plain ünïcode → ok"
