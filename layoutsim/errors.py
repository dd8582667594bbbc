"""One exception type for bad input: the CLI prints its message on one line and exits 2."""
import difflib


class LayoutsimError(ValueError):
    """Bad user input (unknown name, value out of range, shape mismatch, ...)."""


def suggest(value, choices, n=3):
    """' (did you mean: a, b?)' for the closest choices, or '' when nothing is close."""
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=n, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def choose(kind, value, choices):
    """Return value if it is one of choices, else raise naming the valid choices."""
    if value in choices:
        return value
    shown = ", ".join(str(c) for c in choices)
    raise LayoutsimError(f"unknown {kind} {value!r}{suggest(value, choices)}; valid: {shown}")
