"""Seed programs: three small kernels written on the simulator, as a CUDA programmer writes them.

Each lane computes its own addresses from its lane / thread index (groupID = lane >> 2,
threadID_in_group = lane % 4, as the PTX ISA names them), moves raw 32-bit words with loads and
stores, and hands registers to ldmatrix / mma.sync. The program text states the packing the
way a kernel does; the simulator interprets the registers only through the catalog, so a run
checks the kernel's hand packing against the catalog and `layoutsim.mma`.

1. `mma_sync_m16n8k16`: one warp, A/B/C packed by hand from global memory with ld.global,
   one mma.sync.m16n8k16, D stored with st.global.v2.b32.
2. `block_tile`: the wmma_v2-style 64x64 block tile (4 warps, each 32x32), BK=32, PAD halfs of
   padding per shared row; main loop: 128-bit global loads and st.shared fills of the A and B
   tiles, ldmatrix.x4 (A) and ldmatrix.x4.trans / .x2.trans (B), mma.sync.m16n8k16.
3. `gemv_w8a8`: batch-1 int8 GEMV y = W x on mma.m16n8k32.s32.s8.s8.s32 (s32 accumulation),
   or on RDNA4's v_wmma_i32_16x16x16_iu8 (arch gfx1201); the result reports how much of each
   MMA tile is padding.

Run `python -m layoutsim.sim.seeds` to print their traces.
"""
import numpy as np

from ..errors import LayoutsimError
from .machine import Warp, Warpgroup, regs

F16_MMA = "mma.m16n8k16.f32.f16.f16.f32"
S8_MMA = "mma.m16n8k32.s32.s8.s8.s32"


def _f16(x):
    return np.ascontiguousarray(np.asarray(x, dtype=np.float16))


# ====================================================================================== 1
def mma_sync_m16n8k16(a, b, c=None, arch="sm_90", instr=F16_MMA, mma=None):
    """D = A B + C with one warp and one mma.sync.m16n8k16, operands packed by hand.

    a: 16x16 f16 (row-major in global), b: 16x8 f16 (kept column-major in global, as the
    `.col` B operand: element B[k][n] at n*16 + k), c: 16x8 f32 or None (zeros).
    Returns Run(result = D 16x8 float32 read back from global, trace).
    """
    a, b = _f16(a), _f16(b)
    if a.shape != (16, 16) or b.shape != (16, 8):
        raise LayoutsimError(f"mma_sync_m16n8k16: A must be 16x16 and B 16x8, got {a.shape} and {b.shape}")
    c = np.zeros((16, 8), np.float32) if c is None else np.ascontiguousarray(c, dtype=np.float32)
    w = Warp(arch, mma=mma)
    w.global_alloc("A", a)
    w.global_alloc("Bt", np.ascontiguousarray(b.T))       # column-major B
    w.global_alloc("C", c)
    w.global_alloc("D", np.zeros((16, 8), np.float32))
    return w.run(_mma_sync_program, instr)


def _mma_sync_program(w, instr):
    g, t = w.lane >> 2, w.lane & 3          # groupID, threadID_in_group
    f16, f32 = 2, 4                         # bytes
    # A (row-major, 16 halfs per row): a0a1 = A[g][2t..2t+1], a2a3 = A[g+8][..],
    # a4a5 = A[g][2t+8..], a6a7 = A[g+8][2t+8..]: one 32-bit word each.
    for j, (dr, dc) in enumerate(((0, 0), (8, 0), (0, 8), (8, 8))):
        w.ld_global(f"a{j}", "A", ((g + dr) * 16 + 2 * t + dc) * f16)
    # B (column-major, 16 halfs per column): b0b1 = B[2t..2t+1][g], b2b3 = B[2t+8..][g]
    for j, dk in enumerate((0, 8)):
        w.ld_global(f"b{j}", "Bt", (g * 16 + 2 * t + dk) * f16)
    # C (row-major f32): c0c1 = C[g][2t..2t+1], c2c3 = C[g+8][2t..2t+1]: 64-bit loads
    w.ld_global(["c0", "c1"], "C", (g * 8 + 2 * t) * f32, bits=64)
    w.ld_global(["c2", "c3"], "C", ((g + 8) * 8 + 2 * t) * f32, bits=64)
    w.mma(instr, d="d", a="a", b="b", c="c")
    w.st_global("D", (g * 8 + 2 * t) * f32, ["d0", "d1"], bits=64)
    w.st_global("D", ((g + 8) * 8 + 2 * t) * f32, ["d2", "d3"], bits=64)
    return w.global_array("D")


