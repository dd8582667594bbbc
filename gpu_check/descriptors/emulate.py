"""A CPU stand-in for the descriptor probes (dry runs and CI): it plays the GPU through the model,
with a reading of the PTX ISA chosen by the caller, so the whole host side -- images, digit
passes, fragment unpacking, decoding, comparison and the fit -- runs without a GPU, and a
simulated reading that differs from the documented one must come out of the fit.

Arithmetic is exact (float64 sums of a single product with zeros); the words follow the
kernels' layouts (kernels.py). For the fault handling (isolate.py) the fake can also fault like
a GPU: a listed descriptor (or every TMA copy through one path, or every box whose innermost
coordinate is off 16 bytes) raises FakeFault and ends the
"context", and a descriptor in `crash` ends the process at once, as a hard crash would.
"""
import os

import numpy as np

from layoutsim import formats as F
from layoutsim import smem
from layoutsim.packing import pack, unpack

from . import plan



class FakeFault(RuntimeError):
    """What the fake raises where a GPU would report an illegal address."""


class FakeLab:
    name = "fake (CPU emulation of the probes through layoutsim.smem)"

    def __init__(self, reading=smem.DOCUMENTED, tma_reading=smem.TmaReading(), base=plan.BASE, fault=(), crash=(),
                 fault_tma_via=None, fault_tma_coords=False):
        self.reading = reading
        self.tma_reading = tma_reading
        self.base = base
        self.fault = {int(v) for v in fault}
        self.crash = {int(v) for v in crash}
        self.fault_tma_via = fault_tma_via
        self.fault_tma_coords = fault_tma_coords       # innermost coordinate off 16 bytes faults
        self.dead = False

    @classmethod
    def from_spec(cls, spec):
        """The fake a worker process makes from the JSON lab spec (isolate.py)."""
        return cls(smem.Reading(**spec.get("reading", {})), smem.TmaReading(**spec.get("tma_reading", {})),
                   fault=spec.get("fault", ()), crash=spec.get("crash", ()),
                   fault_tma_via=spec.get("fault_tma_via"), fault_tma_coords=spec.get("fault_tma_coords", False))

    def environment(self):
        return {"backend": self.name, "gpu": "FakeGPU", "simulated_reading": self.reading.to_json(),
                "simulated_tma_reading": self.tma_reading.to_json()}

    def healthy(self):
        return not self.dead

    def _fault(self, what):
        self.dead = True
        raise FakeFault(f"an illegal memory access was encountered (simulated: {what})")

    def smem_base(self, probe):
        if self.dead:
            self._fault("the context is gone")
        return self.base

    def wgmma(self, probe, descs, image, areg, repeat=1):
        values = {int(v) for v in np.asarray(descs, np.uint64).reshape(-1)}
        if values & self.crash:
            os._exit(86)
        if self.dead or values & self.fault:
            self._fault(f"descriptor {', '.join(hex(v) for v in sorted(values & self.fault))}")
        ins = probe.instr
        M, N, K = ins.shape
        img = np.frombuffer(np.ascontiguousarray(image).tobytes(), np.uint8)

        def read(value, which, trans):
            mn = M if which == "A" else N
            w = F.bits(ins.formats[which.lower()])
            a = smem.addresses(int(value), mn, K, w, "MN" if trans else "K", self.reading) - self.base
            e = w // 8
            raw = img[a[..., None] + np.arange(e)].astype(np.uint64)
            v = np.zeros(a.shape, np.uint64)
            for b in range(e):
                v |= raw[..., b] << np.uint64(8 * b)
            return F.decode(ins.formats[which.lower()], v)          # [mn, K]

        fd = ins.operand("D").fragment
        words = [np.array([self.base], np.uint32)]
        for da, db in np.asarray(descs, np.uint64).reshape(-1, 2):
            if probe.under == "A":
                a = read(da, "A", probe.trans)
                b = read(db, "B", False).T
            else:
                fa = ins.operand("A").fragment
                a = F.decode(ins.formats["a"], unpack(fa, np.asarray(areg, np.uint32).reshape(1, 128, -1))[0, 0])
                b = read(db, "B", probe.trans).T
            d = a.astype(np.float64) @ b.astype(np.float64)
            raw = F.encode(probe.out_fmt, d) if probe.out_fmt != "s32" else (d.astype(np.int64) & 0xFFFFFFFF)
            words.append(pack(fd, np.asarray(raw, np.uint64)[None]).reshape(-1))
        return np.concatenate(words).astype(np.uint32)

    def tma(self, case, gvalues, region_bytes, repeat=1, via="param"):
        if self.dead or via == self.fault_tma_via:
            self._fault(f"TMA via {via}")
        if self.fault_tma_coords and not case.inner_aligned:
            self._fault(f"TMA box at innermost coordinate {case.coords[0]}")
        tmap = smem.TensorMap(case.box, case.elem_bytes, case.swizzle)
        addr = smem.box_addresses(tmap, self.base + case.dst, self.tma_reading) - self.base
        region = np.zeros(region_bytes, np.uint8)
        sel = tuple(np.arange(c, c + b) for c, b in zip(case.coords[::-1], case.box[::-1]))
        vals = np.asarray(gvalues)[np.ix_(*sel)]                        # box elements, outermost first
        raw = vals.astype(np.uint64)
        for b in range(case.elem_bytes):
            region[addr + b] = ((raw >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(np.uint8)
        return np.concatenate([np.array([self.base, 0], np.uint32), region.view(np.uint32)])
