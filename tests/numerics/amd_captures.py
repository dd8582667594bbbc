"""Replays of the raw results AMD captured on gfx1201 (Radeon AI Pro R9700) and published with
rocjitsu (ROCm/rocm-systems, MIT), as copied into bjacob/goc (tests/data/numerics/amd/*.json
name the files, commits and licence). Every capture is a register-level experiment: inputs
were placed in VGPRs, the instruction ran, D's VGPRs were read. The replay maps those
registers to matrices through the catalog's fragment maps (layoutsim.isa.amd_wmma), runs
layoutsim.mma with the gfx12 profile, and maps D back to registers.
"""
import dataclasses
import json
from pathlib import Path

import numpy as np

import layoutsim
from layoutsim.isa import amd_wmma
from layoutsim.packing import pack, squeeze_matrices, unpack, words_per_lane

DATA = Path(__file__).resolve().parents[1] / "data" / "numerics" / "amd"
ARCH = "gfx1201"


def load(name):
    path = DATA / name
    if not path.exists():        # a replay never skips: missing data is an error
        raise FileNotFoundError(f"capture file {path} is missing")
    return json.loads(path.read_text())


def _hex(rows, dtype):
    return np.array([[int(x, 16) for x in row] for row in rows], dtype)


# ----------------------------------------------------------------------------- registers
def gather(frag, regs):
    """The raw matrix (batch, rows, cols) a FragmentMap reads from the captures' VGPRs
    (batch, vgprs, lanes), through layoutsim.packing."""
    words = np.ascontiguousarray(regs[:, :words_per_lane(frag)].transpose(0, 2, 1))
    return squeeze_matrices(unpack(frag, words))


def scatter(frag, mat, vgprs):
    """The VGPRs (batch, vgprs, lanes) holding a matrix (batch, rows, cols) of a map."""
    words = pack(frag, mat)                              # (batch, lanes, words)
    out = np.zeros((mat.shape[0], vgprs, frag.lanes), np.uint32)
    out[:, :words.shape[2]] = words.transpose(0, 2, 1)
    return out


def fnv1a(words):
    """FNV-1a 64 of (batch, n) 32-bit words, four little-endian bytes each (goc capture_hash.h)."""
    h = np.full(words.shape[0], 14695981039346656037, np.uint64)
    prime = np.uint64(1099511628211)
    w = words.astype(np.uint64)
    for i in range(words.shape[1]):
        for byte in range(4):
            h = (h ^ ((w[:, i] >> np.uint64(8 * byte)) & np.uint64(255))) * prime
    return h


# ----------------------------------------------------------------------------- integer digests
def capture_inputs(samples):
    """(samples, 15, 32) VGPRs: goc's integer_wmma_capture_inputs (the JSON's "inputs")."""
    out = np.zeros((len(samples), 15, 32), np.uint32)
    accs = (0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FFFFF80, 0x80000080)
    pairs = (4, 8, 12, 9, 13, 14)
    for n, s in enumerate(samples):
        x = (0xA3987412 + s) & 0xFFFFFFFF

        def draw():
            nonlocal x
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            return x
        for r in range(6):
            out[n, r] = [draw() for _ in range(32)]
        for r in range(6, 14):
            out[n, r] = [accs[draw() % 6] for _ in range(32)]
        out[n, 14] = [sum(pairs[draw() % 6] << (4 * g) for g in range(8)) for _ in range(32)]
    return out


def integer_digests(mnemonic, mode, regs):
    """FNV-1a digests of D for every sample's registers under one mode (the JSON's "modes")."""
    sparse = mnemonic.startswith("v_swmmac")
    inst = amd_wmma.build(mnemonic, "gfx12", 32, index_key=(mode >> 3) & 1 if sparse else 0)
    inst = dataclasses.replace(inst, options={**inst.options, "signed_a": bool(mode & 1),
                                              "signed_b": bool(mode & 2), "clamp": bool(mode & 4)})
    op = inst.operand
    a = gather(op("A").fragment, regs[:, 0:2]).astype(np.uint8)
    b = gather(op("B").fragment, regs[:, 2:6 if sparse else 4]).astype(np.uint8)
    c = gather(op("C").fragment, regs[:, 6:14])
    index = gather(op("IDX").fragment, regs[:, 14:15]).astype(np.uint8) if sparse else None
    d = layoutsim.mma(inst, a, b, c, arch=ARCH, raw=True, index=index)
    return fnv1a(scatter(op("D").fragment, d.astype(np.uint32), 8).reshape(len(regs), -1))


