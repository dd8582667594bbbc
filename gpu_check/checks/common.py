"""Results and readable diffs shared by every check group."""
from dataclasses import asdict, dataclass, field

import numpy as np

from layoutsim.formats import show
from layoutsim.packing import slot_values

MAX_DETAILS = 12


@dataclass
class Mismatch:
    case: int
    where: str            # "lane 13 c2 (reg 2) = D[11][2]" / "smem byte 0x246 ..."
    fmt: str
    expected: int
    got: int
    note: str = ""

    def text(self):
        s = f"case {self.case}: {self.where}: expected {show(self.fmt, self.expected)}, got {show(self.fmt, self.got)}"
        return s + (f"  [{self.note}]" if self.note else "")


@dataclass
class Result:
    group: str            # layouts / numerics / banks / amd-compile
    entry: str            # instruction (catalog name) or pattern name
    check: str            # c_ids, onehot, smallint, ids, e2e, random, ...
    cases: int = 0
    compared: int = 0     # elements (or counters) compared
    mismatches: int = 0
    details: list = field(default_factory=list)     # [Mismatch]
    explain: list = field(default_factory=list)     # extra lines (one-hot pairing, ...)
    status: str = "pass"  # pass / fail / skip / error
    note: str = ""

    def finish(self):
        if self.status == "pass" and self.mismatches:
            self.status = "fail"
        return self

    def to_json(self):
        d = asdict(self)
        d["details"] = [dict(asdict(m), text=m.text()) for m in self.details]
        return d

    def diff_text(self, indent="    "):
        head = f"MISMATCH {self.entry} [{self.group}/{self.check}]: {self.mismatches} of {self.compared} " \
               f"elements differ over {self.cases} cases"
        if self.status == "error":
            head = f"ERROR {self.entry} [{self.group}/{self.check}]: {self.note}"
        elif not self.details and self.note:
            head = f"FAIL {self.entry} [{self.group}/{self.check}]: {self.note}"
        lines = [head] + [indent + m.text() for m in self.details]
        if self.mismatches > len(self.details) and self.details:
            lines.append(f"{indent}... {self.mismatches - len(self.details)} more")
        lines += [indent + e for e in self.explain]
        return "\n".join(lines)


def operand_label(frag, lane, reg, slot, letter):
    m, r, c = (int(x) for x in frag.table[lane, reg, slot])
    mat = f"{letter}{m}" if frag.shape[0] > 1 else letter
    lo, hi = frag.bit_range(slot)
    bits = f" bits {lo}-{hi}" if frag.slots > 1 else ""
    return f"lane {lane} {frag.name(reg, slot)} (reg {reg}{bits}) = {mat}[{r}][{c}]"


def diff_fragment(frag, fmt, expected_words, got_words, letter="D", limit=MAX_DETAILS, case_ids=None):
    """Compare register words through a fragment: (mismatch count, compared count, [Mismatch])."""
    e = slot_values(frag, expected_words)
    g = slot_values(frag, got_words)
    used = np.broadcast_to(frag.table[..., 0] >= 0, e.shape)
    bad = (e != g) & used
    pos = np.argwhere(bad)
    details = []
    for case, lane, reg, slot in pos[:limit]:
        cid = int(case) if case_ids is None else int(case_ids[case])
        details.append(Mismatch(cid, operand_label(frag, lane, reg, slot, letter), fmt,
                                int(e[case, lane, reg, slot]), int(g[case, lane, reg, slot])))
    return int(bad.sum()), int(used.sum()), details
