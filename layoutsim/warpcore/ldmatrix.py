"""ldmatrix / stmatrix: which lanes give row addresses, which bytes each row is, which register
word of which lane each row element lands in.

Rows: the catalog's `Addressing` (isa/ptx_ldmatrix.py) says that lane `lanes[m, r]` gives the
address of row r of matrix m, a row being `row_bytes` contiguous bytes of shared memory; the
registers hold the rows' elements as the catalog's fragment "R" says (`layoutsim.packing`).

Row addresses: int64 [batch, matrices, 8], flat byte offsets into the shared-memory image the
caller passes (its per-lane addresses, already checked, plus the block's base). Register words:
uint32 [batch, 32, matrices].
"""
import numpy as np

from ..packing import pack, unpack


def lanes(ins):
    """int [matrices, 8]: the lane giving each row's address."""
    return np.asarray(ins.addressing.lanes, dtype=np.int64)


def address_lanes(ins):
    """bool [threads]: the lanes whose address the instruction reads (the others are ignored)."""
    m = np.zeros(ins.threads, bool)
    m[lanes(ins).reshape(-1)] = True
    return m


def rows(ins, per_lane):
    """[batch, threads] values of every lane (addresses, thread numbers) -> those of the lanes
    that give row addresses, [batch, matrices, 8]."""
    return np.asarray(per_lane)[:, lanes(ins)]


def row_lanes(ins, row_addr):
    """Per-lane addresses [batch, threads] and the lanes that give one [batch, threads] (the bank
    model's view of the access), from row addresses [batch, matrices, 8]."""
    n = row_addr.shape[0]
    flat = lanes(ins).reshape(-1)
    O = np.zeros((n, ins.threads), np.int64)
    M = np.zeros((n, ins.threads), bool)
    O[:, flat] = row_addr.reshape(n, -1)
    M[:, flat] = True
    return O, M


def row_bytes(ins, row_addr):
    """int64 [batch, matrices, 8, row_bytes]: every byte the rows cover."""
    return row_addr[..., None] + np.arange(ins.addressing.row_bytes)


def _element(ins):
    return np.dtype(f"<u{ins.operand('R').fragment.elem_bits // 8}")


def load(ins, image, row_addr):
    """ldmatrix: register words uint32 [batch, 32, matrices] of the rows at `row_addr` in the
    byte image `image` (uint8)."""
    return pack(ins.operand("R").fragment, _row_data(ins, image, row_addr).view(_element(ins)))   # [b, m, 8, 8]


def _row_data(ins, image, row_addr):
    """The bytes of every row, [batch, matrices, 8, row_bytes] as uint8, or as uint64 [..., row_bytes / 8]
    when every row starts at a multiple of its size (one take of the image viewed as rows)."""
    rb = ins.addressing.row_bytes
    if image.flags.c_contiguous and image.dtype == np.uint8 and rb % 8 == 0 and not (row_addr % rb).any():
        return image[:image.size // rb * rb].view(np.uint64).reshape(-1, rb // 8).take(row_addr // rb, axis=0)
    return np.ascontiguousarray(image[row_bytes(ins, row_addr)])


def store(ins, row_addr, words):
    """stmatrix: (byte offsets, bytes), both flat, that the registers `words` (uint32
    [batch, 32, matrices]) write at the rows `row_addr`; the caller writes them (image[idx] = data)."""
    data = unpack(ins.operand("R").fragment, words).astype(_element(ins))            # [b, m, 8, 8]
    return row_bytes(ins, row_addr).reshape(-1), np.ascontiguousarray(data).view(np.uint8).reshape(-1)


def movmatrix_sources(x1):
    """(lane, half) int [32, 2] that each half of each lane's result reads, for
    movmatrix.sync.aligned.m8n8.trans.b16 (PTX ISA 9.7.14.5.17): the 8x8 b16 matrix whose rows the
    warp holds as ldmatrix.x1 (the catalog entry `x1`) returns them, transposed, in the same layout."""
    frag = x1.operands["R"].fragment.table            # [lane, register 0, half] -> (matrix, row, col)
    holder = {(int(frag[lane, 0, h][1]), int(frag[lane, 0, h][2])): (lane, h) for lane in range(32) for h in range(2)}
    src = np.array([[holder[(int(frag[lane, 0, h][2]), int(frag[lane, 0, h][1]))] for h in range(2)]
                    for lane in range(32)])             # element (r, c) of the result is (c, r) of the input
    return src[..., 0], src[..., 1]
