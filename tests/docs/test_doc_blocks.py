"""Every Python and shell block of docs/ runs as written.

- Every block runs from the root of the repository, as the docs say (docs/index.md): in a
  scratch folder laid out like it (docs/build_cookbook.py `scratch_root`: copies of the files the
  commands read, an empty docs/img), so no run writes into the checkout and a command written
  for another folder (`-o img/x.svg`, `examples/k.ptx` from docs/) fails.
- ```python blocks run one by one, each in a fresh namespace (a reader copies one block). A
  python block followed by an unlabelled block under a line starting with "Output" must print
  exactly that output.
- ```sh blocks run through bash (-e), with this Python's scripts first on PATH; ```console
  blocks and unlabelled blocks run their `$ ` lines. No stderr line may hold a traceback.
  `pip install` lines are skipped: the package is installed already.
- A block preceded by `<!-- not run in CI: REASON -->` is skipped; the reason is required.
- A block preceded by `<!-- needs: PROGRAM, ... -->` (clang-19, ...) runs where every program is
  on PATH; elsewhere it skips with "needs PROGRAM (not installed)", except where
  GPU_CHECK_REQUIRE_ALL_TARGETS is set (CI, after installing them): there it fails
  (tests/tool_needs.py). A marker must name a program.
- cookbook.md, cli.md and json.md are made by running their blocks (`docs/build_cookbook.py
  --check` in CI re-runs them all and compares), so they are not run again here.
- `$ layoutsim ...` outputs (and Python outputs) of banks.md, coalescing.md, ptx.md and smem.md
  are compared by tests/docs/test_doc_outputs.py.
"""
import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doc_root import scratch_root
from tool_needs import need

DOCS = Path(__file__).resolve().parents[2] / "docs"
GENERATED = {"cookbook.md", "cli.md", "json.md"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
SKIP = re.compile(r"<!--\s*not run in CI:\s*(.*?)\s*-->\s*$")
NEEDS = re.compile(r"<!--\s*needs:\s*(.*?)\s*-->\s*$")


def blocks(page):
    """(lang, code, line, skip reason or None, expected output or None, needed programs or None)
    for each fenced block; `needs` is a list (empty for a marker that names none)."""
    text = page.read_text(encoding="utf-8")
    found = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(found):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip, needs = SKIP.search(before), NEEDS.search(before)
        expected = None
        if m.group(1) == "python" and i + 1 < len(found) and found[i + 1].group(1) == "":
            between = text[m.end():found[i + 1].start()].strip()
            if between.startswith("Output") and "\n" not in between:
                expected = found[i + 1].group(2)
        out.append((m.group(1), m.group(2), text[:m.start()].count("\n") + 1,
                    skip.group(1) if skip else None, expected,
                    re.findall(r"[^\s,]+", needs.group(1)) if needs else None))
    return out


def commands(lang, code):
    """Shell command lines of a block (continuations joined), or [] when it holds none."""
    lines = code.replace("\\\n", " ").splitlines()
    if lang == "sh":
        return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return [ln[2:] for ln in lines if ln.startswith("$ ")]


def cases():
    for page in sorted(DOCS.rglob("*.md")):
        if page.name in GENERATED:
            continue
        for lang, code, line, skip, expected, needs in blocks(page):
            if lang == "python" or (lang in ("sh", "console", "") and commands(lang, code)):
                yield pytest.param(lang, code, skip, expected, needs, id=f"{page.relative_to(DOCS)}:{line}")


@pytest.mark.parametrize("lang,code,skip,expected,needs", list(cases()))
def test_doc_block_runs(lang, code, skip, expected, needs, tmp_path, monkeypatch):
    run_block(lang, code, skip, expected, needs, tmp_path, monkeypatch)


def run_block(lang, code, skip, expected, needs, tmp_path, monkeypatch):
    """Run one block from a scratch root in tmp_path (skip, or fail, as the module says)."""
    if skip is not None:
        assert skip, "a skipped block must say why"
        pytest.skip(f"not run in CI: {skip}")
    if needs is not None:
        assert needs, "a needs marker must name the programs the block needs"
        need(*needs)
    monkeypatch.chdir(scratch_root(tmp_path / "root"))
    if lang == "python":
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "<doc block>", "exec"), {"__name__": "__doc_block__"})
        if expected is not None:
            assert _same(buf.getvalue(), expected), buf.getvalue()
        return
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for cmd in commands(lang, code):
        if cmd.split()[:2] == ["pip", "install"]:
            continue
        p = subprocess.run(["bash", "-e", "-c", cmd], capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (cmd, p.returncode, p.stderr[-2000:])


def _same(got, want):
    norm = [ln.rstrip() for ln in got.strip().splitlines()]
    return norm == [ln.rstrip() for ln in want.strip().splitlines()]


def test_blocks_are_found():
    """The extraction sees the blocks this file is about (a broken regex must not pass silently)."""
    found = list(cases())
    langs = {p.values[0] for p in found}
    assert len(found) >= 25 and {"python", "sh", "console"} <= langs
    assert any(p.values[3] is not None for p in found)          # sim.md's printed trace
