"""FlashAttention-2's forward kernel (flashattn_build.py) as one launch: the problem, its inputs, the
`Flash_fwd_params` bytes, grid and block, and a float64 reference.

The problem: batch 1, 2 heads, seqlen_q = seqlen_k = 128, head dim 64, fp16, non-causal, no
dropout, softmax scale 1/sqrt(64); q, k, v are (batch, seqlen, heads, dim) contiguous fp16 from an
integer hash (uniform in [-2, 2), multiples of 1/256); o (same shape, fp16) and softmax_lse (batch, heads, seqlen_q,
float32) start as zeros. The struct is filled as flash_api.cpp's set_params_fprop and
set_params_splitkv fill it for that call (strides in elements, seqlen_*_rounded to 128, d_rounded
to 32, p_dropout = 1 - 0 as the keep probability, window sizes -1, is_seqlens_k_cumulative,
num_splits 1: its heuristic gives 1 where seqlen_k fits one 256-column block); the fields it leaves
at their {} value stay 0 (null pointers: no cu_seqlens, no alibi, no rng_state: the kernel without
dropout never reads or writes it). Each field is written at the offset and with the size and kind
the compiler printed (params_layout.json). Grid and block are run_flash_fwd's:
(ceil(seqlen_q / kBlockM), batch, heads) x kNThreads, with kSmemSize bytes of dynamic shared memory.
"""
import gzip
import json
import math
import struct
from pathlib import Path

import numpy as np

from .flashattn_build import ARCH, DATA, LAYOUT, PACKAGE, PTX

BATCH, HEADS, SEQLEN, HDIM = 1, 2, 256, 64
SEED = 2024
NAME = "flashattn_fwd_hdim64_fp16"
ARRAYS = ("q", "k", "v", "o", "softmax_lse")             # the launch's arrays, in this order
POINTERS = tuple(f"{n}_ptr" for n in ARRAYS)                 # the struct fields holding their addresses
OUTPUTS = ("o", "softmax_lse")
# softmax_lse takes __logf, lg2.approx.ftz.f32: bit for bit the H100's (2026-12-07) since lg2's model
# took the nudge of numerics.sfu.INFERRED (8 bytes differed before; 82 while the executor computed it
# as the correctly rounded log2).


def available():
    """Whether the committed PTX and layout are here (else the reason)."""
    missing = [n for n in (PTX, LAYOUT) if not (DATA / n).is_file()]
    return (True, "") if not missing else (False, f"{', '.join(missing)} missing in {DATA}: run python -m "
                                                  f"gpu_check.realworld.flashattn_build --package-root SDIST")


def layout():
    return json.loads((DATA / LAYOUT).read_text())


def ptx_text():
    return gzip.decompress((DATA / PTX).read_bytes()).decode()


def _values(count, salt):
    """`count` fp16 values in [-2, 2), multiples of 1/256 (exact in fp16), from an integer hash of
    (index, salt): the same on every machine and numpy version (no random generator's stream)."""
    x = np.arange(count, dtype=np.uint64) + np.uint64(salt << 32)
    for mul in (0xBF58476D1CE4E5B9, 0x94D049BB133111EB):          # splitmix64's finaliser
        x ^= x >> np.uint64(30 if mul & 1 else 27)
        x *= np.uint64(mul)
    x ^= x >> np.uint64(31)
    return ((x >> np.uint64(54)).astype(np.int64) - 512).astype(np.float16) / np.float16(256)


def inputs():
    """{name: array}: q, k, v (fp16) and the zeroed outputs o (fp16), softmax_lse (float32)."""
    shape = (BATCH, SEQLEN, HEADS, HDIM)
    n = int(np.prod(shape))
    q, k, v = (_values(n, SEED + i).reshape(shape) for i in range(3))
    return {"q": q, "k": k, "v": v, "o": np.zeros(shape, np.float16),
            "softmax_lse": np.zeros((BATCH, HEADS, SEQLEN), np.float32)}


def _round_up(x, m):
    return (x + m - 1) // m * m


