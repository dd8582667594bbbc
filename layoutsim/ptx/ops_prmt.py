"""prmt (PTX ISA 9.7.9.7): four bytes picked from the eight of two registers by a selector, in
the default mode or one of the ISA's six (f4e, b4e, rc8, ecl, ecr, rc16), over numpy arrays."""
import numpy as np

from . import types as T
from .builders import elementwise

U64 = np.uint64


_PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}   # [selector][destination byte 0..3] -> source byte, from the ISA's prmt table


def _prmt_uniform(a, bb, c, mode):
    """prmt with one selector for every lane (an immediate, as compilers write it): the eight source
    bytes as a [n, 8] view, four of them picked (and sign-replicated) by column; uint32, or None
    where the lanes' selectors differ."""
    c = np.asarray(c)
    if c.size == 0 or (c.ndim and not (c == c.flat[0]).all()):
        return None
    shape = np.broadcast_shapes(np.shape(a), np.shape(bb), c.shape)
    cv = int(c.flat[0])
    src = np.empty(shape + (2,), np.uint32)
    src[..., 0], src[..., 1] = a, bb
    src = src.reshape(-1, 2).view(np.uint8)                  # little-endian: a's bytes 0-3, b's 4-7
    if mode is None:
        ctl = [(cv >> (4 * i)) & 0xF for i in range(4)]
        out = src[:, [x & 7 for x in ctl]]
        for i, x in enumerate(ctl):
            if x & 8:                                         # sign-replicate the byte's msb
                out[:, i] = np.where(out[:, i] & 0x80, 0xFF, 0).astype(np.uint8)
    else:
        out = src[:, _PRMT_MODES[mode][cv & 3]]
    return np.ascontiguousarray(out).view(np.uint32).reshape(shape)


def _prmt_plan(cv, mode):
    """(source byte of each destination byte, the destination bytes that replicate their sign) of
    a prmt selector value: what _prmt_uniform computes for it."""
    if mode is not None:
        return np.asarray(_PRMT_MODES[mode][cv & 3], np.intp), ()
    ctl = [(cv >> (4 * i)) & 0xF for i in range(4)]
    return np.asarray([x & 7 for x in ctl], np.intp), tuple(i for i, x in enumerate(ctl) if x & 8)


def prmt(ins, b, prog):
    mode = next((m for m in ins.mods if m in _PRMT_MODES), None)
    if len(ins.operands) == 4 and ins.operands[3].kind == "imm":
        # the selector an immediate (what compilers write): its byte plan made once; registers of
        # one length take it without _prmt_uniform's checks and broadcasting
        cols, signs = _prmt_plan(int(b.constant(ins.operands[3], T.get("b32"), ins)), mode)

        def fi(a, bb, c):
            if not (isinstance(a, np.ndarray) and isinstance(bb, np.ndarray) and a.ndim == 1 and a.shape == bb.shape):
                return f(a, bb, c)
            src = np.empty((a.shape[0], 2), np.uint32)
            src[:, 0], src[:, 1] = a, bb
            out = src.view(np.uint8)[:, cols]            # little-endian: a's bytes 0-3, b's 4-7
            for i in signs:
                out[:, i] = np.where(out[:, i] & 0x80, 0xFF, 0).astype(np.uint8)
            return np.ascontiguousarray(out).view(np.uint32).reshape(-1)

    def f(a, bb, c):
        fast = _prmt_uniform(a, bb, c, mode)
        if fast is not None:
            return fast
        a, bb, c = (np.asarray(v).astype(U64) for v in (a, bb, c))
        src = (bb << U64(32)) | a
        out = np.zeros(np.broadcast_shapes(a.shape, bb.shape, c.shape), U64)
        for i in range(4):
            if mode is None:
                ctl = (c >> U64(4 * i)) & U64(0xF)
                byte = (src >> ((ctl & U64(7)) * U64(8))) & U64(0xFF)
                byte = np.where((ctl & U64(8)) != 0, np.where(byte & U64(0x80), U64(0xFF), U64(0)), byte)
            else:
                sel = (c & U64(3)).astype(np.int64)
                srcb = np.asarray(_PRMT_MODES[mode], np.uint64)[sel, i]
                byte = (src >> (srcb * U64(8))) & U64(0xFF)
            out |= byte << U64(8 * i)
        return out.astype(np.uint32)
    if len(ins.operands) == 4 and ins.operands[3].kind == "imm":
        return elementwise(ins, b, fi, T.get("b32"))
    return elementwise(ins, b, f, T.get("b32"))
