"""mma.sync: in[case][lane][A words | B words | C words], out[case][lane][D words].

Each warp of a block runs its own cases; the registers of every operand are loaded from the
case's words as they are and D is stored as it is: which element a register holds is decided
on the host through the catalog's maps (`layoutsim.packing`). Probes: `operand_maps`.
"""
import numpy as np

from layoutsim.packing import pack, squeeze_matrices, unpack, words_per_lane

from ..codegen import cuda
from .base import Probe
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
    """sm_120a's mma.sync .kind:: forms. The block-scaled ones read scale-a-data / scale-b-data from
    the case's words (after C: operands SFA, SFB of the catalog entry, {byte-id, thread-id} = {0, 0}):
    the exact probes give unit scales in every byte of every lane (D = A.B + C), and the probe
    `scales` random non-unit ones in the catalog's SFA/SFB positions (other bytes random), its
    expected D layoutsim.mma's of the same A, B, C and scales: the scale registers' map and the
    block-scaled arithmetic in one. FP4 in an 8-bit container (.kind::f8f6f4 / mxf8f6f4 with e2m1)
    sits in bits 5-2 of its byte (MMA-Sim's container), which the catalog's low-bits packing does
    not give: those entries are left out."""
    kind = "mma_kind"
    catalog_families = ("mma_kind",)
    checked_by = ("layouts",)       # the numerics group's cases carry no scale factors

    def __init__(self, instr):
        self.extra_in = ("SFA", "SFB") if "SFA" in instr.operands else ()
        super().__init__(instr)

    @classmethod
    def supports(cls, instr):
        f = instr.formats
        return instr.family in cls.catalog_families and not (
            instr.shape[2] == 32 and "e2m1" in (f["a"], f["b"]))

    def _scale_operands(self, k):
        if not self.extra_in:
            return "", []
        off = self.wa + self.wb + self.wc
        return (f", %{k}, {{0, 0}}, %{k + 1}, {{0, 0}}", [f'"r"(p[{off}])', f'"r"(p[{off + 1}])'])

    def pack_inputs(self, a, b, c, extra=None):
        if self.extra_in and extra is None:          # the exact probes: unit scales in every byte
            words = super().pack_inputs(a, b, c, {x: np.zeros((len(a), *self.instr.operand(x).fragment.shape[1:]),
                                                              np.uint8) for x in self.extra_in})
            w = words.reshape(len(a), self.lanes, self.lane_in)
            w[..., -2:] = UNIT_SCALE[self.instr.formats["scale"]] * 0x01010101
            return w.reshape(len(a), -1)
        return super().pack_inputs(a, b, c, extra)

    def probes(self, rng, smallint_cases=8):
        out = super().probes(rng, smallint_cases)
        if self.extra_in:
            out.append(self._scale_probe(rng, smallint_cases))
        return out

    def _scale_probe(self, rng, cases):
        """Random A, B, C (no NaN/Inf inputs) and non-unit scales; the other scale bytes random."""
        f, (m, n, k) = self.instr.formats, self.instr.shape
        a, b = (_finite(rng, f[x], shape) for x, shape in (("a", (cases, m, k)), ("b", (cases, k, n))))
        c = rng.standard_normal((cases, m, n)).astype(np.float32).view(np.uint32)
        lo, hi = (120, 135) if f["scale"] == "ue8m0" else (0x28, 0x68)     # 2^-7..2^7; 0.25..~30
        sa, sb = (rng.integers(lo, hi, (cases, *self.instr.operand(x).fragment.shape[1:])).astype(np.uint8)
                  for x in self.extra_in)
        noise = [rng.integers(0, 1 << 32, (cases, self.lanes, 1), dtype=np.uint64).astype(np.uint32)
                 for _ in self.extra_in]
        words = self.pack_inputs(a, b, c, {"SFA": sa, "SFB": sb}).reshape(cases, self.lanes, self.lane_in)
        for i, x in enumerate(self.extra_in):       # bytes no scale uses: random
            frag = self.instr.operand(x).fragment
            used = pack(frag, np.full((1, *frag.shape[1:]), 0xFF, np.uint8))[0]
            col = self.lane_in - 2 + i
            words[..., col] = (words[..., col] & used[:, 0]) | (noise[i][..., 0] & ~used[:, 0])
        return Probe("scales", words.reshape(cases, -1), {})

    def compare(self, check, inp, out, meta, aux=None):
        if check != "scales":
            return super().compare(check, inp, out, meta, aux)
        import layoutsim
        from ..checks.common import Result, diff_fragment
        a, b, c = self.unpack_inputs(inp)
        x = self.unpack_extra(inp)
        d = layoutsim.mma(self.instr, a, b, c.view(np.float32), arch=self.instr.archs[0], raw=True,
                          scale_a=x["SFA"], scale_b=x["SFB"])
        got = self.d_words(out)
        bad, compared, details = diff_fragment(self.fd, self.fmt["d"], self.pack_d(d), got, letter="D")
        return Result("layouts", self.entry, check, cases=len(got), compared=compared, mismatches=bad,
                      details=details).finish()


def _finite(rng, fmt, shape):
    """Random raw bits of an FP8/FP6/FP4 format, NaN and Inf patterns replaced by 0."""
    from layoutsim.formats import get_format
    x = rng.integers(0, 1 << get_format(fmt).bits, shape).astype(np.uint8)
    nan = {"e4m3": (x & 0x7F) == 0x7F, "e5m2": (x & 0x7C) == 0x7C}.get(fmt)
    return np.where(nan, 0, x).astype(np.uint8) if nan is not None else x