def field_values():
    """{field: value} set_params_fprop writes for this problem (pointers aside)."""
    scale = 1.0 / math.sqrt(HDIM)
    row, head, batch = HEADS * HDIM, HDIM, SEQLEN * HEADS * HDIM       # (b, s, h, d) contiguous
    v = {"h": HEADS, "h_k": HEADS, "h_h_k_ratio": 1, "b": BATCH, "seqlen_q": SEQLEN, "seqlen_k": SEQLEN,
         "d": HDIM, "seqlen_q_rounded": _round_up(SEQLEN, 128), "seqlen_k_rounded": _round_up(SEQLEN, 128),
         "d_rounded": _round_up(HDIM, 32), "scale_softmax": scale, "scale_softmax_log2": scale * math.log2(math.e),
         "softcap": 0.0, "p_dropout": 1.0, "p_dropout_in_uint8_t": 255, "rp_dropout": 1.0,
         "scale_softmax_rp_dropout": scale, "window_size_left": -1, "window_size_right": -1,
         "is_bf16": False, "is_causal": False, "is_seqlens_k_cumulative": True, "num_splits": 1}
    for t in ("q", "k", "v"):
        v.update({f"{t}_batch_stride": batch, f"{t}_row_stride": row, f"{t}_head_stride": head})
    v.update(o_batch_stride=batch, o_row_stride=row, o_head_stride=head)
    return v


_FORMATS = {("int", 1): "<b", ("int", 4): "<i", ("int", 8): "<q", ("uint", 1): "<B", ("uint", 4): "<I",
            ("uint", 8): "<Q", ("float", 4): "<f", ("float", 8): "<d", ("bool", 1): "<?", ("pointer", 8): "<Q"}


def params_bytes(lay=None, values=None):
    """The struct's bytes with every pointer 0 and the other fields from field_values()."""
    lay = lay or layout()
    values = field_values() if values is None else values
    fields = {f["name"]: f for f in lay["fields"]}
    raw = bytearray(lay["size"])
    for name, value in values.items():
        f = fields[name]
        fmt = _FORMATS.get((f["kind"], f["size"]))
        if fmt is None:
            raise ValueError(f"{name}: a {f['kind']} field of {f['size']} bytes")
        struct.pack_into(fmt, raw, f["offset"], value)
    return bytes(raw)


def launch_shape(lay=None):
    """(grid, block, dynamic shared bytes) as run_flash_fwd computes them."""
    t = (lay or layout())["traits"]
    return ((SEQLEN + t["kBlockM"] - 1) // t["kBlockM"], BATCH, HEADS), (t["kNThreads"], 1, 1), t["kSmemSize"]


def entry(lay=None):
    """The launch as a kernel-corpus manifest entry (gpu_check.kernel_corpus): argument 0 the struct,
    whose pointer fields name arguments 1-5 (q, k, v, o, softmax_lse: arrays only it points to), so
    corpus.launch_args gives layoutsim.ptx.run its StructArg and device.Launcher fills in the GPU's
    addresses."""
    lay = lay or layout()
    offsets = {f["name"]: f["offset"] for f in lay["fields"]}
    grid, block, smem = launch_shape(lay)
    a = inputs()
    args = [{"kind": "struct", "hex": params_bytes(lay).hex(),
             "pointers": [[offsets[p], i + 1] for i, p in enumerate(POINTERS)]}]
    args += [{"kind": "array", "dtype": a[n].dtype.name, "shape": list(a[n].shape),
              "role": "output" if n in OUTPUTS else "input", "param": False} for n in ARRAYS]
    return {"name": NAME, "source": "csrc/flash_attn/src/flash_fwd_launch_template.h", "package": PACKAGE,
            "ptx": {ARCH: PTX[:-len(".gz")]}, "kernel": lay["kernel"], "grid": list(grid), "block": list(block),
            "shared_bytes": smem, "args": args, "inputs": f"{NAME}.inputs.npz",
            "what": "FlashAttention-2 forward, hdim 64 fp16, non-causal (flash-attn 2.8.3.post2 sdist)"}


def arrays():
    """The manifest arguments' initial values: None for the struct, then the five arrays."""
    a = inputs()
    return [None] + [a[n] for n in ARRAYS]


def reference(arrays):
    """(o, softmax_lse) in float64 from the fp16 inputs: softmax(q k^T * scale) v, and the natural
    log of each row's sum of exp (plus its max), the kernel's softmax_lse."""
    q, k, v = (arrays[n].astype(np.float64) for n in ("q", "k", "v"))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(HDIM)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bkhd->bqhd", e / total, v)
    return o, (np.log(total) + m)[..., 0]


def execute(jobs=1):
    """The launch in layoutsim.ptx: (Run, [final array or None per manifest argument])."""
    from layoutsim import ptx
    from gpu_check.kernel_corpus import corpus as C
    e = entry()
    run = ptx.run(ptx_text(), e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, arrays()),
                  shared_bytes=e["shared_bytes"], jobs=jobs)
    return run, C.buffers_by_arg(e, run.buffers)