def replay_integer():
    """[(mnemonic, sample, mode, expected, got)] for every integer capture."""
    doc = load("gfx1201_integer_digests.json")
    regs = capture_inputs(range(16))
    out = []
    for family in ("dense", "swmmac"):
        for mnemonic, rows in doc[family].items():
            want = _hex(rows, np.uint64)                 # [sample, mode]
            for mode in range(want.shape[1]):
                got = integer_digests(mnemonic, mode, regs)
                out += [(mnemonic, s, mode, int(want[s, mode]), int(got[s])) for s in range(16)]
    return out


# ----------------------------------------------------------------------------- f16/bf16
def replay_dot2():
    """[(fmt, case, expected, got)]: each V_DOT2 capture as one WMMA step, the two factors at
    k = 0 and 1 of row 0 / column 0, C[0][0] = c, everything else 0 (later steps pass D on
    unchanged: their products are 0 and C is exact on their grid)."""
    doc = load("gfx1201_float_dot.json")
    return [(fmt, *r) for fmt, rows in doc["dot2"].items() for r in dot2_steps(fmt, rows, ARCH)]


def dot2_steps(fmt, rows, arch):
    """[(case, expected, got)] of DOT2 captures [a pair, b pair, c, d] (hex words) run as one
    WMMA step on `arch`."""
    v = _hex(rows, np.uint64)
    n = len(v)
    A = np.zeros((n, 16, 16), np.uint16)
    B = np.zeros((n, 16, 16), np.uint16)
    C = np.zeros((n, 16, 16), np.uint32)
    A[:, 0, 0], A[:, 0, 1] = v[:, 0] & 0xFFFF, v[:, 0] >> 16
    B[:, 0, 0], B[:, 1, 0] = v[:, 1] & 0xFFFF, v[:, 1] >> 16
    C[:, 0, 0] = v[:, 2]
    d = layoutsim.mma(f"v_wmma_f32_16x16x16_{fmt}", A, B, C, arch=arch, raw=True)
    return [(i, int(v[i, 3]), int(d[i, 0, 0])) for i in range(n)]


