"""gpu-check discover --apply (issue 22): every entry is checked as the catalog's loader reads it
before anything is written; each refusal is one line naming the entry and the problem, exit 2,
and the catalog stays byte for byte as it was. Only a source checkout's catalog is written."""
import copy
import json

import pytest

from gpu_check import cli
from gpu_check import discover as D
from layoutsim import package_data
from layoutsim.errors import LayoutsimError
from layoutsim.isa import ptx_wmma

DOC = json.loads(ptx_wmma.DATA.read_text())
NAME = "wmma.load.a.sync.aligned.row.m16n16k16.f16"


@pytest.fixture
def catalog(tmp_path):
    """A copy of the catalog that --apply may change (the checkout's file is never touched)."""
    path = tmp_path / "nvcuda_wmma_sm_90.json"
    path.write_text(json.dumps(_without_name()))
    return path


def _without_name():
    """The catalog without NAME: a recorded file with NAME has one new entry."""
    doc = copy.deepcopy(DOC)
    doc["entries"] = [e for e in doc["entries"] if e["name"] != NAME]
    return doc


def _recorded(tmp_path, doc):
    path = tmp_path / "wmma_discovered.json"
    path.write_text(json.dumps(doc))
    return path


def _entry(doc, name=NAME):
    return next(e for e in doc["entries"] if e["name"] == name)


def _extra():
    """The new entry, fine until a case breaks it: the H200's NAME map."""
    return copy.deepcopy(_entry(DOC))


def test_a_consistent_file_is_applied(tmp_path, catalog):
    path, added = D.apply(_recorded(tmp_path, DOC), catalog)
    assert path == catalog and added == [NAME]
    assert json.loads(catalog.read_text())["entries"] == DOC["entries"]


def _broken(case):
    """(the document, the words the refusal must say) of one way to break one entry."""
    doc = _without_name()
    e = _extra()
    doc["entries"].append(e)
    if case == "no use":                          # issue 22: this broke list/query/swizzle-search for good
        del e["use"]
        return doc, "has no 'use'"
    if case == "bad use":
        e["use"] = "matrix_z"
        return doc, "not one of matrix_a"
    if case == "table type":
        e["table"] = "rows"
        return doc, "'table'] is a string, not a list"
    if case == "rows type":
        e["rows"] = "16"
        return doc, "'rows'] is a string, not an integer"
    if case == "bool as int":
        e["slots"] = True
        return doc, "'slots'] is true/false, not an integer"
    if case == "name":
        e["name"] = "mma.m16n8k16.f32.f16.f16.f32"
        return doc, "name is 'mma.m16n8k16.f32.f16.f16.f32'; its fields say"
    if case == "shape":
        e["rows"] = 32
        return doc, "rows is 32; its fields say 16"
    if case == "lanes":
        e["table"] = e["table"][:16]
        return doc, "table is not [32 lanes]"
    if case == "ragged":
        e["table"][3] = e["table"][3][:-1]
        return doc, "table is not [32 lanes]"
    if case == "outside":
        e["table"][0][0] = [16, 0]
        return doc, "outside the 16x16 operand"
    if case == "registers":
        e["table"] = [lane[:-1] for lane in e["table"]]
        return doc, "do not fill whole registers"
    if case == "not a bijection":
        e["table"][0][0] = e["table"][0][1]
        return doc, "not a bijection"
    if case == "twice":
        doc["entries"].append(copy.deepcopy(e))
        return doc, "appears twice"
    if case == "not valid":
        e["valid"] = False
        return doc, "not a uniform cover"
    if case == "environment":
        del doc["environment"]["driver"]
        return doc, "has no 'driver'"
    if case == "escape in source":               # `layoutsim show` prints it
        e["source"] = "measured\x1b]0;owned\x07"
        return doc, "not printable text"
    if case == "escape in environment":
        doc["environment"]["gpu"] = "H200\u202e"
        return doc, "'gpu'] is 'H200\\u202e', not printable text"
    if case == "entry not an object":
        doc["entries"].append([1, 2])
        return doc, f"'entries'][{len(DOC['entries'])}] is a list, not an object"
    raise AssertionError(case)