# ====================================================================================== 2
def block_tile(a, b, pad=8, bk=32, b_load="x4", arch="sm_90", instr=F16_MMA, mma=None):
    """The wmma_v2-style 64x64 block tile: C = A B with A 64xK, B Kx64 (f16, row-major).

    4 warps (a Warpgroup used as a 4-warp block), warp w computes rows 32*(w//2).. and columns
    32*(w%2).. of C as 2x4 mma.sync.m16n8k16 tiles. Shared memory: As[64][bk+pad] then
    Bs[bk][64+pad] halfs. b_load "x4" loads B with ldmatrix.x4.trans (two n8 tiles at once),
    "x2" with ldmatrix.x2.trans. Returns Run(result = C 64x64 float32, trace).
    """
    a, b = _f16(a), _f16(b)
    if a.shape[0] != 64 or b.shape[1] != 64 or a.shape[1] != b.shape[0] or a.shape[1] % bk or bk % 16:
        raise LayoutsimError(f"block_tile: need A 64xK, B Kx64 with K a multiple of bk={bk} (bk a multiple "
                             f"of 16); got A {a.shape}, B {b.shape}")
    if pad % 8:
        raise LayoutsimError(f"block_tile: pad={pad} halfs breaks the 16-byte alignment of 128-bit "
                             f"stores and ldmatrix rows; use a multiple of 8")
    if b_load not in ("x4", "x2"):
        raise LayoutsimError(f"block_tile: b_load={b_load!r}; valid: x4, x2")
    m = Warpgroup(arch, mma=mma)
    m.global_alloc("A", a)
    m.global_alloc("B", b)
    m.global_alloc("C", np.zeros((64, 64), np.float32))
    return m.run(_block_tile_program, a.shape[1], pad, bk, b_load, instr)


