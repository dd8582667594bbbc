"""tcgen05 (sm_100a) on tensor memory images: tcgen05.ld / tcgen05.st between TMEM and a warp's
registers, and tcgen05.mma's D = A*B (+ D) from shared-memory descriptor operands into TMEM.

A TMEM image is uint32 [CTAs, lanes, columns] (archs.tmem: 128 x 512 cells of 32 bits). The maps
are the catalog's: tcgen05.ld/st's "R" FragmentMap (isa/ptx_tcgen05.py, PTX ISA 9.7.16.2.3.1
Figures 183-187) through layoutsim.packing, D's cells by the data-path layout of the entry
(ptx_tcgen05.d_position, PTX ISA 9.7.16.10 Layouts A-G), shared operands by the sm_100 matrix
descriptor (layoutsim.smem.umma), the arithmetic layoutsim.mma's for sm_100a (numerics). The
caller (the executor) checks allocation, lanes, addresses and charges costs.
"""
import numpy as np

from ..formats import bits
from ..isa.ptx_tcgen05 import d_position, sf_copies
from ..numerics import api
from ..packing import pack, unpack
from ..smem import umma
from .wgmma import negate

LOW16 = np.uint32(0xFFFF)


def ldst_cells(frag, lane0, col0, split=0):
    """(TMEM lane, column) int64 [batch, matrices, rows, cols] of every element of a
    tcgen05.ld/st "R" map for base lanes / columns [batch] (16x32bx2: matrix 1 `split` columns on)."""
    nm, nr, nc = frag.shape
    m, r, c = np.meshgrid(np.arange(nm), np.arange(nr), np.arange(nc), indexing="ij")
    lanes = np.asarray(lane0, np.int64)[:, None, None, None] + r
    cols = np.asarray(col0, np.int64)[:, None, None, None] + c + m * np.asarray(split, np.int64).reshape(-1, 1, 1, 1)
    return lanes, cols


def load(frag, tmem, cta, lanes, cols, packed):
    """Register words uint32 [batch, 32, n] of tcgen05.ld: cells (lanes, cols) of TMEM image `cta`
    (.pack::16b: each element is its column's low 16 bits)."""
    vals = tmem[np.asarray(cta)[:, None, None, None], lanes, cols]
    return pack(frag, (vals & LOW16).astype(np.uint16) if packed else vals)


def store(frag, tmem, cta, lanes, cols, words, packed):
    """tcgen05.st: the register words into the cells (.unpack::16b: an element into its column's low
    16 bits, the high 16 bits 0, as the ISA's 'one 16-bit value per column' reads)."""
    vals = unpack(frag, words).astype(np.uint32)
    tmem[np.asarray(cta)[:, None, None, None], lanes, cols] = vals


def addresses(desc, mn, k, elem_bits, mn_major):
    """Shared-window byte addresses int64 [mn, k] of an operand read through sm_100 descriptor
    `desc` (layoutsim.smem.umma; a descriptor it cannot read raises its one line)."""
    return umma.element_addresses(desc, mn, k, elem_bits, "MN" if mn_major else "K")


def gather(image, flat, elem_bits):
    """Raw bits of the elements at byte offsets `flat` [...] of the byte image (uint8)."""
    e = elem_bits // 8
    raw = image[np.asarray(flat)[..., None] + np.arange(e)]
    return np.ascontiguousarray(raw).view(f"<u{e}")[..., 0]


