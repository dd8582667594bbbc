"""Every Python and shell block of docs/ runs as written.

- ```python blocks run one by one, each in a fresh namespace (a reader copies one block), in a
  temporary folder. A python block followed by an unlabelled block under a line starting with
  "Output" must print exactly that output.
- ```sh blocks run through bash (-e) in a temporary folder, with this Python's scripts first on
  PATH; ```console blocks and unlabelled blocks run their `$ ` lines. No stderr line may hold a
  traceback. `pip install` lines are skipped: the package is installed already.
- A block preceded by `<!-- not run in CI: REASON -->` is skipped; the reason is required.
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

DOCS = Path(__file__).resolve().parents[2] / "docs"
GENERATED = {"cookbook.md", "cli.md", "json.md"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
SKIP = re.compile(r"<!--\s*not run in CI:\s*(.*?)\s*-->\s*$")


def blocks(page):
    """(lang, code, line, skip reason or None, expected output or None) for each fenced block."""
    text = page.read_text(encoding="utf-8")
    found = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(found):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        expected = None
        if m.group(1) == "python" and i + 1 < len(found) and found[i + 1].group(1) == "":
            between = text[m.end():found[i + 1].start()].strip()
            if between.startswith("Output") and "\n" not in between:
                expected = found[i + 1].group(2)
        out.append((m.group(1), m.group(2), text[:m.start()].count("\n") + 1,
                    skip.group(1) if skip else None, expected))
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
        for lang, code, line, skip, expected in blocks(page):
            if lang == "python" or (lang in ("sh", "console", "") and commands(lang, code)):
                yield pytest.param(lang, code, skip, expected, id=f"{page.relative_to(DOCS)}:{line}")


@pytest.mark.parametrize("lang,code,skip,expected", list(cases()))
def test_doc_block_runs(lang, code, skip, expected, tmp_path, monkeypatch):
    if skip is not None:
        assert skip, "a skipped block must say why"
        pytest.skip(f"not run in CI: {skip}")
    monkeypatch.chdir(tmp_path)
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
