"""syntax.split_top (a regular expression visits only brackets and separators) splits as the
plain character-by-character reading of its contract does: at `sep` outside brackets, braces
and parentheses, parts stripped (checked on random strings of those characters)."""
import random

from layoutsim.ptx import syntax as S


def _reference(text, sep):
    parts, depth, cur = [], 0, []
    for c in text:
        depth = S._nest(c, depth, repr(text[:40]))
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    last = "".join(cur).strip()
    return parts + [last] if last or parts else parts


def test_split_top_matches_the_character_reading():
    rng = random.Random(0)
    for _ in range(20000):
        t = "".join(rng.choice("ab ,()[]{}%x1+;") for _ in range(rng.randint(0, 20)))
        for sep in (",", ";"):
            assert S.split_top(t, sep) == _reference(t, sep), (t, sep)
