"""The README's test command on a bare machine (Python only: no clang, no CUDA toolkit, no GPU):
what needs a program skips naming it, and fails instead where GPU_CHECK_REQUIRE_ALL_TARGETS is
set (CI); every documented command runs from the repository root, and a command written for
docs/ fails the doc tests."""
import os
import re
import shlex

import pytest

import test_doc_blocks as T
import test_doc_outputs as O
import tool_needs
from doc_root import build_cookbook as CB
from gpu_check.backends.hip import REQUIRE_ENV

ABSENT = "no-such-program-i22"


def _page(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text)
    return T.blocks(page)


def _run(block, tmp_path, monkeypatch):
    lang, code, _, skip, expected, needs = block
    T.run_block(lang, code, skip, expected, needs, tmp_path, monkeypatch)


# ---- the needs marker --------------------------------------------------------------------------

def test_a_block_needing_an_absent_program_skips_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    (block,) = _page(tmp_path, f"<!-- needs: {ABSENT}, sh -->\n```sh\n{ABSENT} --version\n```\n")
    assert block[5] == [ABSENT, "sh"]
    with pytest.raises(pytest.skip.Exception, match=rf"^needs {ABSENT} \(not installed\)$"):
        _run(block, tmp_path, monkeypatch)


def test_a_block_whose_programs_are_here_runs(tmp_path, monkeypatch):
    (block,) = _page(tmp_path, "<!-- needs: sh -->\n```sh\nsh -c 'exit 3'\n```\n")
    with pytest.raises(AssertionError):            # it ran: its exit code 3 fails it
        _run(block, tmp_path, monkeypatch)


def test_a_needs_marker_naming_no_program_fails(tmp_path, monkeypatch):
    (block,) = _page(tmp_path, "<!-- needs: -->\n```sh\nlayoutsim list --arch sm_90\n```\n")
    assert block[5] == []
    with pytest.raises(AssertionError, match="must name the programs"):
        _run(block, tmp_path, monkeypatch)


def test_a_skip_marker_without_a_reason_fails(tmp_path, monkeypatch):
    (block,) = _page(tmp_path, "<!-- not run in CI: -->\n```sh\nlayoutsim list --arch sm_90\n```\n")
    assert block[3] == ""
    with pytest.raises(AssertionError, match="must say why"):
        _run(block, tmp_path, monkeypatch)


@pytest.mark.parametrize("value,fails", [("1", True), ("0", False), ("", False)])
def test_the_ci_variable_turns_the_skip_into_a_failure(value, fails, monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, value)
    with pytest.raises(pytest.fail.Exception if fails else pytest.skip.Exception) as e:
        tool_needs.need(ABSENT)
    assert f"needs {ABSENT} (not installed)" in str(e.value)
    assert (REQUIRE_ENV in str(e.value)) == fails


def test_hips_gpu_check_amd_block_skips_without_clang_and_fails_in_ci(tmp_path, monkeypatch):
    """The block that failed the README's command on a machine without clang (hip.md)."""
    block = next(b for b in T.blocks(T.DOCS / "hip.md") if b[1].strip() == "gpu-check amd")
    assert block[5] and "clang-19" in block[5]
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))     # nothing on PATH: a bare machine
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"needs clang-19, .*\(not installed\)"):
        _run(block, tmp_path, monkeypatch)
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=REQUIRE_ENV):
        _run(block, tmp_path, monkeypatch)


def test_need_names_a_program():
    with pytest.raises(pytest.fail.Exception, match="names no program"):
        tool_needs.need()


# ---- one folder for every documented command: the repository root ----------------------------

def test_the_scratch_root_is_laid_out_like_the_repository(tmp_path):
    root = CB.scratch_root(tmp_path)
    for rel in CB.READS:
        assert (tmp_path / rel).exists(), rel
    assert (tmp_path / "docs" / "examples" / "transpose.sm_90.ptx").is_file()
    assert list((tmp_path / "docs" / "img").iterdir()) == []
    assert not (tmp_path / "img").exists() and not (tmp_path / "examples").exists()
    assert root == tmp_path


