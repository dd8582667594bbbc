"""Issue 22, security and integrity: outputs never go through a symbolic link, never keep setuid,
and an empty output path is an error (layoutsim.files); every one a one-line error, exit 2."""
import os
import stat

import pytest

from gpu_check import cli as gcli
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