def _block_tile_program(m, K, pad, bk, b_load, instr):
    BM = BN = 64
    f16, f32 = 2, 4
    a_pitch, b_pitch = bk + pad, BN + pad                 # halfs per shared row
    As, Bs = 0, BM * a_pitch * f16                         # byte offsets of the two tiles
    tid, lane, warp = m.tid, m.lane, m.warp_id
    g, t = lane >> 2, lane & 3
    wm, wn = warp // 2, warp % 2                           # the warp's 32x32 quadrant
    acc = {(mi, ni): regs(f"acc{mi}{ni}_", 4) for mi in range(2) for ni in range(4)}
    for r in acc.values():
        for name in r:
            m.mov(name, 0)
    a_chunks, b_chunks = bk // 8, BN // 8                  # 16-byte chunks per tile row
    for k0 in range(0, K, bk):
        # ---- global -> shared: each thread moves 16 bytes at a time
        for i in range(BM * a_chunks // 128):
            c = tid + 128 * i
            row, col = c // a_chunks, (c % a_chunks) * 8
            m.ld_global(regs("ga", 4), "A", (row * K + k0 + col) * f16, bits=128)
            m.st_shared(As + (row * a_pitch + col) * f16, regs("ga", 4), bits=128)
        for i in range(bk * b_chunks // 128):
            c = tid + 128 * i
            row, col = c // b_chunks, (c % b_chunks) * 8
            m.ld_global(regs("gb", 4), "B", ((k0 + row) * BN + col) * f16, bits=128)
            m.st_shared(Bs + (row * b_pitch + col) * f16, regs("gb", 4), bits=128)
        # (__syncthreads(): the simulated warps run in lockstep)
        for kk in range(0, bk, 16):
            # A fragments: ldmatrix.x4, lanes 0-15 give rows 0-15 at column kk, lanes 16-31 at kk+8
            afrag = {}
            for mi in range(2):
                row = 32 * wm + 16 * mi + (lane % 16)
                col = kk + (lane // 16) * 8
                afrag[mi] = regs(f"fa{mi}_", 4)
                m.ldmatrix("ldmatrix.x4", afrag[mi], As + (row * a_pitch + col) * f16)
            # B fragments: B is k-major rows in shared memory, so .trans gives the .col operand
            bfrag = {}
            if b_load == "x4":
                for nj in range(2):
                    row = kk + (lane % 16)
                    col = 32 * wn + 16 * nj + (lane // 16) * 8
                    r = regs(f"fb{nj}_", 4)
                    m.ldmatrix("ldmatrix.x4.trans", r, Bs + (row * b_pitch + col) * f16)
                    bfrag[2 * nj], bfrag[2 * nj + 1] = r[:2], r[2:]
            else:
                for ni in range(4):
                    row = kk + (lane % 16)                 # lanes 16-31: ignored by .x2
                    col = 32 * wn + 8 * ni
                    bfrag[ni] = regs(f"fb{ni}_", 2)
                    m.ldmatrix("ldmatrix.x2.trans", bfrag[ni], Bs + (row * b_pitch + col) * f16)
            for mi in range(2):
                for ni in range(4):
                    m.mma(instr, d=acc[mi, ni], a=afrag[mi], b=bfrag[ni], c=acc[mi, ni])
    # ---- epilogue: c0c1 -> C[g][2t..], c2c3 -> C[g+8][2t..] with 64-bit stores
    for (mi, ni), r in acc.items():
        row = 32 * wm + 16 * mi + g
        col = 32 * wn + 8 * ni + 2 * t
        m.st_global("C", (row * BN + col) * f32, r[:2], bits=64)
        m.st_global("C", ((row + 8) * BN + col) * f32, r[2:], bits=64)
    return m.global_array("C")


# ====================================================================================== 3
GFX12_IU8 = "v_wmma_i32_16x16x16_iu8"


def signed_iu8(instr="v_wmma_i32_16x16x16_iu8", arch="gfx1201", wave=32):
    """The gfx12 iu8 WMMA with NEG[0] = NEG[1] = 1 (A and B read as signed int8).

    The catalog entry shows the default encoding (unsigned); the signed form has the same
    fragments, so it is the same Instruction with formats s8 and options signed_a/signed_b."""
    import dataclasses

    from ..isa.registry import get
    ins = get(instr, arch=arch, wave=wave)
    return dataclasses.replace(ins, formats={**ins.formats, "a": "s8", "b": "s8"},
                               options={**ins.options, "signed_a": True, "signed_b": True})


def gemv_w8a8(weight, x, layout="x_in_A", arch="sm_90", instr=None, mma=None):
    """Batch-1 int8 GEMV y = W x (s32 accumulation), one warp.

    weight: N x K int8 (row-major in global), x: K int8.
    NVIDIA (mma.sync.m16n8k32 s8, default arch sm_90):
      layout "x_in_A": x is row 0 of the 16-row A tile (rows 1-15 are padding), W^T is B
        (B's columns are W's rows, contiguous in K): each mma makes 8 outputs. N % 8, K % 32.
      layout "w_in_A": W's rows are A's 16 rows, x is column 0 of the 8-column B (columns 1-7
        are padding): each mma makes 16 outputs. N % 16, K % 32.
    AMD (arch gfx1200/gfx1201: v_wmma_i32_16x16x16_iu8, wave32, signed A and B): layout
      "x_in_A" only: x is row 0 of the 16-row A tile, W^T is B, 16 outputs per WMMA. N % 16, K % 16.
    Returns Run(result = {"y": int32 [N], "padding": {...}}, trace).
    """
    from .. import archs
    wt = np.ascontiguousarray(weight, dtype=np.int8)
    xv = np.ascontiguousarray(x, dtype=np.int8).reshape(-1)
    N, K = wt.shape
    amd = archs.vendor(archs.normalize(arch)) == "amd"
    if amd:
        ins = signed_iu8(instr or GFX12_IU8, arch)
        programs = {"x_in_A": _gemv_gfx12_x_in_a}
    else:
        from ..isa.registry import get
        ins = get(instr or S8_MMA, arch=arch)
        programs = {"x_in_A": _gemv_x_in_a, "w_in_A": _gemv_w_in_a}
    if layout not in programs:
        raise LayoutsimError(f"gemv_w8a8: layout={layout!r} on {arch}; valid: {', '.join(programs)}")
    M_, N_, K_ = ins.shape
    step = M_ if layout == "w_in_A" else N_
    if xv.size != K or K % K_ or N % step:
        raise LayoutsimError(f"gemv_w8a8: need W N x K with K a multiple of {K_} and N of {step}, and x "
                             f"of length K; got W {wt.shape}, x {xv.shape}")
    w = Warp(arch, mma=mma)
    w.global_alloc("W", wt)
    w.global_alloc("x", xv)
    w.global_alloc("y", np.zeros(N, np.int32))
    run = w.run(programs[layout], N, K, ins)
    n_mma = (N // step) * (K // K_)
    if layout == "x_in_A":
        pad = {"A_rows_used": 1, "A_rows": M_, "B_cols_used": N_, "B_cols": N_}
    else:
        pad = {"A_rows_used": M_, "A_rows": M_, "B_cols_used": 1, "B_cols": N_}
    useful = pad["A_rows_used"] * pad["B_cols_used"]
    pad.update({"layout": layout, "instruction": ins.name, "mma_count": n_mma,
                "A_padding": 1 - pad["A_rows_used"] / pad["A_rows"],
                "B_padding": 1 - pad["B_cols_used"] / pad["B_cols"],
                "D_useful": f"{useful} of {M_ * N_}",
                "useful_mac_fraction": useful / (M_ * N_),
                "useful_macs": N * K, "issued_macs": n_mma * M_ * N_ * K_})
    run.result = {"y": run.result, "padding": pad}
    return run


def padding_summary(p):
    """One line for a padding report of gemv_w8a8."""
    return (f"{p['layout']} on {p['instruction']}: A rows used {p['A_rows_used']} of {p['A_rows']} "
            f"({p['A_padding']:.2%} padding), B columns used {p['B_cols_used']} of {p['B_cols']} "
            f"({p['B_padding']:.2%} padding); {p['mma_count']} MMAs issue {p['issued_macs']} MACs for "
            f"{p['useful_macs']} useful ({p['useful_mac_fraction']:.2%})")


def _gemv_x_in_a(w, N, K, ins):
    g, t = w.lane >> 2, w.lane & 3
    row0 = g == 0                               # lanes 0-3 hold A's row 0 (and D's row 0)
    for name in ("a0", "a1", "a2", "a3"):       # rows 8-15 (a1, a3) and rows 1-7 stay zero
        w.mov(name, 0)
    for n0 in range(0, N, 8):
        for j in range(4):
            w.mov(f"acc{j}", 0)
        for k0 in range(0, K, 32):
            # A row 0 = x: a0 = x[k0+4t..+3], a2 = x[k0+16+4t..+3] (lanes with g == 0 only)
            w.ld_global("a0", "x", k0 + 4 * t, mask=row0)
            w.ld_global("a2", "x", k0 + 16 + 4 * t, mask=row0)
            # B[k][n] = W[n0+n][k]: b0 = W[n0+g][k0+4t..+3], b1 = W[n0+g][k0+16+4t..+3]
            w.ld_global("b0", "W", (n0 + g) * K + k0 + 4 * t)
            w.ld_global("b1", "W", (n0 + g) * K + k0 + 16 + 4 * t)
            w.mma(ins, d="acc", a="a", b="b", c="acc")
        # D row 0: acc0, acc1 = y[n0+2t], y[n0+2t+1] on lanes 0-3
        w.st_global("y", (n0 + 2 * t) * 4, ["acc0", "acc1"], bits=64, mask=row0)
    return w.global_array("y")


def _gemv_w_in_a(w, N, K, ins):
    g, t = w.lane >> 2, w.lane & 3
    col0 = g == 0                               # lanes 0-3 hold B's column 0
    w.mov("b0", 0)
    w.mov("b1", 0)
    for n0 in range(0, N, 16):
        for j in range(4):
            w.mov(f"acc{j}", 0)
        for k0 in range(0, K, 32):
            # A = W[n0:n0+16, k0:k0+32]: a0 = W[n0+g][k0+4t..], a1 = W[n0+g+8][..],
            # a2 = W[n0+g][k0+16+4t..], a3 = W[n0+g+8][k0+16+4t..]
            for j, (dr, dc) in enumerate(((0, 0), (8, 0), (0, 16), (8, 16))):
                w.ld_global(f"a{j}", "W", (n0 + g + dr) * K + k0 + dc + 4 * t)
            # B column 0 = x: b0 = x[k0+4t..], b1 = x[k0+16+4t..] on lanes with g == 0
            w.ld_global("b0", "x", k0 + 4 * t, mask=col0)
            w.ld_global("b1", "x", k0 + 16 + 4 * t, mask=col0)
            w.mma(ins, d="acc", a="a", b="b", c="acc")
        # D column 0: acc0 = D[g][0], acc2 = D[g+8][0] on lanes with t == 0
        w.st_global("y", (n0 + g) * 4, "acc0", mask=t == 0)
        w.st_global("y", (n0 + g + 8) * 4, "acc2", mask=t == 0)
    return w.global_array("y")


def _gemv_gfx12_x_in_a(w, N, K, ins):
    """RDNA4 wave32, 8-bit A/B of a 16x16x16 WMMA: lane l holds row (or column) l % 16 and
    k = 8*(l // 16) + 0..7 in two VGPRs (4 bytes each); D: VGPR v of lane l is D[8*(l//16) + v][l % 16]."""
    i, h = w.lane % 16, w.lane // 16
    row0 = i == 0                               # lanes 0 and 16 hold A's row 0
    w.mov("a0", 0)
    w.mov("a1", 0)
    for n0 in range(0, N, 16):
        for j in range(8):
            w.mov(f"acc{j}", 0)
        for k0 in range(0, K, 16):
            # A row 0 = x: a0 = x[k0+8h..+3], a1 = x[k0+8h+4..+7]
            w.ld_global("a0", "x", k0 + 8 * h, mask=row0)
            w.ld_global("a1", "x", k0 + 8 * h + 4, mask=row0)
            # B[k][n] = W[n0+n][k]: b0 = W[n0+i][k0+8h..+3], b1 = W[n0+i][k0+8h+4..+7]
            w.ld_global("b0", "W", (n0 + i) * K + k0 + 8 * h)
            w.ld_global("b1", "W", (n0 + i) * K + k0 + 8 * h + 4)
            w.mma(ins, d="acc", a="a", b="b", c="acc")
        # D row 0 is VGPR 0 of lanes 0-15: y[n0+l] = acc0
        w.st_global("y", (n0 + i) * 4, "acc0", mask=h == 0)
    return w.global_array("y")


# ====================================================================================== main
def main():
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 8)).astype(np.float16)
    run = mma_sync_m16n8k16(a, b)
    print("== 1. mma.sync.m16n8k16 packed by hand: max |D - A B| =",
          float(np.abs(run.result - a.astype(np.float64) @ b.astype(np.float64)).max()))
    print(run.trace.format())
    A = rng.integers(-2, 3, (64, 128)).astype(np.float16)
    B = rng.integers(-2, 3, (128, 64)).astype(np.float16)
    for pad in (8, 0):
        run = block_tile(A, B, pad=pad)
        print(f"\n== 2. wmma_v2-style 64x64 tile, BK=32, PAD={pad}")
        print(run.trace.format())
    W = rng.integers(-128, 128, (32, 256)).astype(np.int8)
    x = rng.integers(-128, 128, 256).astype(np.int8)
    for arch, layout in (("sm_90", "x_in_A"), ("sm_90", "w_in_A"), ("gfx1201", "x_in_A")):
        run = gemv_w8a8(W, x, layout=layout, arch=arch)
        ok = (run.result["y"] == W.astype(np.int64) @ x.astype(np.int64)).all()
        print(f"\n== 3. W8A8 GEMV 32x256 on {arch}, y == W x: {ok}")
        print(padding_summary(run.result["padding"]))
        print(run.trace.format())


if __name__ == "__main__":
    from ..script import run_script
    raise SystemExit(run_script(main, "python -m layoutsim.sim.seeds"))