@pytest.mark.parametrize("docs_folder,root_folder", [
    ("layoutsim coalesce --op ld.global.b32 --addr lane*4 --picture img/c.svg",
     "layoutsim coalesce --op ld.global.b32 --addr lane*4 --picture docs/img/c.svg"),
    ("layoutsim ptx run examples/transpose.sm_90.ptx --kernel transpose_padded --grid 1 --block 32,8 "
     "--arg zeros:f32:32x32 --arg zeros:f32:32x32 --arg i32:32",
     "layoutsim ptx run docs/examples/transpose.sm_90.ptx --kernel transpose_padded --grid 1 --block 32,8 "
     "--arg zeros:f32:32x32 --arg zeros:f32:32x32 --arg i32:32"),
])
def test_a_command_written_for_docs_fails_the_doc_test(docs_folder, root_folder, tmp_path, monkeypatch):
    """The doc-block test runs each block from a root laid out like the repository: the spelling
    that works only from docs/ fails there, the root's spelling passes and writes in the scratch."""
    (bad,) = _page(tmp_path, f"```console\n$ {docs_folder}\n```\n")
    with pytest.raises(AssertionError):
        _run(bad, tmp_path / "a", monkeypatch)
    (good,) = _page(tmp_path, f"```console\n$ {root_folder}\n```\n")
    _run(good, tmp_path / "b", monkeypatch)
    if "--picture" in root_folder:
        assert (tmp_path / "b" / "root" / "docs" / "img" / "c.svg").stat().st_size > 1000


def _docs_relative(token):
    """Whether a path in a command names something that only exists from docs/ (img/, examples/)."""
    first = token.split("=")[-1].split("/")[0]
    return "/" in token and bool(first) and (T.DOCS / first).exists() and not (T.DOCS.parent / first).exists()


def _documented_commands():
    """Every command the docs show: blocks of the hand-written pages, and the commands of the
    generated pages as docs/build_cookbook.py holds them (the pages follow on regeneration)."""
    for page in sorted(T.DOCS.rglob("*.md")):
        if page.name in T.GENERATED:
            continue
        for lang, code, line, *_ in T.blocks(page):
            where = f"{page.relative_to(T.DOCS)}:{line}"
            if lang == "python":
                yield where, " ".join(re.findall(r"""["']([^"'\s]+)["']""", code))
            else:
                yield from ((where, cmd) for cmd in T.commands(lang, code))
    for rid, _, items in CB.RECIPES:
        yield from ((f"build_cookbook {rid}", it[1]) for it in items if it[0] == "sh")
    yield from ((f"build_cookbook json {name}", cmd) for name, cmd, _ in CB.JSON_EXAMPLES)


def test_no_documented_command_names_a_path_from_docs():
    commands = list(_documented_commands())
    assert len(commands) > 100
    bad = [(where, tok) for where, cmd in commands for tok in shlex.split(cmd, comments=True)
           if _docs_relative(tok)]
    assert not bad, f"write paths from the repository root (docs/img/..., docs/examples/...): {bad}"


def test_the_path_check_sees_a_docs_relative_path():
    assert _docs_relative("img/x.svg") and _docs_relative("--picture=img/x.svg")
    assert _docs_relative("examples/transpose.sm_90.ptx")
    assert not _docs_relative("docs/img/x.svg") and not _docs_relative("tests/data/kernels/a.ptx")
    assert not _docs_relative("c.svg") and not _docs_relative("(lane//8)*16")


def test_cookbook_pictures_are_drawn_in_the_scratch_root_and_copied_to_the_page(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    md, problems = CB.build_cookbook(str(out), only=["lane13"])
    assert not problems
    assert "-o docs/img/mma-C-lane13.svg" in md and "(img/mma-C-lane13.svg)" in md
    assert (out / "img" / "mma-C-lane13.svg").stat().st_size > 10000
    assert sorted(os.listdir(out)) == ["img"]           # nothing else is written where the page goes


# ---- outputs the docs show where ptxas ran ------------------------------------------------------

def test_a_run_without_ptxas_is_compared_without_its_note(monkeypatch):
    from layoutsim.ptx import lowering, sass
    note = f"note: {sass.NOT_CONSULTED} (install ptxas (the CUDA toolkit))"
    got, shown = f"line 1\n{note}\nline 2", "line 1\nline 2"
    monkeypatch.setattr(lowering, "find_ptxas", lambda: None)
    assert O.as_shown(got, shown) == shown
    assert O.as_shown(got, got) == got                   # the page shows the note: keep it
    monkeypatch.setattr(lowering, "find_ptxas", lambda: "/bin/true")
    monkeypatch.setattr(lowering, "find_nvdisasm", lambda: "/bin/true")
    assert O.as_shown(got, shown) == got                 # tools here: the note is a difference
