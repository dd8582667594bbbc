"""A CPU stand-in for the GPU backend, so the host side of gpu-check runs in CI.

ldmatrix / stmatrix are emulated from the PTX ISA's own words (lane L gets row L/4 of matrix j
from the address lane 8j + L/4 gave, columns 2(L%4), 2(L%4)+1; .trans swaps), written here
independently of the catalog, so a wrong catalog map or a wrong host packing shows up as a
mismatch. MMAs are emulated through the specs' own unpacking and exact arithmetic (or
layoutsim.mma for random numerics cases): they test the plumbing, not the maps.
"""
import datetime

import numpy as np

from gpu_check.families import e2e, ldmatrix, mma, stmatrix, wgmma, wmma_load
from gpu_check.families.operand_maps import exact_d


class FakeBackend:
    vendor = "nvidia"
    arch = "sm_90"
    target = "sm_90a"

    def __init__(self, fault=None):
        self.fault = fault          # (kernel-name substring, callable(out) -> out)
        self.launches = []

    def environment(self):
        return {"backend": "fake (CPU emulation)", "gpu": "FakeGPU", "compute_capability": "9.0",
                "arch": self.arch, "driver": "0.0", "cuda_driver_api": "13.0", "pycuda": None,
                "date": datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc).isoformat()}

    def load(self, cubin):
        return "module"

    def launch(self, module, spec, inp, ncases):
        inp = np.asarray(inp, np.uint32).reshape(ncases, -1)
        self.launches.append(spec.name)
        if isinstance(spec, ldmatrix.LdmatrixSpec):
            out = _ldmatrix(spec, inp)
        elif isinstance(spec, stmatrix.StmatrixSpec):
            out = _stmatrix(spec, inp)
        elif isinstance(spec, e2e.E2eSpec):
            out = _e2e(spec, inp)
        elif isinstance(spec, (mma.MmaSpec, wgmma.WgmmaSpec)):
            out = _mma(spec, inp)
        elif isinstance(spec, wmma_load.WmmaLoadSpec):
            out = _wmma(spec, inp)
        else:
            raise TypeError(spec)
        out = np.asarray(out, np.uint32).reshape(-1)
        if self.fault and self.fault[0] in spec.name:
            out = self.fault[1](spec, out.copy())
        return out


def _ld_lane_elems(count, trans, addr):
    """[lane, reg, slot] -> b16 element index, from the PTX ISA's description of ldmatrix."""
    out = np.zeros((addr.shape[0], 32, count, 2), np.int64)
    for lane in range(32):
        for j in range(count):
            for s in range(2):
                if not trans:
                    row, col = lane // 4, 2 * (lane % 4) + s
                else:
                    row, col = 2 * (lane % 4) + s, lane // 4
                out[:, lane, j, s] = addr[:, 8 * j + row] // 2 + col
    return out


def _ldmatrix(spec, inp):
    region = np.ascontiguousarray(spec.aux).view(np.uint16)
    e = _ld_lane_elems(spec.count, spec.instr.options["trans"], inp.astype(np.int64))
    v = region[e].astype(np.uint32)
    return v[..., 0] | (v[..., 1] << 16)


def _stmatrix(spec, inp):
    n = len(inp)
    x = inp.reshape(n, 32, spec.lane_in)
    addr = x[:, :, spec.count].astype(np.int64)
    e = _ld_lane_elems(spec.count, spec.instr.options["trans"], addr)
    region = np.tile(np.ascontiguousarray(spec.aux).view(np.uint16), (n, 1))
    regs = x[:, :, :spec.count]
    vals = np.stack([regs & 0xFFFF, regs >> 16], axis=-1)
    for c in range(n):
        region[c, e[c].reshape(-1)] = vals[c].reshape(-1)
    return region.view(np.uint32)


def _d(spec, a, b, c, extra=None):
    try:
        with np.errstate(all="ignore"):
            return exact_d(spec.fmt, a, b, c, extra, spec.instr.shape[2])
    except ValueError:
        import layoutsim
        from layoutsim.formats import raw_dtype
        a, b, c = (x.astype(raw_dtype(spec.fmt[k])) for k, x in zip("abc", (a, b, c)))
        d = np.asarray(layoutsim.mma(spec.instr, a, b, c, arch="sm_90"))
        return d.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[d.itemsize]).astype(np.uint64)


def _mma(spec, inp):
    a, b, c = spec.unpack_inputs(inp)
    extra = spec.unpack_extra(inp) if getattr(spec, "extra_in", ()) else None
    return spec.pack_d(_d(spec, a, b, c, extra))


def _e2e(spec, inp):
    a, b, c = spec.unpack_inputs(inp)
    d = _d(spec, a, b, c)
    if not spec.d_mem:
        return spec.pack_d(d)
    region = np.ascontiguousarray(inp[:, :spec.region_words]).view(np.uint16).copy()
    region[:, spec.mem_index("D", spec.M, spec.N)] = d.astype(np.uint16)
    return region.view(np.uint32)


def _wmma(spec, inp):
    """A made-up fragment: lane l holds row-major elements l*n .. l*n+n-1 (n = rows*cols/32)."""
    ids, image = spec.ids()
    n = spec.rows * spec.cols // 32
    out = np.zeros(spec.out_words, np.uint32)
    flat = ids.ravel() + spec.id_base
    for lane in range(32):
        out[lane * wmma_load.MAXE:lane * wmma_load.MAXE + n] = flat[lane * n:(lane + 1) * n]
    out[32 * wmma_load.MAXE] = n
    return out
