"""mma.sync: in[case][lane][A words | B words | C words], out[case][lane][D words].

Each warp of a block runs its own cases; the registers of every operand are loaded from the
case's words as they are and D is stored as it is: which element a register holds is decided
on the host through the catalog's maps (`layoutsim.packing`). Probes: `operand_maps`.
"""
import numpy as np

from layoutsim.packing import pack, squeeze_matrices, unpack, words_per_lane

from ..codegen import cuda
from .operand_maps import OperandMapSpec


class MmaSpec(OperandMapSpec):
    """mma.sync with every operand in registers."""
    kind = "mma"
    catalog_families = ("mma",)
    checked_by = ("layouts", "numerics")
    named_by_entry = True

    def __init__(self, instr):
        super().__init__(instr)
        ops = instr.operands
        self.fa, self.fb, self.fc, self.fd = (ops[x].fragment for x in "ABCD")
        self.lanes = self.d_threads = self.fd.lanes
        self.wa, self.wb, self.wc, self.wd = (words_per_lane(f) for f in (self.fa, self.fb, self.fc, self.fd))
        self.wx = sum(words_per_lane(ops[x].fragment) for x in self.extra_in)
        self.lane_in = self.wa + self.wb + self.wc + self.wx
        self.in_words = self.lanes * self.lane_in
        self.out_words = self.lanes * self.wd
        self.fmt = {x.lower(): ops[x].fmt for x in "ABCD"}

    def _scale_operands(self, k):
        """Text after C (none here; MmaKindSpec's block scales)."""
        return "", []

    def body(self):
        ops = self.instr.operands
        loads, ins, stores = [], [], []
        off = 0
        groups = []
        for key, prefix in (("A", "a"), ("B", "b"), ("C", "c")):
            names, c, wpr = cuda.registers(prefix, ops[key])
            for i, v in enumerate(names):
                loads.append(cuda.load(v, c, "p", off + i * wpr))
            off += len(names) * wpr
            groups.append((names, c))
        dnames, dc, dw = cuda.registers("d", ops["D"])
        loads += [f"{cuda.ctype(dc)} {v};" for v in dnames]
        stores += [cuda.store(v, dc, "q", i * dw) for i, v in enumerate(dnames)]
        n = len(dnames)
        text = f"{self.entry} {cuda.operand_list(0, n)}"
        k = n
        for names, c in groups:
            text += f", {cuda.operand_list(k, len(names))}"
            ins += [f'"{c}"({v})' for v in names]
            k += len(names)
        more, more_ins = self._scale_operands(k)
        text += more
        ins += more_ins
        outs = [f'"={dc}"({v})' for v in dnames]
        head, loop = cuda.warp_loop([f"const unsigned *p = in + ((size_t)cs * 32 + lane) * {self.lane_in};",
                                     f"unsigned *q = out + ((size_t)cs * 32 + lane) * {self.wd};",
                                     *loads, cuda.asm(text + ";", outs, ins), *stores])
        return cuda.lines(head, loop)

    # host side ------------------------------------------------------------------------
    def pack_inputs(self, a, b, c, extra=None):
        parts = [pack(self.fa, a), pack(self.fb, b), pack(self.fc, c)]
        for x in self.extra_in:
            parts.append(pack(self.instr.operands[x].fragment, extra[x]))
        words = np.concatenate(parts, axis=2)
        return words.reshape(len(words), -1)

    def _lane_words(self, inp):
        return np.asarray(inp, np.uint32).reshape(-1, self.lanes, self.lane_in)

    def unpack_inputs(self, inp):
        """A, B, C raw bits [cases, rows, cols] ([cases, blocks, rows, cols] for a multi-block MFMA)."""
        w = self._lane_words(inp)
        a = squeeze_matrices(unpack(self.fa, w[..., :self.wa]))
        b = squeeze_matrices(unpack(self.fb, w[..., self.wa:self.wa + self.wb]))
        c = squeeze_matrices(unpack(self.fc, w[..., self.wa + self.wb:self.wa + self.wb + self.wc]))
        return a, b, c

    def unpack_extra(self, inp):
        """{operand: raw matrix} of the operands after C (SWMMAC's IDX)."""
        w = self._lane_words(inp)
        out, off = {}, self.wa + self.wb + self.wc
        for x in self.extra_in:
            f = self.instr.operands[x].fragment
            out[x] = unpack(f, w[..., off:off + words_per_lane(f)])[:, 0]
            off += words_per_lane(f)
        return out


# The unit scale factor each scale byte holds: 2**0 in ue8m0 (bias 127), 1.0 in ue4m3.
UNIT_SCALE = {"ue8m0": 0x7F, "ue4m3": 0x38}


class MmaKindSpec(MmaSpec):
    """sm_120a's mma.sync .kind:: forms. The block-scaled ones get unit scale factors in every
    byte of scale-a-data / scale-b-data (byte-id 0, thread-id 0), so D = A.B + C and the probes
    are the plain mma.sync ones. FP4 in an 8-bit container (.kind::f8f6f4 / mxf8f6f4 with e2m1)
    sits in bits 5-2 of its byte (MMA-Sim's container), which the catalog's low-bits packing does
    not give: those entries are left out."""
    kind = "mma_kind"
    catalog_families = ("mma_kind",)
    checked_by = ("layouts",)       # the numerics group's cases carry no scale factors

    @classmethod
    def supports(cls, instr):
        f = instr.formats
        return instr.family in cls.catalog_families and not (
            instr.shape[2] == 32 and "e2m1" in (f["a"], f["b"]))

    def _scale_operands(self, k):
        s = self.instr.formats.get("scale")
        if not s:
            return "", []
        word = UNIT_SCALE[s] * 0x01010101
        return (f", %{k}, {{0, 0}}, %{k + 1}, {{0, 0}}", [f'"r"({word:#x}u)', f'"r"({word:#x}u)'])