def sub_byte_cells(desc, mn, k, width, packed):
    """(byte offsets int64 [mn, k], bit offsets [mn, k]) of the FP6/FP4 elements of a K-major mn x k
    operand read through sm_100 descriptor `desc`. packed (.kind::mxf4 / mxf4nvf4): two e2m1 per
    byte along K, element 2i in the low nibble of byte i, the bytes an mn x k/2 byte matrix in the
    descriptor's canonical layout (CUTLASS 4.2 reads float_e2m1_t with TMA's 16U4_ALIGN8B: no gaps).
    Otherwise (.kind::f8f6f4 / mxf8f6f4): each element has the 8-bit slot of the canonical layout,
    and each 16-byte unit's 16 elements are packed at its start, element p at bits width*p (6-bit:
    12 bytes then a 4-byte gap; 4-bit: 8 bytes then an 8-byte gap; CUDA 13.0 cuda.h
    CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B / 16U4_ALIGN16B, the TMA types CUTLASS 4.2 loads its
    *_unpacksmem_t operands with; the PTX ISA's .b6x16_p32 / .b4x16_p64 tcgen05.cp source
    formats name the same 128-bit units); element order within a unit little-endian, assumed."""
    if packed:
        addr = addresses(desc, mn, k // 2, 8, False)
        kk = np.arange(k)
        return addr[:, kk // 2], np.broadcast_to((kk % 2) * 4, (mn, k))
    addr = addresses(desc, mn, k, 8, False)
    bit = (addr & 15) * width
    return (addr & ~15) + bit // 8, bit % 8


def gather_bits(image, flat, shift, width):
    """Raw bits (uint8) of the sub-byte elements at byte offsets `flat`, bit offsets `shift` of the
    byte image (an element that straddles two bytes reads both)."""
    lo = image[flat].astype(np.uint16)
    hi = image[np.minimum(flat + 1, image.size - 1)].astype(np.uint16)
    return (((lo | hi << 8) >> shift.astype(np.uint16)) & ((1 << width) - 1)).astype(np.uint8)


def d_cells(inst):
    """(CTA of the pair, TMEM lane, column) int64 [M, N] of every D[i][j] of a tcgen05.mma entry."""
    m, n, _ = inst.shape
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    cta, lane, col = d_position(inst.options["layout"], m, n, i, j)
    return np.broadcast_to(cta, i.shape), lane, col


def a_from_tmem(words, k, elem_bits):
    """A's raw bits [M, K] from the TMEM words [M, K * elem_bits / 32] of its rows: element k in
    word k * bits // 32 at bit (k * bits) % 32, the first element in the low bits (little-endian,
    as Triton 3.6 packs an f16 pair into the register its tcgen05.st writes: bit for bit in
    tests/triton_frontend/test_triton_sm100.py)."""
    kk = np.arange(k)
    w = words[:, kk * elem_bits // 32].astype(np.uint64)
    raw = (w >> ((kk * elem_bits) % 32).astype(np.uint64)) & np.uint64((1 << elem_bits) - 1)
    return raw.astype(f"<u{max(elem_bits // 8, 1)}")


def mma(inst, types, A, B, C, neg_a=False, neg_b=False, arch="sm_100", scale_a=None, scale_b=None, scale_d=None):
    """D's raw bits [M, N] (uint32; a 16-bit D in the low half) of A [M, K] x B [K, N] (raw bits)
    + C [M, N] (raw bits of D's format, zeros for enable-input-d false), through layoutsim.mma
    (block-scaled kinds: the raw scale matrices scale_a [M, K/32], scale_b [K/32, N]; scale_d:
    scale-input-d, C scaled by 2^-scale_d, numerics.scale_d)."""
    fa, fb = str(types).split(".")[1:3]
    A = _negate(A, fa) if neg_a else A
    B = _negate(B, fb) if neg_b else B
    d = api.mma(inst, A, B, C, arch=arch, raw=True, types=types, scale_a=scale_a, scale_b=scale_b, scale_d=scale_d)
    return np.asarray(d).astype(np.uint32)


def _negate(x, fmt):
    """The idesc's negate bit: the element's sign bit (the top bit of its format: bit 3 of e2m1's
    raw value, bit 5 of e2m3/e3m2's) flipped."""
    w = bits(fmt)
    return negate(x) if w == x.dtype.itemsize * 8 else x ^ x.dtype.type(1 << (w - 1))


def cp_cells(inst, desc):
    """tcgen05.cp entry `inst` (its operand "S": isa/ptx_tcgen05.cp_fragment) through sm_100 descriptor
    `desc`: (shared-window byte addresses int64 [rows, bytes] of the source, TMEM lane offsets [rows,
    copies], columns [bytes // 4]): the map puts byte c of a row in byte c % 4 of column c // 4 of each
    of the row's lanes."""
    frag = inst.operand("S").fragment
    _, rows, nbytes = frag.shape
    h = frag.holders[0].astype(np.int64)                                  # [rows, bytes, copies, 3]
    c = np.arange(nbytes)
    assert (h[..., 0] == h[:, :1, :, 0]).all() and (h[..., 1] == (c // 4)[:, None]).all() \
        and (h[..., 2] == (c % 4)[:, None]).all(), f"{inst.name}: not a row-by-row copy"
    addr = addresses(desc, rows, nbytes, 8, False)
    return addr, h[:, 0, :, 0], np.arange(nbytes // 4)


def cp_words(image, flat):
    """The source rows as 32-bit TMEM words uint32 [rows, bytes // 4] (byte c: bits 8(c % 4) ..)."""
    raw = np.ascontiguousarray(image[flat])
    return raw.view("<u4")


def scale_cells(inst, operand, sf_id):
    """Where the block scale factors of operand "SFA" / "SFB" of a tcgen05.mma entry lie (its catalog
    map, isa/ptx_tcgen05.sf_fragment, and the copies sf_copies names): (CTA of the pair [n], TMEM lane
    offsets [n, copies], columns [n], bytes [n] (from byte sf_id), rows [n], cols [n] of the scale matrix)."""
    t = inst.operand(operand).fragment.table
    lane, col, byte = np.nonzero(t[..., 0] >= 0)
    _, r, c = (t[lane, col, byte].astype(np.int64)).T
    pair = inst.shape[:2] if inst.options.get("cta_group") == 2 else None
    copies = np.array(sf_copies(pair, operand == "SFA"))
    return lane // 128, (lane % 128)[:, None] + copies, col, byte + sf_id, r, c


def scales(inst, operand, cells, sf_id, shape, cta=None):
    """The raw scale matrix (uint8 `shape`) of SFA/SFB read from `cells` (TMEM [CTAs, lanes, columns] of
    the pair's CTAs (one for cta_group::1) from the scale address; cta: read every scale from that CTA
    instead of the map's), and whether the copies of each scale agree."""
    which, lanes, col, byte, r, c = scale_cells(inst, operand, sf_id)
    which = which if cta is None else np.full_like(which, cta)
    words = cells[which[:, None], lanes, col[:, None]]                     # [n, copies]
    vals = (words >> (8 * byte[:, None]).astype(np.uint32)) & np.uint32(0xFF)
    out = np.zeros(shape, np.uint8)
    out[r, c] = vals[:, 0]
    return out, bool((vals == vals[:, :1]).all())
