"""Files the tools write (layoutsim.files.write_atomic, used by every writer): regular files only,
never a new folder on the way, modes and umask respected, nothing half-written or left behind."""
import json
import os
import stat

import pytest

from gpu_check import cli as gcli
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError
from layoutsim.files import make_dir, write_atomic

MMA = "mma.m16n8k16.f32.f16.f16.f32"


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_new_file_follows_umask_and_existing_file_keeps_its_mode(tmp_path, umask_027):
    new = tmp_path / "new.txt"
    write_atomic(new, "one")
    assert stat.S_IMODE(new.stat().st_mode) == 0o640 and new.read_text() == "one"   # 0666 & ~027
    old = tmp_path / "secret.txt"
    old.write_text("x")
    old.chmod(0o600)
    write_atomic(old, b"two")
    assert stat.S_IMODE(old.stat().st_mode) == 0o600 and old.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt", "secret.txt"]


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder", "device"])
def test_only_regular_files_are_replaced(tmp_path, kind):
    target = tmp_path / "out.svg"
    real = tmp_path / "real.svg"
    real.write_text("keep")
    if kind == "symlink":
        target.symlink_to(real)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    else:
        target = "/dev/null"                      # as root this used to replace the device
    what = {"symlink": "symbolic link", "fifo": "FIFO", "folder": "folder", "device": "character device"}[kind]
    with pytest.raises(LayoutsimError, match=what):
        write_atomic(target, "new")
    assert real.read_text() == "keep"
    if kind == "symlink":
        assert os.path.islink(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["real.svg"] + (["out.svg"] if kind != "device" else []))


def test_missing_folder_is_an_error_not_created(tmp_path):
    with pytest.raises(LayoutsimError, match="does not exist"):
        write_atomic(tmp_path / "a" / "b" / "x.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "report.json"
    path.write_text("old")

    def boom(f):
        f.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, boom)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_make_dir_refuses_a_file_a_link_and_missing_parents(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(LayoutsimError, match="not a folder"):
        make_dir(tmp_path / "f")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(LayoutsimError, match="symbolic link"):
        make_dir(tmp_path / "link")                # writes would land where it points
    with pytest.raises(LayoutsimError, match="does not exist"):
        make_dir(tmp_path / "rec" / "layouts")     # the folder itself, never its missing parents
    assert not (tmp_path / "rec").exists()
    assert os.path.isdir(make_dir(tmp_path / "rec"))
    assert os.path.isdir(make_dir(tmp_path / "rec" / "a" / "b", parents=True))   # inside an owned tree


def _one_line_error(capsys):
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_render_refuses_fifo_and_missing_folder(tmp_path, capsys):
    fifo = tmp_path / "pic.svg"
    os.mkfifo(fifo)
    assert main(["render", MMA, "--operand", "C", "-o", str(fifo)]) == 2
    assert "FIFO" in _one_line_error(capsys)
    assert main(["render", MMA, "--operand", "C", "-o", str(tmp_path / "no" / "pic.svg")]) == 2
    assert "does not exist" in _one_line_error(capsys) and not (tmp_path / "no").exists()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_gpu_check_outputs_refuse_bad_targets_before_work(tmp_path, capsys):
    # run: the report path is checked before any GPU work (here: before finding there is no GPU)
    assert gcli.main(["run", "--report", str(tmp_path / "no" / "r.json")]) == 2
    assert "does not exist" in _one_line_error(capsys)
    assert gcli.main(["source", "--out", "/dev/null"]) == 2
    assert "character device" in _one_line_error(capsys)
    rep = tmp_path / "r.json"
    rep.write_text(json.dumps({"environment": {}, "groups": {}, "totals": {}, "results": []}))
    for opt in ("--markdown", "--confirmed"):
        assert gcli.main(["report", str(rep), opt, str(tmp_path / "x" / "out")]) == 2
        assert "does not exist" in _one_line_error(capsys)
    assert not (tmp_path / "no").exists() and not (tmp_path / "x").exists()
