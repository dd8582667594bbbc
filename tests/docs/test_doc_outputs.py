"""The pages whose blocks show what a command prints: every `$ layoutsim ...` console block's
output, and every Python block followed by its output (an "Output:" block or a ```text block),
is what it prints now, run from the root of the repository as the docs say (in a scratch root,
docs/build_cookbook.py `scratch_root`, so nothing is written into the checkout), and every picture
a page's command draws into docs/img is the one committed there. tests/docs/test_doc_blocks.py
runs the other blocks; it leaves these to this file where they are slow or exit 1 by design.

    python tests/docs/test_doc_outputs.py --update     # rewrite the outputs in these pages
"""
import contextlib
import filecmp
import io
import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from doc_root import scratch_root

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# page -> (console blocks it has at least, exit codes allowed)
PAGES = {"banks.md": (10, {0}),
         "coalescing.md": (8, {0}),            # its picture lands in docs/img as the page shows
         "ptx.md": (3, {0}),
         "smem.md": (6, {0, 1})}               # `desc check` exits 1 when it finds a problem
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


def run_command(page, command, root):
    """What `command` prints, run in the scratch root `root`."""
    from layoutsim.cli import main
    buf = io.StringIO()
    with _in(root, buf):
        rc = main(shlex.split(command)[1:])
    assert rc in PAGES[page][1], (page, command, rc)
    return buf.getvalue()


def run_python(page, code, root):
    buf = io.StringIO()
    with _in(root, buf):
        exec(compile(code, str(DOCS / page), "exec"), {"__name__": "__docs__"})
    return buf.getvalue()


def pictures(root):
    """The pictures the page's commands drew: names under root/docs/img."""
    return sorted(os.listdir(os.path.join(root, "docs", "img")))


def normalize(text):
    return SECONDS.sub("N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


def as_shown(got, shown):
    """`got` without the note of a run that could not consult ptxas (no CUDA toolkit, as on a
    bare machine) when the page, made where ptxas is, does not show it: the costs must still be
    the page's."""
    from layoutsim.ptx import lowering, sass
    if lowering.find_ptxas() and lowering.find_nvdisasm() or sass.NOT_CONSULTED in shown:
        return got
    # the fidelity line's contraction clause says where ptxas's multiply-adds came from: without
    # ptxas it says they are not known; the page shows the line as ptxas gives it
    clause = "fidelity: ptxas's multiply-adds"
    page = [ln for ln in shown.splitlines() if ln.startswith(clause)]
    lines = [ln for ln in got.splitlines() if not ln.startswith(f"note: {sass.NOT_CONSULTED} (install ")]
    return "\n".join(page.pop(0) if ln.startswith(clause) and page else ln for ln in lines)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_outputs_are_current(page, tmp_path):
    root = scratch_root(tmp_path)
    text = (DOCS / page).read_text()
    blocks = CONSOLE.findall(text)
    assert len(blocks) >= PAGES[page][0]
    for command, shown in blocks:
        got = as_shown(run_command(page, command, root), shown)
        assert normalize(got) == normalize(shown), f"docs/{page} is stale for: {command}"
    for code, _, shown in PYTHON.findall(text):
        got = as_shown(run_python(page, code, root), shown)
        assert normalize(got) == normalize(shown), f"docs/{page}: stale Python block"
    for name in pictures(root):
        assert f"(img/{name})" in text, f"docs/{page} draws docs/img/{name} but does not show it"
        assert filecmp.cmp(os.path.join(root, "docs", "img", name), DOCS / "img" / name, shallow=False), \
            f"docs/img/{name} is not what docs/{page} draws now: python tests/docs/test_doc_outputs.py --update"


def test_python_outputs_are_found():
    """The pages that show Python output have it matched (a broken pattern must not pass silently)."""
    for page in ("coalescing.md", "ptx.md"):
        text = (DOCS / page).read_text()
        assert PYTHON.findall(text), page


def update():
    for page in PAGES:
        path = DOCS / page
        with tempfile.TemporaryDirectory(prefix="doc-outputs-") as tmp:
            root = scratch_root(tmp)
            text = CONSOLE.sub(lambda m: f"```console\n$ {m.group(1)}\n{run_command(page, m.group(1), root).rstrip()}\n```",
                               path.read_text())
            text = PYTHON.sub(lambda m: f"```python\n{m.group(1)}```{m.group(2)}"
                                        f"{run_python(page, m.group(1), root).rstrip()}\n```", text)
            for name in pictures(root):
                shutil.copyfile(os.path.join(root, "docs", "img", name), DOCS / "img" / name)
        path.write_text(text)
        print(f"updated {path}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
