"""docs/banks.md: every `$ layoutsim ...` block's output is what the command prints now.

    python tests/banks/test_banks_docs.py --update     # rewrite the outputs in docs/banks.md
"""
import io
import re
import shlex
import sys
from contextlib import redirect_stdout
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "banks.md"
BLOCK = re.compile(r"```console\n\$ (layoutsim [^\n]*)\n(.*?)```", re.S)
TIMING = re.compile(r"in \d+\.\d+ s")


def run(command):
    from layoutsim.cli import main
    argv = shlex.split(command)[1:]
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = main(argv)
    assert rc == 0, (command, rc)
    return buf.getvalue()


def normalize(text):
    return TIMING.sub("in N s", "\n".join(line.rstrip() for line in text.strip().splitlines()))


def test_doc_outputs_are_current():
    text = DOC.read_text()
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 10
    for command, shown in blocks:
        assert normalize(run(command)) == normalize(shown), f"docs/banks.md is stale for: {command}"


def update():
    text = DOC.read_text()

    def fill(m):
        return f"```console\n$ {m.group(1)}\n{run(m.group(1)).rstrip()}\n```"
    DOC.write_text(BLOCK.sub(fill, text))


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
        print(f"updated {DOC}")
