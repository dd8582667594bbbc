"""A captured CUTLASS 3.x launch (hopper_measure.py's <case>.capture.json and .buffers.npz) as the
executor's launch: the kernel's one by-value Params struct as a layoutsim.ptx.StructArg whose
pointers are the captured buffers (each 8-byte word of Params that holds a buffer's address) and
whose maps are the CUtensorMaps found in it (the 128 bytes cuTensorMapEncodeTiled returned, found
at a 64-byte aligned offset), each a TensorMapArg with that call's arguments over the buffer that
holds its global address. The cluster shape is the launch's cudaLaunchAttributeClusterDimension.

The capture's "params" is the shim's parameter buffer from byte 0, each parameter at the offset
cudaFuncGetParamInfo gave (zeros before it). The CUDA 13.0 runtime on the H100 (driver 580.159.04)
answered offset 112 for the Params of all three launches (the bytes at 112.. are the Params the CPU
capture holds at 0: problem shape first; the maps at 112 + 128, 112 + 384), the CPU fake runtime 0.
The shim records the offsets ("param_offsets"); for a capture without them (those of 2026-12-07)
the Params are its last PTX-size bytes, which must follow only zeros.

Enumerations (cuda.h, CUDA 13.0): CUtensorMapDataType (element sizes below), CUtensorMapSwizzle
(0 none, 1 32B, 2 64B, 3 128B), CUlaunchAttributeID 4 = cluster dimension (x, y, z: three
unsigned ints at the start of the value).
"""
import gzip
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .hopper_build import ENTRY, PARAM, entry_of
from .hopper_cases import HOPPER, ptx_name

# CUtensorMapDataType: UINT8, UINT16, UINT32, INT32, UINT64, INT64, FLOAT16, FLOAT32, FLOAT64,
# BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
ELEMENT_BYTES = (1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4)
CLUSTER_DIMENSION = 4


class CaptureError(ValueError):
    """A capture the replay cannot express (one line)."""


@dataclass
class Launch:
    ptx: str
    kernel: str
    grid: tuple
    block: tuple
    cluster: tuple
    shared_bytes: int
    args: list
    order: list          # capture buffer index of each array in Run.buffers[0], in order
    before: dict         # buffer index -> bytes before the launch
    after: dict          # buffer index -> bytes after the launch (the H200's; None for a CPU capture)
    arrays: list         # buffer index -> the array the launch's arguments hold (fill them before a run)


def files(name, directory=None, kind="capture", group=HOPPER):
    """The capture of a case: the H200's ("capture", with the buffers' bytes) or the CPU run's
    ("cpu": hopper_local.py, Params and maps only; its buffers are zeros of the captured sizes).
    directory: the group's committed data unless given."""
    directory = Path(directory or group.data)
    return directory / f"{name}.{kind}.json", directory / f"{name}.buffers.npz"


def cluster_of(doc):
    for a in doc.get("attributes", []):
        if a["id"] == CLUSTER_DIMENSION:
            return struct.unpack_from("<III", bytes.fromhex(a["value"]))
    return None


def tensor_map(m, arrays, bases):
    """The TensorMapArg of a captured cuTensorMapEncodeTiled call."""
    from layoutsim.ptx.tensormap import ENCODE_SWIZZLE, TensorMapArg
    k = next((i for i, (b, a) in enumerate(zip(bases, arrays)) if b <= m["global_address"] < b + a.nbytes), None)
    if k is None:
        raise CaptureError(f"a tensor map's global address {m['global_address']:#x} is in no captured buffer")
    if m["data_type"] >= len(ELEMENT_BYTES) or m["swizzle"] not in ENCODE_SWIZZLE:
        raise CaptureError(f"tensor map data type {m['data_type']} / swizzle {m['swizzle']} not expressible")
    return k, TensorMapArg(buffer=arrays[k], dims=tuple(m["dims"]), box=tuple(m["box"]), swizzle=ENCODE_SWIZZLE[m["swizzle"]],
                           elem_bytes=ELEMENT_BYTES[m["data_type"]], strides_bytes=tuple(m["strides_bytes"]),
                           offset=m["global_address"] - bases[k], element_strides=tuple(m["element_strides"]),
                           interleave="none" if m["interleave"] == 0 else m["interleave"],
                           l2_promotion=m["l2_promotion"], oob_fill=m["oob_fill"])


