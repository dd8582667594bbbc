"""The pages whose blocks show what a command prints: every `$ layoutsim ...` console block's
output, and every Python block followed by its output (an "Output:" block or a ```text block),
is what it prints now. tests/docs/test_doc_blocks.py runs the other blocks; it leaves these to
this file where they must run from a given folder or exit 1 by design.

    python tests/docs/test_doc_outputs.py --update     # rewrite the outputs in these pages
"""
import contextlib
import io
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# page -> (console blocks it has at least, the folder its commands run in, exit codes allowed)
PAGES = {"banks.md": (10, DOCS, {0}),          # pictures land in docs/img as the page shows
         "coalescing.md": (8, DOCS, {0}),
         "ptx.md": (3, ROOT, {0}),             # kernels named from the repository root
         "smem.md": (6, ROOT, {0, 1})}         # `desc check` exits 1 when it finds a problem
CONSOLE = re.compile(r"```console\n\$ (layoutsim [^\n]*)\n(.*?)```", re.S)
PYTHON = re.compile(r"```python\n(.*?)```(\n\nOutput:\n\n```\n|\n\n```text\n)(.*?)```", re.S)
SECONDS = re.compile(r"\d+\.\d+ s\b")


@contextlib.contextmanager
def _in(folder, buf):
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(buf):
            yield
    finally:
        os.chdir(cwd)


def run_command(page, command):
    from layoutsim.cli import main
    _, folder, codes = PAGES[page]
    buf = io.StringIO()
    with _in(folder, buf):
        rc = main(shlex.split(command)[1:])
    assert rc in codes, (page, command, rc)
    return buf.getvalue()


def run_python(page, code):
    buf = io.StringIO()
    with _in(PAGES[page][1], buf):
        exec(compile(code, str(DOCS / page), "exec"), {"__name__": "__docs__"})
    return buf.getvalue()


def normalize(text):
    return SECONDS.sub("N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_outputs_are_current(page):
    text = (DOCS / page).read_text()
    blocks = CONSOLE.findall(text)
    assert len(blocks) >= PAGES[page][0]
    for command, shown in blocks:
        assert normalize(run_command(page, command)) == normalize(shown), f"docs/{page} is stale for: {command}"
    for code, _, shown in PYTHON.findall(text):
        assert normalize(run_python(page, code)) == normalize(shown), f"docs/{page}: stale Python block"


def test_python_outputs_are_found():
    """The pages that show Python output have it matched (a broken pattern must not pass silently)."""
    for page in ("coalescing.md", "ptx.md"):
        text = (DOCS / page).read_text()
        assert PYTHON.findall(text), page


def update():
    for page in PAGES:
        path = DOCS / page
        text = CONSOLE.sub(lambda m: f"```console\n$ {m.group(1)}\n{run_command(page, m.group(1)).rstrip()}\n```",
                           path.read_text())
        text = PYTHON.sub(lambda m: f"```python\n{m.group(1)}```{m.group(2)}{run_python(page, m.group(1)).rstrip()}\n```",
                          text)
        path.write_text(text)
        print(f"updated {path}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
