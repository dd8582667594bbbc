"""docs/ptx.md runs: every `$ layoutsim ...` block shows what the command prints now, and every
```python block followed by an Output block prints that output (run from the repository root).

    python tests/ptx/test_ptx_docs.py --update     # rewrite the outputs in docs/ptx.md
"""
import contextlib
import io
import os
import re
import shlex
import sys
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ptx.md"
CONSOLE = re.compile(r"```console\n\$ (layoutsim [^\n]*)\n(.*?)```", re.S)
PYTHON = re.compile(r"```python\n(.*?)```\n\nOutput:\n\n```\n(.*?)```", re.S)
SECONDS = re.compile(r"\d+\.\d+ s\b")


@contextlib.contextmanager
def _at_root(buf):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with redirect_stdout(buf):
            yield
    finally:
        os.chdir(cwd)


def run_command(command):
    from layoutsim.cli import main
    buf = io.StringIO()
    with _at_root(buf):
        rc = main(shlex.split(command)[1:])
    assert rc == 0, (command, rc)
    return buf.getvalue()


def run_python(code):
    buf = io.StringIO()
    with _at_root(buf):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    return buf.getvalue()


def normalize(text):
    return SECONDS.sub("N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


def test_console_blocks_are_current():
    blocks = CONSOLE.findall(DOC.read_text())
    assert len(blocks) >= 3
    for command, shown in blocks:
        assert normalize(run_command(command)) == normalize(shown), f"docs/ptx.md is stale for: {command}"


def test_python_blocks_print_their_output():
    blocks = PYTHON.findall(DOC.read_text())
    assert blocks
    for code, shown in blocks:
        assert normalize(run_python(code)) == normalize(shown)


def update():
    text = DOC.read_text()
    text = CONSOLE.sub(lambda m: f"```console\n$ {m.group(1)}\n{run_command(m.group(1)).rstrip()}\n```", text)
    text = PYTHON.sub(lambda m: f"```python\n{m.group(1)}```\n\nOutput:\n\n```\n{run_python(m.group(1)).rstrip()}\n```",
                      text)
    DOC.write_text(text)


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
        print(f"updated {DOC}")
