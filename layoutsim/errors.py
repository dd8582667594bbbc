"""One exception type for bad input: the CLI prints its message on one line and exits 2."""
import difflib
import numbers


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


def integer(value, what, lo=None, hi=None):
    """`value` as a Python int if it is an integer (not a bool, not a float) in lo..hi; else a
    one-line error naming `what` and the range. Check sizes with this before allocating."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise LayoutsimError(f"{what} must be an integer, not {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lo_s = "" if lo is None else f"{lo}"
        hi_s = "" if hi is None else f"{hi}"
        shown = str(v) if len(str(v)) <= 24 else f"{str(v)[:12]}...({len(str(v))} digits)"
        raise LayoutsimError(f"{what} {shown} is out of range; valid: {lo_s}..{hi_s}")
    return v


def _escaped(text):
    """Every character of `text` that str.isprintable refuses (C0 and C1 controls with ESC, DEL,
    bidi overrides and other format characters, line separators) escaped as in a string literal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


def printable(text):
    """`text` safe to print on a terminal: its lines kept, every other control character escaped
    (`_escaped`), so strings read from a file (a crafted report) cannot send escape sequences."""
    return "\n".join(_escaped(line) for line in str(text).split("\n"))


def one_line(text, limit=1000):
    """`text` on one line: newlines and other control characters escaped as in a Python string
    literal (so a name with a newline in it cannot split an error message), cut at `limit`."""
    out = _escaped(text)
    return out if len(out) <= limit else out[:limit] + f"... ({len(out) - limit} more characters)"