def params_of(name, doc, size):
    """The Params bytes of a capture: from the recorded offset of parameter 0, else (see above) the
    last `size` bytes (the PTX's .param size), where only zeros precede them."""
    raw = bytes.fromhex(doc["params"])
    if size is None:
        raise CaptureError(f"{name}: the PTX entry has no one .b8 array parameter")
    size = int(size)
    offset = doc["param_offsets"][0] if "param_offsets" in doc else len(raw) - size
    if offset < 0 or len(raw) - offset != size or any(raw[:offset]):
        raise CaptureError(f"{name}: {len(raw)} captured parameter bytes hold no {size}-byte Params at "
                           f"offset {offset} (bytes before it must be zeros)")
    return raw[offset:]


def load(name, directory=None, kind="capture", group=HOPPER):
    """The Launch of a captured case of `group` (kind: see files)."""
    from layoutsim.ptx import StructArg
    case = group.by_name[name]
    directory = Path(directory or group.data)
    cap, buf = files(name, directory, kind)
    doc = json.loads(cap.read_text())
    if doc["param_count"] != 1:
        raise CaptureError(f"{name}: {doc['param_count']} kernel parameters; the kernel must take one struct "
                           "(CUTLASS's Params, ThunderKittens' globals)")
    n = len(doc["buffers"])
    if kind == "capture":
        with np.load(buf) as z:
            before = {k: z[f"before{k}"] for k in range(n)}
            after = {k: z[f"after{k}"] if f"after{k}" in z else z[f"before{k}"] for k in range(n)}
    else:
        before = {k: np.zeros(b["bytes"], np.uint8) for k, b in enumerate(doc["buffers"])}
        after = None
    ptx = gzip.decompress((directory / ptx_name(case.example, group.arch)).read_bytes()).decode()
    # the case's entry (hopper_cases.Case.entry); the runtime's name for it, where mangled, must agree
    kernel = entry_of(case, ENTRY.findall(ptx), group)
    if doc["kernel"].startswith("_Z") and doc["kernel"] != kernel:
        raise CaptureError(f"{name}: the capture launched {doc['kernel'][:60]}..., not the case's entry {kernel[:60]}...")
    params = params_of(name, doc, dict(PARAM.findall(ptx)).get(kernel))
    bases = [b["address"] for b in doc["buffers"]]
    arrays = [before[k].copy() for k in range(len(bases))]
    pointers, order = [], []
    for off in range(0, len(params) - 7, 8):
        v = int.from_bytes(params[off:off + 8], "little")
        for k, (b, a) in enumerate(zip(bases, arrays)):
            if b <= v < b + max(a.nbytes, 1):
                if v != b:
                    raise CaptureError(f"{name}: Params word at byte {off} points {v - b} bytes into buffer {k}")
                pointers.append((off, a))
                if k not in order:                  # one array at several offsets is one buffer
                    order.append(k)
    maps, own = [], []
    for m in doc["maps"]:
        raw = bytes.fromhex(m["raw"])
        for off in range(0, len(params) - 127, 64):
            if params[off:off + 128] == raw:
                k, tm = tensor_map(m, arrays, bases)
                maps.append((off, tm))
                if k not in order and k not in own:
                    own.append(k)
    return Launch(ptx, kernel, tuple(doc["grid"]), tuple(doc["block"]), cluster_of(doc), doc["shared_bytes"],
                  [StructArg(params, tuple(pointers), tuple(maps))], order + own, before, after, arrays)


def mapped(launch):
    """The capture buffer indices the Params' tensor maps describe, in Params order, each once: a
    ThunderKittens globals struct's gl fields in their order (each gl holds its TMA descriptor).
    Pointer words do not tell that order: the struct's padding holds stale copies of the addresses."""
    out = []
    for _, m in sorted(launch.args[0].maps, key=lambda om: om[0]):
        k = next(k for k, a in enumerate(launch.arrays) if a is m.buffer)
        if k not in out:
            out.append(k)
    return out
