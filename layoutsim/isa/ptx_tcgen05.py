"""Blackwell (sm_100a) tensor memory: the tcgen05.ld / tcgen05.st register maps, where a
tcgen05.mma puts its accumulator D in tensor memory (TMEM, `archs.tmem`), and where tcgen05.cp puts
each row of its shared-memory source (cp_fragment, the entries `tcgen05.cp.<shape>[.b8x16.<src_fmt>]`).

tcgen05.ld/st (PTX ISA 9.x (v9.2) 9.7.16.2.3.1 'Matrix fragments for shape .32x32b / .16x64b /
.16x128b / .16x256b / .16x32bx2', Figures 183-187; the closed forms below are the ones TVM
TIRx's 'tcgen05.ld / tcgen05.st' page publishes for those figures). Operand "R" is the warp's
registers: `row` is the TMEM lane relative to the lane of the instruction's address (the warp's
32-lane slab, or the 16 lanes a 16-row shape selects), `col` the 32-bit column relative to the
address's column. Register r of lane l of the unpacked .x1 form holds:
    32x32b    (l,                         r)
    16x64b    (l//4 + 8*(l%2),            (l//2)%2)
    16x128b   (l//4 + 8*r,                l%4)
    16x256b   (l//4 + 8*((r//2)%2),       r%2 + 2*(l%4))
    16x32bx2  matrix l//16: (l%16, 0), the second half at column address + immHalfSplitoff
.xN repeats the pattern N times along the columns (register r of repetition n = r + n*regs).
.pack::16b (ld) / .unpack::16b (st) read the low 16 bits of two adjacent columns into one
register: slot s of the register that the unpacked map puts at column c holds column 2c+s.

tcgen05.mma's D (PTX ISA 9.x 9.7.16.10 'Data path layout organization', Layouts A-G; the
(row, col) -> (lane, column) forms as TVM TIRx's tmem_datapath_layout publishes them, the
same atoms as CUTLASS's cute::UMMA::tmem_frg): a map whose "lanes" are TMEM lanes (cta_group::2:
lane L is TMEM lane L % 128 of CTA L // 128 of the pair) and whose "registers" are the 32-bit
columns from D's TMEM address.
"""
from ..archs import compile_target, tmem
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

ARCHS = ("sm_100",)
LDST_SOURCE = ("PTX ISA 9.x (v9.2) 9.7.16.2.3.1 'Matrix fragments for shape .{shape}' "
               "(tcgen05{{.ld,.st}}); closed form as TVM TIRx 'tcgen05.ld / tcgen05.st' publishes it")
# shape -> (TMEM lanes it reaches, registers per lane of .x1, largest .num)
SHAPES = {"32x32b": (32, 1, 128), "16x64b": (16, 1, 128), "16x128b": (16, 2, 64),
          "16x256b": (16, 4, 32), "16x32bx2": (16, 1, 128)}
NUMS = (1, 2, 4, 8, 16, 32, 64, 128)


def _x1(shape, l, r):
    """(matrix, row, col) of register r (< regs of .x1) of lane l, unpacked .x1."""
    if shape == "32x32b":
        return 0, l, r + 0 * l
    if shape == "16x64b":
        return 0, l // 4 + 8 * (l % 2), (l // 2) % 2 + 0 * r
    if shape == "16x128b":
        return 0, l // 4 + 8 * r, l % 4 + 0 * r
    if shape == "16x256b":
        return 0, l // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (l % 4)
    return l // 16, l % 16, 0 * (l + r)                                    # 16x32bx2


def _cols_x1(shape):
    """32-bit columns one .x1 covers (per matrix)."""
    rows, regs, _ = SHAPES[shape]
    return 1 if shape == "16x32bx2" else 32 * regs // rows


