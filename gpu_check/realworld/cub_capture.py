"""The captured CUB launches: reading what capture.cpp recorded on the GPU, storing it compactly,
and replaying each launch through the executor.

capture.cpp writes launches.jsonl (one record per launch) and L<k>_A<id>.in/.out (the bytes of
every cudaMalloc allocation the launch's parameters point into, before and after it). Stored in
tests/data/realworld/cub/ as
  capture.json   {"launches": [record, ...], "blobs": {sha: [npz key, base sha | null]}, ...}: a
                 record is capture.cpp's (launch, label, kernel, grid, block, shared_bytes,
                 params [{offset, size, hex}], pointers [[param, byte in it, allocation, byte in
                 the allocation]], allocations {id: bytes}) plus "in"/"out" {allocation: sha}
  capture.npz    the distinct allocation contents (uint8), each stored whole or as its XOR with a
                 base blob (an output against that launch's input: mostly zeros, compressed small)

A replay (replay()) passes every parameter as a layoutsim.ptx.StructArg of its captured bytes, each
captured address replaced by the address of the model's copy of its allocation plus the byte in it
(one copy per allocation, shared by all the parameters that point into it), and returns every
allocation's final bytes, which the caller compares with "out" bit for bit.
"""
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from layoutsim.demangle import demangle
from layoutsim.ptx import StructArg, run

# Launches whose ncu total the model does not reproduce, not explained yet: (launch, metric) ->
# (model, GPU min, GPU max, what is known). The replay test and replay_all hold them to exactly these.
UNEXPLAINED = {
    ("10-radix_sort_keys_u32", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"): (
        50688, 51001, 51038, "the GPU's count varies between identical runs (5 runs on an H100, 2026-12-07), so "
                             "something timing-dependent adds 0.6 to 0.7 percent; the model costs the SASS's LDS"),
}

MAX_ALLOCATION = 1 << 26          # bytes of one captured allocation the reader accepts


def _sha(raw):
    return hashlib.sha256(raw.tobytes()).hexdigest()[:20]


class BlobStore:
    """Distinct byte arrays, each whole or XOR'ed against a base blob."""

    def __init__(self):
        self.arrays, self.index = {}, {}

    def add(self, raw, base=None):
        sha = _sha(raw)
        if sha not in self.index:
            key = f"b{len(self.arrays)}"
            if base is not None and base in self.index and self.size(base) == raw.size:
                self.arrays[key] = np.bitwise_xor(raw, self.get(base))
                self.index[sha] = [key, base]
            else:
                self.arrays[key], self.index[sha] = raw.copy(), [key, None]
        return sha

    def size(self, sha):
        return self.arrays[self.index[sha][0]].size

    def get(self, sha):
        key, base = self.index[sha]
        a = self.arrays[key]
        return np.bitwise_xor(a, self.get(base)) if base else a


def read_capture(folder):
    """(records with "in"/"out" shas, BlobStore) from capture.cpp's folder."""
    folder = Path(folder)
    store, records = BlobStore(), []
    lines = (folder / "launches.jsonl").read_text().splitlines()
    for line in lines:
        rec = json.loads(line)
        rec["in"], rec["out"] = {}, {}
        for aid, size in rec["allocations"].items():
            if size > MAX_ALLOCATION:
                raise ValueError(f"launch {rec['launch']}: allocation {aid} is {size} bytes (at most {MAX_ALLOCATION})")
            raw_in = np.fromfile(folder / f"L{rec['launch']}_A{aid}.in", np.uint8)
            raw_out = np.fromfile(folder / f"L{rec['launch']}_A{aid}.out", np.uint8)
            rec["in"][aid] = store.add(raw_in)
            rec["out"][aid] = store.add(raw_out, base=rec["in"][aid])
        records.append(rec)
    return records, store


def load(folder):
    """(capture.json's document, {sha: uint8 array}) from the committed files."""
    doc = json.loads((Path(folder) / "capture.json").read_text())
    with np.load(Path(folder) / "capture.npz") as z:
        arrays = {k: z[k] for k in z.files}
    store = BlobStore()
    store.arrays, store.index = arrays, doc["blobs"]
    return doc, {sha: store.get(sha) for sha in doc["blobs"]}


def launch_args(record, contents):
    """(args for layoutsim.ptx.run, {allocation: the model's input copy}) for one record."""
    arrays = {aid: np.array(contents[sha], np.uint8) for aid, sha in record["in"].items()}
    pointers = defaultdict(list)
    for param, at, aid, byte in record["pointers"]:
        pointers[param].append((at, arrays[str(aid)], byte))
    args = [StructArg(bytes.fromhex(p["hex"]), tuple(pointers[i])) for i, p in enumerate(record["params"])]
    return args, arrays


def replay(ptx, record, contents, arch="sm_90", **kw):
    """(layoutsim Run, {allocation: final bytes}) for one captured launch."""
    args, arrays = launch_args(record, contents)
    r = run(ptx, record["kernel"], tuple(record["grid"]), tuple(record["block"]), args, arch=arch,
            shared_bytes=record["shared_bytes"], **kw)
    return r, finals(args, arrays, r.buffers)


def finals(args, arrays, buffers):
    """{allocation: final bytes} from a Run's buffers: a StructArg's entry holds one final content
    per array it points into, in the order of each array's first pointer (an array named by
    several pointers, e.g. d_offsets and d_offsets + 1, is one buffer)."""
    by_id = {id(a): aid for aid, a in arrays.items()}
    final = {}
    for a, got in zip(args, buffers):
        named = list({id(arr): arr for _, arr, _ in a.pointers}.values())
        for arr, buf in zip(named, got or ()):
            final[by_id[id(arr)]] = buf
    return final


def differences(record, final, contents):
    """One line per allocation whose final bytes differ from the GPU's (empty: bit for bit)."""
    out = []
    for aid, sha in record["out"].items():
        want, got = contents[sha], final.get(aid)
        if got is None:
            out.append(f"allocation {aid}: not replayed")
            continue
        bad = np.flatnonzero(want != got)
        if bad.size:
            out.append(f"allocation {aid} ({want.size} bytes): {bad.size} bytes differ, first at byte {bad[0]}: "
                       f"GPU {want[bad[0]]:#04x}, model {got[bad[0]]:#04x}")
    return out