CASES = ["no use", "bad use", "table type", "rows type", "bool as int", "name", "shape", "lanes", "ragged",
         "outside", "registers", "not a bijection", "twice", "not valid", "environment", "entry not an object",
         "escape in source", "escape in environment"]


@pytest.mark.parametrize("case", CASES)
def test_a_broken_entry_is_refused_and_nothing_is_written(tmp_path, catalog, case):
    before = catalog.read_bytes()
    doc, words = _broken(case)
    with pytest.raises(LayoutsimError, match="not applied") as err:
        D.apply(_recorded(tmp_path, doc), catalog)
    msg = str(err.value)
    assert words in msg and "\n" not in msg, msg
    if case not in ("environment", "entry not an object", "not valid", "escape in environment"):
        assert _extra()["name"] in msg or "mma.m16n8k16" in msg            # the entry is named
    assert catalog.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nvcuda_wmma_sm_90.json", "wmma_discovered.json"]


def test_a_name_of_another_catalog_entry_is_refused(tmp_path, catalog, monkeypatch):
    # an entry whose name spells a clash: the registry already has this name in another family
    # the real registry: no measured wmma name is another family's name or alias
    assert not {D._key(e["name"]) for e in DOC["entries"]} & set(D._other_names())
    monkeypatch.setattr(D, "_other_names", lambda: {D._key(_extra()["name"]): "ldmatrix.x4"})
    with pytest.raises(LayoutsimError, match=r"the name .* is the catalog's ldmatrix.x4; not applied"):
        D.apply(_recorded(tmp_path, DOC), catalog)
    assert json.loads(catalog.read_text()) == _without_name()


def test_deeply_nested_json_is_one_line(tmp_path, catalog, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(LayoutsimError, match="nested too deeply"):
        D.apply(deep, catalog)
    assert json.loads(catalog.read_text()) == _without_name()


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, catalog, monkeypatch):
    monkeypatch.setattr(D, "MAX_RECORDED", 1000)
    with pytest.raises(LayoutsimError, match="the limit is 1000"):
        D.apply(_recorded(tmp_path, DOC), catalog)


def test_the_command_line_says_one_line_and_exits_2(tmp_path, capsys, monkeypatch):
    doc, _ = _broken("no use")
    calls = []
    monkeypatch.setattr(D, "writable_catalog", lambda catalog=None: calls.append(1) or tmp_path / "cat.json")
    assert cli.main(["discover", "--apply", str(_recorded(tmp_path, doc))]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "has no 'use'" in err and "Traceback" not in err and out == ""
    assert calls and not (tmp_path / "cat.json").exists()


def test_an_installed_copy_is_never_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(package_data, "source_checkout", lambda: None)
    with pytest.raises(LayoutsimError, match="source checkout only; this layoutsim is installed at"):
        D.writable_catalog()
    assert cli.main(["discover", "--apply", str(_recorded(tmp_path, DOC))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "source checkout only" in err
    assert D.writable_catalog(tmp_path / "x.json") == tmp_path / "x.json"     # a caller's own file


def test_a_source_checkout_is_a_git_work_tree_with_pyproject(tmp_path, monkeypatch):
    monkeypatch.setattr(package_data, "ROOT", tmp_path)
    assert package_data.source_checkout() is None                   # site-packages: no .git
    (tmp_path / "pyproject.toml").write_text("")
    assert package_data.source_checkout() is None
    (tmp_path / ".git").write_text("gitdir: elsewhere")             # a worktree's .git is a file
    assert package_data.source_checkout() == tmp_path


@pytest.mark.skipif(package_data.source_checkout() is None,
                    reason="layoutsim is imported from an installed copy here (CI), not from a checkout")
def test_this_checkout_is_a_source_checkout():
    root = package_data.source_checkout()
    assert D.writable_catalog() == ptx_wmma.DATA
    assert ptx_wmma.DATA.is_relative_to(root)