def word_formula(shape):
    """formula(lane, r) -> (matrix, row, col) of register r of any unpacked .xN."""
    regs, cols = SHAPES[shape][1], _cols_x1(shape)

    def f(l, r):
        m, row, col = _x1(shape, l, r % regs)
        return m, row, col + cols * (r // regs)
    return f


def ldst_fragment(shape, num, packed):
    """The "R" map of tcgen05.{ld,st}.<shape>.x<num>[.pack::16b / .unpack::16b]."""
    rows, regs, _ = SHAPES[shape]
    n_regs = regs * num
    slots = 2 if packed else 1
    mats = 2 if shape == "16x32bx2" else 1
    cols = _cols_x1(shape) * num * slots
    word = word_formula(shape)

    def f(l, i):
        m, row, col = word(l, i // slots)
        return m, row, col * slots + i % slots
    names = tuple(f"r{k // slots}" + ((".lo", ".hi")[k % slots] if packed else "")
                  for k in range(n_regs * slots))
    return FragmentMap.from_formula(32, n_regs * slots, slots, 32 // slots, (mats, rows, cols), f,
                                    names=names)


def _ldst_names(op, shape, num, packed):
    pk = (".pack::16b" if op == "ld" else ".unpack::16b") if packed else ""
    full = f"tcgen05.{op}.sync.aligned.{shape}.x{num}{pk}.b32"
    short = f"tcgen05.{op}.{shape}.x{num}{pk}"
    return full, short


def _ldst_notes(op, shape, packed):
    lanes = tmem(ARCHS[0])["lanes_per_warp"]
    out = [f"row: the TMEM lane from the address's lane (taddr bits 31-16); a warp reaches only "
           f"its own {lanes}-lane slab, lanes {lanes}*(warpid%4) .. +{lanes - 1}"
           + (", and a 16-row shape reads 16 of them from the lane it is given" if shape != "32x32b" else ""),
           "col: the 32-bit TMEM column from the address's column (taddr bits 15-0)",
           f"compile for {compile_target(ARCHS[0], arch_specific=True)}: tcgen05 is an arch-specific "
           f"feature of {ARCHS[0]}"]
    out.append("cross-checked (no B200 here): CUTLASS 4.2's SM100 TMEM "
               + ("load atom (cute/atom/copy_traits_sm100.hpp) gives the same map"
                  if op == "ld" else "store atom (cute/atom/copy_traits_sm100.hpp: the load atom's map "
                  "reversed) gives the same map")
               + ("; Triton 3.6 emits this shape for B200 accumulator loads with the same cells"
                  if shape in ("32x32b", "16x32bx2") and not packed else ""))
    if shape == "16x32bx2":
        out.append("matrix 0 is the half at the address, matrix 1 the half at column address + "
                   "immHalfSplitoff (the instruction's immediate)")
    if packed:
        out.append(f"{'.pack::16b' if op == 'ld' else '.unpack::16b'}: a register's bits 0-15 are "
                   f"the low 16 bits of column 2c, bits 16-31 those of column 2c+1 (the columns "
                   f"the unpacked form would put at c); {'ld' if op == 'ld' else 'st'} of "
                   f"{'16-bit data kept one per column' if op == 'ld' else 'one 16-bit value per column'}")
    return tuple(out)


def _build_ldst(op, shape, num, packed):
    full, short = _ldst_names(op, shape, num, packed)

    def build():
        frag = ldst_fragment(shape, num, packed)
        fmt = "b16" if packed else "b32"
        role = "output" if op == "ld" else "input"
        return Instruction(name=full, family=f"tcgen05.{op}", vendor="nvidia", threads=32,
                           operands={"R": Operand("R", fmt, frag, role)}, archs=ARCHS,
                           aliases=(short,), formats={"r": fmt},
                           source=LDST_SOURCE.format(shape=shape), arch_specific=True,
                           notes=_ldst_notes(op, shape, packed))
    return build


def entries():
    out = []
    for op in ("ld", "st"):
        for shape, (rows, regs, top) in SHAPES.items():
            for num in NUMS:
                if num > top:
                    continue
                for packed in (False, True):
                    full, short = _ldst_names(op, shape, num, packed)
                    verb = "loads" if op == "ld" else "stores"
                    out.append(Entry(name=full, family=f"tcgen05.{op}", vendor="nvidia", archs=ARCHS,
                                     build=_build_ldst(op, shape, num, packed), aliases=(short,),
                                     arch_specific=True,
                                     summary=f"warp {verb} {regs * num} reg/lane <-> {rows} TMEM lanes"
                                             f" x {_cols_x1(shape) * num * (2 if packed else 1)} cols"
                                             + (" (2 halves)" if shape == "16x32bx2" else "")))
    return out + cp_entries()


# ---- tcgen05.mma: where D lies in TMEM ----------------------------------------------------
# (cta_group, M, ws, sparse) -> the PTX ISA's data-path layout letter (9.7.16.10 'Data path
# layout organization'; TVM TIRx tmem_datapath_layout): A M=256 ::2, B M=128 ::2 dense,
# C M=128 ::2 sparse, D M=128 ::1, E M=64 .ws, F M=64 ::1, G M=32 .ws.
def layout_letter(cta_group, m, ws, sparse):
    if cta_group == 2:
        return {256: "A", 128: "C" if sparse else "B"}[m]
    if ws:
        return {128: "D", 64: "E", 32: "G"}[m]
    return {128: "D", 64: "F"}[m]


def d_position(letter, m, n, i, j):
    """(CTA of the pair, TMEM lane, column) of D[i][j] (numpy arrays or ints) in layout `letter`."""
    if letter == "A":                                   # 128 rows per CTA, identity
        return i // 128, i % 128, j
    if letter in ("B", "E"):                            # 64 rows, column halves folded
        half = n // 2
        return i // 64, i % 64 + 64 * (j // half), j % half
    if letter in ("C", "F"):                            # 64 rows, 16 per warp slab
        r = i % 64
        return i // 64, 32 * (r // 16) + r % 16, j
    if letter == "G":                                   # 32 rows, column quarters folded
        q = n // 4
        return 0 * i, i + 32 * (j // q), j % q
    return 0 * i, i, j                                  # D: identity over 128 lanes


def d_columns(letter, n):
    return {"B": n // 2, "E": n // 2, "G": n // 4}.get(letter, n)


def d_fragment(letter, m, n, cta_group, elem_bits=32):
    """D's map: lanes = TMEM lanes (x the CTA pair), registers = columns; unused cells -1."""
    import numpy as np
    cols = d_columns(letter, n)
    lanes = 128 * cta_group
    table = np.full((lanes, cols, 1, 3), -1, np.int16)
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    cta, lane, col = d_position(letter, m, n, i, j)
    table[128 * cta + lane, col, 0] = np.stack([0 * i, i, j], -1)
    return FragmentMap(table=table, shape=(1, m, n), elem_bits=elem_bits,
                       names=tuple(f"col{c}" for c in range(cols)))


# ---- block scale factors in TMEM ------------------------------------------------------------
# Which TMEM cells hold the scales (assumed: the PTX ISA's scale-factor figures, 9.7.16.10.7.2-3, were
# not read here): cta_group::1 and the pair's M = 256 as CUTLASS 4.2's UMMA::tmem_sf_frg lays them out
# (its default ScaleFactorDuplicated4by1); the pair's M = 128 (64 rows of A per CTA, D in Layout B) as
# JAX's Mosaic GPU places them (jax/experimental/mosaic/gpu/tcgen05.py, commit 1e7b972e56 "block-scaled
# 2CTA MMAs with M=128": A's scales in its 4x1 scales_layout(), B's copied by tcgen05.cp
# .64x128b.warpx2::01_23 from rows h*32 + j%32 = the columns j of half h = j // (N/2); its B200 test
# tests/mosaic/gpu_test.py test_mma_block_scaled_collective_m128, N = 64..256), which for N = 128 and
# 256 is also CUTLASS's ScaleFactorDuplicated2by2 (mma_traits_sm100_frag.hpp tmem_sf_frg: halves of
# round_up(N, 128) in lanes 0-63 / 64-127), the copy .warpx2::01_23 as CUTLASS's SM100_UTCCP_2x64dp128bitlw0123
# and TVM TIRx (B200-verified) state it: rows 0-31 to lanes 0-63, rows 32-63 to lanes 64-127.
def sf_fragment(mn, nsf, is_a, pair=None):
    """The scale factors of one block-scaled MMA in TMEM. cta_group::1 (pair None): the scales of row
    (SFA) / column (SFB) r lie in TMEM lane r % 32, column r // 32 from the scale address, byte s of
    that column for scale s; the map is the first 32-lane slab's copy (lanes 32, 64 and 96 up hold the
    same). cta_group::2 (pair = (M, N) of the pair's MMA; lanes are the pair's 256, lane L: TMEM lane
    L % 128 of CTA L // 128): SFA row r of CTA c = r // (M/2) in lane 128c + r % 32, column (r % (M/2))
    // 32 (its slab copies as above); SFB the even CTA's copy (the odd CTA holds the same): M = 256 as
    cta_group::1, M = 128 column j of half h = j // (N/2) in lane 64h + j % 32, column (j % (N/2)) // 32
    (a copy 32 lanes on). SFA: (1, M, nsf); SFB: (1, nsf, N), as layoutsim.mma's scale_a / scale_b."""
    import numpy as np
    r, sc = np.meshgrid(np.arange(mn), np.arange(nsf), indexing="ij")
    if pair is None:
        lane, col = r % 32, r // 32
    elif is_a:
        half = pair[0] // 2
        lane, col = 128 * (r // half) + r % 32, (r % half) // 32
    elif pair[0] == 256:
        lane, col = r % 32, r // 32
    else:
        half = max(pair[1] // 2, 1)
        lane, col = 64 * (r // half) + r % 32, (r % half) // 32
    cols = int(col.max()) + 1
    table = np.full((32 if pair is None else 256, cols, 4, 3), -1, np.int16)
    elem = np.stack([0 * r, r, sc] if is_a else [0 * r, sc, r], -1)
    table[lane, col, sc] = elem
    shape = (1, mn, nsf) if is_a else (1, nsf, mn)
    return FragmentMap(table=table, shape=shape, elem_bits=8,
                       names=tuple(f"col{c}.b{b}" for c in range(cols) for b in range(4)))


def sf_copies(pair, is_a):
    """TMEM lane offsets of the copies of each scale (sf_fragment's map: the first): the four 32-lane
    slabs, or (the pair's M = 128 SFB) the two slabs of its half."""
    return (0, 32) if pair is not None and pair[0] == 128 and not is_a else (0, 32, 64, 96)


# ---- tcgen05.cp: shared memory -> TMEM ------------------------------------------------------
# shape -> (rows, bytes per row, [TMEM lane offset of each copy of row r]) as functions of r: PTX ISA
# 9.x 9.7.16.9.2 'tcgen05.cp' (.128x256b, .128x128b, .4x256b, .32x128b.warpx4, .64x128b.warpx2::02_13 /
# ::01_23: "multicasted into warp pairs and each warp in the warp pair receive half of the data", .warpx4
# "into all 4 warps"); the lanes as CUTLASS 4.2's SM100_UTCCP traits state them (cute/atom/copy_traits_sm100.hpp
# ValID: 128dp -> lane r; 4x32dp -> r + 32i, i < 4; 2x64dp lw0213 -> r + 64i; lw0123 -> r % 32 +
# 64 (r // 32) + 32i, i < 2; tests/isa/test_tcgen05_cp.py compares every atom). The source is rows x bytes
# in the K-major canonical layout of its matrix descriptor (8-bit elements: CuTe's [core_matrix_strided,
# core_matrix_leading]); byte c of row r goes to byte c % 4 of column c // 4 from the address. .4x256b: row r
# to lane 32r, the first lane of each 32-lane slab (SM100_UTCCP_4dp256bit: ValID rows at stride 32, "refresh"
# of the lane tcgen05.shift frees; assumed: the ISA's figure for it was not read here).
CP_SHAPES = {"128x256b": (128, 32, lambda r: [r]), "128x128b": (128, 16, lambda r: [r]),
             "32x128b.warpx4": (32, 16, lambda r: [r + 32 * i for i in range(4)]),
             "64x128b.warpx2::02_13": (64, 16, lambda r: [r, r + 64]),
             "64x128b.warpx2::01_23": (64, 16, lambda r: [r % 32 + 64 * (r // 32), r % 32 + 64 * (r // 32) + 32]),
             "4x256b": (4, 32, lambda r: [32 * r])}
# .dst_fmt.src_fmt (PTX ISA 9.7.16.9.1 'Optional Decompression'): 16 elements of 4 bits + 8 bytes of padding
# (.b4x16_p64) or of 6 bits + 4 bytes (.b6x16_p32), a 16-byte unit of the source, become 16 elements of 8 bits
CP_DECOMPRESS = {"b8x16.b4x16_p64": 4, "b8x16.b6x16_p32": 6}
CP_SOURCE = ("PTX ISA 9.x 9.7.16.9.2 'tcgen05.cp' and 9.7.16.2.3 'Data Movement Shape'; the lanes of each row "
             "as CUTLASS 4.2's SM100_UTCCP traits (cute/atom/copy_traits_sm100.hpp ValID) state them")


def cp_lanes(shape):
    """(rows, bytes per row, lanes(r) -> list of TMEM lane offsets) of a tcgen05.cp shape, or None."""
    return CP_SHAPES.get(shape)


def cp_fragment(shape):
    """Operand "S" of tcgen05.cp.<shape>: source row r, byte c (decompressed forms: element c) in TMEM
    lane offset lanes(r) (each copy of a multicast), column c // 4 from the address, byte c % 4."""
    import numpy as np
    rows, nbytes, lanes = CP_SHAPES[shape]
    holders = np.zeros((1, rows, nbytes, len(lanes(0)), 3), np.int64)
    for r in range(rows):
        holders[0, r, :, :, 0] = lanes(r)
    c = np.arange(nbytes)
    holders[..., 1] = (c // 4)[:, None]
    holders[..., 2] = (c % 4)[:, None]
    table = np.full((128, nbytes // 4, 4, 3), -1, np.int16)
    flat = holders.reshape(-1, 3)
    r, cc = np.meshgrid(np.arange(rows), c, indexing="ij")
    elem = np.broadcast_to(np.stack([0 * r, r, cc], -1)[:, :, None], holders.shape).reshape(-1, 3)
    table[flat[:, 0], flat[:, 1], flat[:, 2]] = elem
    return FragmentMap(table=table, shape=(1, rows, nbytes), elem_bits=8,
                       names=tuple(f"col{k // 4}.b{k % 4}" for k in range(nbytes)))


def _cp_names(shape, fmt):
    tail = f".{fmt}" if fmt else ""
    return (f"tcgen05.cp.cta_group::1.{shape}{tail}",
            (f"tcgen05.cp.{shape}{tail}", f"tcgen05.cp.cta_group::2.{shape}{tail}"))


def _cp_notes(shape, fmt):
    rows, nbytes, lanes = CP_SHAPES[shape]
    copies = len(lanes(0))
    out = [f"operand S: the source, {rows} rows of {nbytes} bytes read through the shared-memory matrix descriptor "
           "(s-desc: K-major canonical layout, 8-bit elements); 'lane' is the TMEM lane offset from taddr's lane, "
           "'reg' the 32-bit column from taddr's column, 'slot' the byte",
           "cta_group::2 copies the same map into the TMEM of both CTAs of the pair (each from its own shared memory)",
           f"compile for {compile_target(ARCHS[0], arch_specific=True)}: tcgen05 is an arch-specific feature of "
           f"{ARCHS[0]}"]
    if copies > 1:
        out.append(f"multicast: each row lands in {copies} lanes ({', '.join(map(str, lanes(0)))} for row 0)")
    if shape == "4x256b":
        out.append("warning: assumed: row r in lane 32r (CUTLASS 4.2's SM100_UTCCP_4dp256bit; the ISA's figure for "
                   ".4x256b was not read here)")
    if fmt:
        w = CP_DECOMPRESS[fmt]
        out += [f"decompression (PTX ISA 9.7.16.9.1): each 16-byte unit of a source row holds 16 {w}-bit elements "
                f"(element e at bits {w}e..{w}e+{w - 1} of the unit) and {16 - 2 * w} bytes of padding; 'col' counts "
                "elements, element c of a row becomes byte c of the TMEM row",
                "warning: assumed: element order within a unit and where the element's bits lie in its byte (PTX ISA "
                "Figures 194-198, not read here); layoutsim.ptx refuses the decompressing forms"]
    return tuple(out)


def _build_cp(shape, fmt):
    full, aliases = _cp_names(shape, fmt)

    def build():
        op = Operand("S", "b8", cp_fragment(shape), "input")
        return Instruction(name=full, family="tcgen05.cp", vendor="nvidia", threads=1, operands={"S": op},
                           archs=ARCHS, aliases=aliases, formats={"s": fmt.split(".")[1] if fmt else "b8"},
                           source=CP_SOURCE, arch_specific=True, notes=_cp_notes(shape, fmt),
                           options={"shape": shape, "decompress": fmt or None})
    return build


def cp_entries():
    out = []
    for shape, (rows, nbytes, lanes) in CP_SHAPES.items():
        for fmt in (None, *CP_DECOMPRESS):
            full, aliases = _cp_names(shape, fmt)
            out.append(Entry(name=full, family="tcgen05.cp", vendor="nvidia", archs=ARCHS, build=_build_cp(shape, fmt),
                             aliases=aliases, arch_specific=True,
                             summary=f"shared {rows} rows x {nbytes} B -> TMEM, {len(lanes(0))} lane(s) a row"
                                     + (f", {fmt.split('.')[1]} -> 8-bit" if fmt else "")))
    return out
