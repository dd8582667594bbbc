"""docs/smem.md: every `$ layoutsim ...` block's output is what the command prints now (the
Python blocks and their "Output:" blocks are checked by tests/docs/test_doc_blocks.py).

    python tests/smem/test_smem_docs.py --update     # rewrite the outputs in docs/smem.md
"""
import io
import re
import shlex
import sys
from contextlib import redirect_stdout
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "smem.md"
CONSOLE = re.compile(r"```console\n\$ (layoutsim [^\n]*)\n(.*?)```", re.S)
TIMING = re.compile(r"in \d+\.\d+ s")


def run(command):
    from layoutsim.cli import main
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = main(shlex.split(command)[1:])
    return rc, buf.getvalue()


def normalize(text):
    return TIMING.sub("in N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


def test_console_blocks_are_current():
    blocks = CONSOLE.findall(DOC.read_text())
    assert len(blocks) >= 6
    for command, shown in blocks:
        rc, out = run(command)
        assert rc in (0, 1), (command, rc)
        assert normalize(out) == normalize(shown), f"docs/smem.md is stale for: {command}"


def update():
    def fill(m):
        return f"```console\n$ {m.group(1)}\n{run(m.group(1))[1].rstrip()}\n```"
    DOC.write_text(CONSOLE.sub(fill, DOC.read_text()))


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
        print(f"updated {DOC}")
