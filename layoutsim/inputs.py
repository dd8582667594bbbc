"""Small values written as text on the command line: integers, ROW,COL pairs, ROWSxCOLS shapes,
ranges of lanes or rows, lane masks. Each is parsed and bounded here, once, before anything is
built from it (a range is checked before it is expanded), and bad text gets one LayoutsimError
naming the value and the form wanted."""
from .errors import LayoutsimError, integer

LANES = 32
_MAX_DIGITS = 30          # no count, size or offset in the model needs more; int() of longer text is slow


def parse_int(text, what, lo=None, hi=None):
    """An integer written in decimal (or 0x.. / 0b..), checked to lie in lo..hi."""
    t = str(text).strip().replace("_", "")
    if len(t) > _MAX_DIGITS + 3:
        raise LayoutsimError(f"{what}: {t[:20]}... has {len(t)} characters; no valid value is that long")
    try:
        v = int(t, 0)
    except ValueError:
        raise LayoutsimError(f"{what} wants an integer, not {str(text)!r}") from None
    return integer(v, what, lo, hi)


def pair(text, what, lo=None, hi=None):
    """'ROW,COL' -> (row, col), each in lo..hi."""
    parts = str(text).replace(" ", "").split(",")
    if len(parts) != 2:
        raise LayoutsimError(f"{what} wants ROW,COL (two integers), not {str(text)!r}")
    return tuple(parse_int(p, what, lo, hi) for p in parts)


def shape(text, what="--tile", hi=1 << 20):
    """'ROWSxCOLS' -> (rows, cols), each 1..hi."""
    parts = str(text).lower().replace(" ", "").split("x")
    if len(parts) != 2:
        raise LayoutsimError(f"{what} wants ROWSxCOLS, e.g. 64x32, not {str(text)!r}")
    return tuple(parse_int(p, f"{what} {'rows' if i == 0 else 'cols'}", 1, hi) for i, p in enumerate(parts))


def ranges(text, count, what="lane", where="valid"):
    """'13', '0-7', '0-3,16-19' -> sorted list of values, each in 0..count-1 (checked before a
    range is expanded, so '0-100000000' costs nothing)."""
    form = f"give {what}s like 13, 0-7 or 0-3,16-19"
    out = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        ends = part.split("-")
        if len(ends) > 2 or not all(e.isdigit() for e in ends):
            raise LayoutsimError(f"bad {what} list {str(text)!r}: {form}")
        lo, hi = (_member(e, text, count, what, where) for e in (ends[0], ends[-1]))
        if hi < lo:
            raise LayoutsimError(f"bad {what} list {str(text)!r}: range {lo}-{hi} runs backwards")
        out.update(range(lo, hi + 1))
    if not out:
        raise LayoutsimError(f"bad {what} list {str(text)!r}: {form}")
    return sorted(out)


def _member(digits, text, count, what, where):
    if len(digits) > len(str(count)) or int(digits) >= count:
        shown = digits if len(digits) <= 12 else digits[:12] + "..."
        raise LayoutsimError(f"{what} {shown} out of range in {str(text)!r}: {where} 0-{count - 1}")
    return int(digits)


def lane_mask(text, lanes=LANES):
    """Active lanes as a bit mask: a number (0xffff, 0b1011) or lane ranges (0-15,20); None -> None."""
    if text is None:
        return None
    t = str(text).strip().lower()
    if t.startswith(("0x", "0b")):
        m = parse_int(t, "--active mask")
        if not 0 <= m < 1 << lanes:
            raise LayoutsimError(f"--active mask {t[:20]} does not fit {lanes} lanes (0 .. {(1 << lanes) - 1:#x})")
        return m
    return sum(1 << lane for lane in ranges(t, lanes, "lane", "a warp has lanes"))