def replay_wmma():
    """[(fmt, wave, case, expected, got values)]: every D element of each WMMA capture, the
    registers loaded as the capture did (the JSON's "notes")."""
    doc = load("gfx1201_float_dot.json")
    out = []
    for fmt, cases in doc["wmma"].items():
        for wave in (32, 64):
            inst = layoutsim.get(f"v_wmma_f32_16x16x16_{fmt}", arch=ARCH, wave=wave)
            per = 256 // wave
            mats = {}
            for name in "AB":
                vec = _hex([c[name.lower()] for c in cases], np.uint32)   # [case, f]
                regs = np.zeros((len(cases), 8, wave), np.uint32)
                for lane in range(wave):
                    for reg in range(per // 2):
                        f = (lane // 16) * per + 2 * reg
                        regs[:, reg, lane] = vec[:, f] | (vec[:, f + 1] << np.uint32(16))
                mats[name] = gather(inst.operand(name).fragment, regs).astype(np.uint16)
            C = np.array([np.full((16, 16), int(c["c"], 16), np.uint32) for c in cases])
            d = layoutsim.mma(inst, mats["A"], mats["B"], C, arch=ARCH, raw=True)
            for i, c in enumerate(cases):
                out.append((fmt, wave, i, int(c[f"d_wave{wave}"], 16), sorted({int(x) for x in d[i].ravel()})))
    return out


def _hex16(text):
    return np.array([int(text[i:i + 4], 16) for i in range(0, len(text), 4)], np.uint32)


def packed_registers(arrays, wave, key):
    """VGPRs (fixtures, 128/wave, wave) of A ("a"), B ("b") or C ("c") loaded from row-major
    16-bit matrices as the capture did (the JSON's "notes": goc tests/packed_wmma_test.cpp)."""
    regs = np.zeros((len(arrays), 128 // wave, wave), np.uint32)
    for lane in range(wave):
        i = lane % 16
        for r in range(128 // wave):
            k = (lane // 16) * (256 // wave) + 2 * r
            row = ((lane // 16) * 8 if wave == 32 else ((lane >> 4) & 1) * 8 + (lane >> 5) * 4) + 2 * r
            lo, hi = {"a": (i * 16 + k, i * 16 + k + 1), "b": (k * 16 + i, (k + 1) * 16 + i),
                      "c": (row * 16 + i, (row + 1) * 16 + i)}[key]
            regs[:, r, lane] = arrays[:, lo] | (arrays[:, hi] << np.uint32(16))
    return regs


def packed_cases():
    """Per wave size and format: (wave, fmt, instruction, A, B, C raw matrices of the 7 fixtures
    as the capture's registers hold them, expected row-major D arrays)."""
    doc = load("gfx1201_packed_wmma.json")
    for wave in (32, 64):
        for fmt in ("f16", "bf16"):
            inst = layoutsim.get(f"v_wmma_{fmt}_16x16x16_{fmt}", arch=ARCH, wave=wave)
            mats = []
            for key in "abc":
                arrays = np.array([_hex16(x[key]) for x in doc["inputs"][fmt]])
                regs = packed_registers(arrays, wave, key)
                mats.append(gather(inst.operand(key.upper()).fragment, regs).astype(np.uint16))
            want = np.array([_hex16(t) for t in doc["expected"][f"wave{wave}"][fmt]])
            yield wave, fmt, inst, *mats, want


def packed_read_back(inst, d, wave):
    """D (fixtures, 16, 16) -> the row-major arrays the capture read from D's registers."""
    regs = scatter(inst.operand("D").fragment, d.astype(np.uint32), 128 // wave)
    out = np.zeros((len(d), 256), np.uint32)
    for row in range(16):
        for col in range(16):
            lane = col + 16 * (row // 8) + (32 * ((row // 4) % 2) if wave == 64 else 0)
            out[:, row * 16 + col] = (regs[:, (row % (256 // wave)) // 2, lane] >> (16 * (row % 2))) & 0xFFFF
    return out


def replay_packed():
    """[(wave, fmt, fixture, element, expected, got)]: every D element of the packed f16/bf16
    WMMA captures, registers loaded and D read back as the capture did (JSON "notes")."""
    out = []
    for wave, fmt, inst, a, b, c, want in packed_cases():
        got = packed_read_back(inst, layoutsim.mma(inst, a, b, c, arch=ARCH, raw=True), wave)
        out += [(wave, fmt, f, e, int(want[f, e]), int(got[f, e]))
                for f in range(len(want)) for e in range(256)]
    return out


def packed_narrowed_once():
    """The same captures under the alternative of narrowing once: the f32-result WMMA on the
    same inputs (C widened exactly), its result then rounded to the 16-bit format (f16: to
    nearest even; bf16: the fp32 result truncated). [(expected, got)]."""
    from layoutsim.formats import decode, encode
    out = []
    for wave, fmt, inst, a, b, c, want in packed_cases():
        f32 = layoutsim.get(f"v_wmma_f32_16x16x16_{fmt}", arch=ARCH, wave=wave)
        d = layoutsim.mma(f32, a, b, encode("f32", decode(fmt, c)), arch=ARCH, raw=True)
        d16 = encode("f16", decode("f32", d)) if fmt == "f16" else (d >> 16).astype(np.uint16)
        got = packed_read_back(inst, d16, wave)
        out += list(zip(want.ravel().tolist(), got.ravel().tolist()))
    return out


# ----------------------------------------------------------------------------- gfx1100
def replay_gfx11():
    """[(what, index, expected, got)]: the gfx1100 DOT2 captures (one WMMA step each, as above)
    and the captured f32 WMMA matrix (inputs per the JSON's "notes"), for f16 and bf16 inputs."""
    from layoutsim.formats import encode
    doc = load("gfx1100_float_dot.json")
    out = []
    for fmt, rows in doc["dot2"].items():
        out += [(f"dot2 {fmt}", *r) for r in dot2_steps(fmt, rows, "gfx1100")]
    i, k = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    a = ((i * 16 + k) * 7) % 17 - 8                  # A[i][k]
    b = ((i * 16 + k) * 11) % 17 - 8                 # B[k][j] with (i, k) read as (k, j)
    c = ((i * 16 + k) * 13) % 129 - 64               # C[i][j]
    want = [int(x, 16) for x in doc["wmma_integer_matrix"]]
    for fmt in ("f16", "bf16"):
        d = layoutsim.mma(f"v_wmma_f32_16x16x16_{fmt}", encode(fmt, a), encode(fmt, b),
                          encode("f32", c), arch="gfx1100", raw=True)
        out += [(f"wmma {fmt}", e, want[e], int(d.reshape(-1)[e])) for e in range(256)]
    return out
