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
    """wmma::load_matrix_sync emulated: the image is read back element by element through a map
    of the fake's own (_wmma_map) at the spec's ldm and layout, and x[i] dumped as the kernel does."""
    table = _wmma_map(spec)
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[spec.elem_bits]
    mem = np.ascontiguousarray(np.asarray(inp, np.uint32).reshape(-1)).view(dt)
    r, c = table[..., 0], table[..., 1]
    x = mem[r * spec.ldm + c if spec.layout == "row" else c * spec.ldm + r].astype(np.uint64)   # [32, n]
    if spec.words == 2:
        x = np.stack([x & np.uint64(0xFFFFFFFF), x >> np.uint64(32)], axis=-1).reshape(32, -1)
    out = np.zeros(spec.out_words, np.uint32)
    out[:32 * wmma_load.MAXE].reshape(32, wmma_load.MAXE)[:, :x.shape[1]] = x
    out[32 * wmma_load.MAXE] = table.shape[1]
    return out


# the fragments measured before s8/u8, tf32 and f64 joined: a made-up map for them
_OLD = ("f16", "bf16", "f32")


def _wmma_map(spec):
    """[32, n, 2] (row, col) of x[i]. f16/bf16/f32 fragments: lane l holds row-major elements
    l*n .. l*n+n-1 (the decode test's made-up layout). The others: the catalog's mma.sync fragment
    of the tile ptxas uses, tiled over the operand (the executor's provisional hypothesis, built
    here independently), or, where that tile is larger than the operand (m8n32k16 A, ...), element
    e at lane e % 32, x[e // 32]."""
    R, C = spec.rows, spec.cols
    n = R * C // 32
    if spec.fmt in _OLD and spec.shape[2] == 16:
        e = np.arange(R * C).reshape(32, n)
    else:
        tiled = _tiled(spec)
        if tiled is not None:
            return tiled
        e = np.arange(R * C).reshape(n, 32).T
    return np.stack(np.divmod(e, C), axis=-1)


_TILES = {"s8": "m16n8k16.row.col.s32.s8.s8.s32", "u8": "m16n8k16.row.col.s32.u8.u8.s32",
          "s32": "m16n8k16.row.col.s32.s8.s8.s32", "tf32": "m16n8k8.row.col.f32.tf32.tf32.f32",
          "f32": "m16n8k8.row.col.f32.tf32.tf32.f32", "f64": "m8n8k4.row.col.f64.f64.f64.f64"}


def _tiled(spec):
    import layoutsim
    frag = layoutsim.get("mma.sync.aligned." + _TILES[spec.fmt]).operand(spec.use.upper()).fragment
    t = frag.table.reshape(32, -1, 3)[..., 1:].astype(np.int64)
    tr, tc = frag.shape[1:]
    if spec.rows % tr or spec.cols % tc:
        return None
    blocks = [(i, j) for j in range(spec.cols // tc) for i in range(spec.rows // tr)]
    return np.concatenate([t + np.array([i * tr, j * tc]) for i, j in blocks], axis=1)
