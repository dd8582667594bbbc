"""The hand-written kernels of the report tests (handwritten/report.ptx) and the PTX line of an
instruction in one of them."""
from pathlib import Path

PATH = Path(__file__).resolve().parent / "handwritten" / "report.ptx"
TEXT = PATH.read_text()
KERNEL = str(PATH)


def line_of(entry, text):
    """The PTX line of the first instruction of kernel `entry` that starts with `text`."""
    lines = TEXT.splitlines()
    start = next(i for i, ln in enumerate(lines) if f".entry {entry}(" in ln)
    return next(i + 1 for i in range(start, len(lines)) if lines[i].strip().startswith(text))
