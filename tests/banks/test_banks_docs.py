"""docs/banks.md and docs/coalescing.md: every `$ layoutsim ...` block's output is what the
command prints now, and coalescing.md's Python blocks print the text shown after them.

    python tests/banks/test_banks_docs.py --update     # rewrite the outputs in both pages
"""
import io
import re
import shlex
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {"banks.md": 10, "coalescing.md": 8}       # page -> console blocks it has at least
PYTHON_PAGES = ("coalescing.md",)                  # pages whose Python blocks are run
BLOCK = re.compile(r"```console\n\$ (layoutsim [^\n]*)\n(.*?)```", re.S)
PY_BLOCK = re.compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", re.S)
TIMING = re.compile(r"in \d+\.\d+ s")


def run(command):
    import os
    from layoutsim.cli import main
    argv = shlex.split(command)[1:]
    buf = io.StringIO()
    cwd = os.getcwd()
    os.chdir(DOCS)                                  # pictures land in docs/img as the page shows
    try:
        with redirect_stdout(buf):
            rc = main(argv)
    finally:
        os.chdir(cwd)
    assert rc == 0, (command, rc)
    return buf.getvalue()


def run_python(code):
    buf = io.StringIO()
    with redirect_stdout(buf):
        exec(compile(code, "<doc>", "exec"), {})
    return buf.getvalue()


def normalize(text):
    return TIMING.sub("in N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_doc_outputs_are_current(page):
    text = (DOCS / page).read_text()
    blocks = BLOCK.findall(text)
    assert len(blocks) >= PAGES[page]
    for command, shown in blocks:
        assert normalize(run(command)) == normalize(shown), f"docs/{page} is stale for: {command}"
    if page in PYTHON_PAGES:
        code_blocks = PY_BLOCK.findall(text)
        assert code_blocks and text.count("```python") == len(code_blocks)
        for code, shown in code_blocks:
            assert normalize(run_python(code)) == normalize(shown), f"docs/{page}: stale Python block"


def update():
    for page in PAGES:
        path = DOCS / page

        def fill(m):
            return f"```console\n$ {m.group(1)}\n{run(m.group(1)).rstrip()}\n```"

        def fill_py(m):
            return f"```python\n{m.group(1)}```\n\n```text\n{run_python(m.group(1)).rstrip()}\n```"
        text = BLOCK.sub(fill, path.read_text())
        if page in PYTHON_PAGES:
            text = PY_BLOCK.sub(fill_py, text)
        path.write_text(text)
        print(f"updated {path}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
