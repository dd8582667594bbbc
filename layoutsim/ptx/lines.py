"""Where an instruction is, in the words every refusal and fault of the executor uses:
'line 12 (scale.cu:34)': the PTX line and, when the PTX's .loc gives it, the CUDA source line."""


def at(line, cuda=None):
    """'line 12 (scale.cu:34)' for PTX line `line` and cuda = (path, line) or None."""
    return f"line {line}" + (f" ({cuda[0].rsplit('/', 1)[-1]}:{cuda[1]})" if cuda else "")


def of(ins):
    """at() of an instruction (its CUDA line is ins.extra['cuda'], set when the program expands it)."""
    return at(ins.line, ins.extra.get("cuda"))
