#!/usr/bin/env python3
"""Regenerate docs/cookbook.md, cli.md, json.md and python.md from the code and its real output.

Every number in the cookbook is the output of the command printed above it, captured by this
script, so the page cannot drift from the tool: rerun it after a change and commit the result.

    python docs/build_cookbook.py            # rewrite cookbook.md, cli.md and img/*.svg
    python docs/build_cookbook.py --check    # exit 1 if the committed pages differ
    python docs/build_cookbook.py --only lane13 --out /tmp/x   # one recipe, elsewhere

A step whose command or Python API is not in layoutsim yet (a module being written) is kept in
the page, marked "not available yet" with the error it gave; the next run fills it in.
"""
import argparse
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)
# Every command in the docs runs from the root of the repository (docs/index.md says so): kernels
# are named docs/examples/..., the pictures a page shows are written to docs/img/. This script and
# tests/docs run the commands in a scratch folder laid out like the root (`scratch_root`), so that
# no run writes into the checkout: the files the documented commands read (READS) are copied
# there and docs/img is empty; a command written for another folder fails there.
READS = ("docs/examples", "tests/data/kernels/tma_wgmma_gemm.sm_90a.ptx", "tests/ptx/kernels/tma.sm_90a.ptx")
MAX_LINES = 40
MMA = "mma.m16n8k16.f32.f16.f16.f32"

# A recipe: (id, title, [items]); an item is ("md", text) | ("sh", command) | ("py", code)
# | ("img", path, alt). Commands start with `layoutsim`; Python runs as `python -`.
RECIPES = [
    ("lane13", "Which elements does lane 13 hold? (mma.sync m16n8k16, C)", [
        ("md", "The accumulator of `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` is a 16x8 f32 "
               "matrix spread over the 32 lanes of a warp, four registers each. Ask for one lane:"),
        ("sh", f"layoutsim query {MMA} --operand C --lane 13"),
        ("md", "and the inverse, who holds `C[11][2]`:"),
        ("sh", f"layoutsim query {MMA} --operand C --element 11,2"),
        ("md", "The same as a picture (SVG here; `-o c.png` for PNG, `-o c.html` for a page where "
               "pointing at a cell lights up the rest of its lane):"),
        ("sh", f"layoutsim render {MMA} --operand C --lane 13 -o docs/img/mma-C-lane13.svg"),
        ("img", "img/mma-C-lane13.svg", "mma.m16n8k16 C fragment, lane 13 highlighted"),
    ]),
    ("handpack", "Verifying the hand-packed `mma_sync.cu` layout", [
        ("md", "The single-warp seed kernel packs its fragments by hand from global memory, with "
               "`g = lane >> 2` and `t = lane % 4` (PTX's groupID and threadID_in_group): "
               "`a0a1 = A[g][2t..2t+1]`, `a2a3 = A[g+8][2t..]`, `a4a5 = A[g][2t+8..]`, "
               "`a6a7 = A[g+8][2t+8..]`; `b0b1 = B[2t..2t+1][g]`, `b2b3 = B[2t+8..][g]`; "
               "`c0c1 = C[g][2t..]`, `c2c3 = C[g+8][2t..]`. Compare each formula with the catalog, "
               "on every lane:"),
        ("py", textwrap.dedent(f"""\
            import numpy as np, layoutsim
            mma = layoutsim.get("{MMA}")
            lane = np.arange(32); g, t = lane >> 2, lane & 3
            kernel = {{   # register -> (row, col) of its low element, as the kernel writes it
                "A": [(g, 2*t), (g + 8, 2*t), (g, 2*t + 8), (g + 8, 2*t + 8)],
                "B": [(2*t, g), (2*t + 8, g)],
                "C": [(g, 2*t), (g, 2*t + 1), (g + 8, 2*t), (g + 8, 2*t + 1)],
            }}
            step = {{"A": (0, 1), "B": (1, 0)}}      # the high half of a packed register
            for name, regs in kernel.items():
                table = mma.operand(name).table     # [lane, reg, slot, (matrix, row, col)]
                for reg, (r, c) in enumerate(regs):
                    for slot in range(table.shape[2]):
                        dr, dc = step[name] if slot else (0, 0)
                        ok = (table[:, reg, slot, 1] == r + dr).all() and (table[:, reg, slot, 2] == c + dc).all()
                        print(f"{{name}} reg {{reg}} slot {{slot}}: kernel and catalog agree on 32 lanes: {{ok}}")
            """)),
        ("md", "A classic slip is to swap `a2a3` and `a4a5` (rows+8 before cols+8). The catalog "
               "names the first lane where that goes wrong:"),
        ("py", textwrap.dedent(f"""\
            import numpy as np, layoutsim
            A = layoutsim.get("{MMA}").operand("A").table
            lane = np.arange(32); g, t = lane >> 2, lane & 3
            wrong = [(g, 2*t), (g, 2*t + 8), (g + 8, 2*t), (g + 8, 2*t + 8)]   # a2a3 <-> a4a5
            for reg, (r, c) in enumerate(wrong):
                bad = np.flatnonzero((A[:, reg, 0, 1] != r) | (A[:, reg, 0, 2] != c))
                if bad.size:
                    L = bad[0]
                    print(f"reg {{reg}}: lane {{L}} loads A[{{r[L]}}][{{c[L]}}] but the tensor core "
                          f"expects A[{{A[L, reg, 0, 1]}}][{{A[L, reg, 0, 2]}}] there")
            """)),
        ("md", "Run the kernel itself on the simulator: the registers it packs are interpreted only "
               "through the catalog and `layoutsim.mma`, so a wrong packing gives a wrong D:"),
        ("py", textwrap.dedent("""\
            import numpy as np
            from layoutsim.sim import seeds
            rng = np.random.default_rng(0)
            a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
            b = rng.integers(-3, 4, (16, 8)).astype(np.float16)
            run = seeds.mma_sync_m16n8k16(a, b)
            print("max |D - A B| =", float(np.abs(run.result - a.astype(float) @ b.astype(float)).max()))
            print(run.trace.format())
            """)),
    ]),
    ("wmma_v2", "The `wmma_v2` tile: banks with and without PAD=8, and a swizzle", [
        ("md", "The seed GEMM keeps a BM=64 x BK=32 f16 A tile (and a 32 x 64 B tile) in shared "
               "memory with PAD=8 halfs after each row (pitch 40 halfs = 80 bytes). Each k-step "
               "fills it with 128-bit stores and reads 16x16 fragments from it. The fragment reads "
               "are modelled as `ldmatrix.x4`, the instruction that moves an m16n8k16 A fragment. "
               "First the stores that fill the tile, without and with the padding:"),
        ("sh", "layoutsim banks --op st.shared.v4.b32 --tile 64x32 --fill"),
        ("sh", "layoutsim banks --op st.shared.v4.b32 --tile 64x32 --pad 8 --fill"),
        ("md", "PAD=8 costs the stores: a quarter-warp phase of 128-bit stores covers two 80-byte "
               "rows, and the second row's last 16 bytes wrap onto the banks of the first. Now the "
               "fragment read at rows 16-31, columns 16-31, plain, padded and swizzled:"),
        ("sh", f"layoutsim banks --op ldmatrix.x4 --tile 64x32 --fragment {MMA}:A --at 16,16"),
        ("sh", f"layoutsim banks --op ldmatrix.x4 --tile 64x32 --pad 8 --fragment {MMA}:A --at 16,16"),
        ("sh", f"layoutsim banks --op ldmatrix.x4 --tile 64x32 --swizzle 2,3,3 --fragment {MMA}:A --at 16,16"),
        ("sh", "layoutsim banks --op st.shared.v4.b32 --tile 64x32 --swizzle 2,3,3 --fill"),
        ("md", "Side by side, the read (top: the tile as 4-byte words coloured by bank, the words "
               "read in full colour; below: each phase over the memory rows it touches, conflicts "
               "outlined in red):"),
        ("sh", f"layoutsim render --banks --op ldmatrix.x4 --tile 64x32 --pad 0 --layout pad=8 "
               f"--layout swizzle=2,3,3 --fragment {MMA}:A --at 16,16 -o docs/img/wmma_v2-read.svg"),
        ("img", "img/wmma_v2-read.svg", "ldmatrix.x4 reading the A fragment: no padding, PAD=8, Swizzle<2,3,3>"),
        ("md", "and the first warp's 128-bit stores:"),
        ("sh", "layoutsim render --banks --op st.shared.v4.b32 --tile 64x32 --pad 0 --layout pad=8 "
               "--layout swizzle=2,3,3 --fill --index 0 -o docs/img/wmma_v2-fill.svg"),
        ("img", "img/wmma_v2-fill.svg", "128-bit stores filling the tile: no padding, PAD=8, Swizzle<2,3,3>"),
        ("md", "Let the search rank every padding and swizzle for this tile, writes and reads together:"),
        ("sh", "layoutsim swizzle-search --tile 64x32 --top 5"),
        ("md", "The whole k-loop of the seed (4 warps, 64x64 block tile, B read with "
               "`ldmatrix.x4.trans`) on the simulator, PAD=8 against PAD=0:"),
        ("py", textwrap.dedent("""\
            import numpy as np
            from layoutsim.sim import seeds
            rng = np.random.default_rng(0)
            A = rng.integers(-2, 3, (64, 128)).astype(np.float16)
            B = rng.integers(-2, 3, (128, 64)).astype(np.float16)
            for pad in (8, 0):
                run = seeds.block_tile(A, B, pad=pad)
                print(f"PAD={pad}: D == A B: {bool((run.result == A.astype(np.float32) @ B.astype(np.float32)).all())}")
                print(run.trace.format())
            """)),
    ]),
    ("ldmatrix", "ldmatrix and a swizzle", [
        ("md", "`ldmatrix.x4` takes eight 16-byte row addresses per matrix (lanes 8j..8j+7 for "
               "matrix j). With rows 128 bytes apart (a 64-half row, no padding) all eight rows of a "
               "matrix sit in the same four banks; 144 bytes apart (PAD=8) they spread over all 32:"),
        ("sh", "layoutsim banks --op ldmatrix.x4 --addr \"(lane%8)*128 + (lane//8)*16\""),
        ("sh", "layoutsim banks --op ldmatrix.x4 --addr \"(lane%8)*144 + (lane//8)*16\""),
        ("md", "CuTe's `Swizzle<3,3,3>` gets the same effect without wasting bytes: it XORs "
               "element-offset bits 6-8 (the row within 8) into bits 3-5 (the 16-byte chunk):"),
        ("sh", "layoutsim banks --op ldmatrix.x4 --tile 64x64 --swizzle 3,3,3 --block 0,0"),
        ("sh", "layoutsim render --banks --op ldmatrix.x4 --tile 64x64 --pad 0 --layout pad=8 "
               "--layout swizzle=3,3,3 --block 0,0 -o docs/img/ldmatrix-swizzle.svg"),
        ("img", "img/ldmatrix-swizzle.svg", "ldmatrix.x4 on a 64x64 f16 tile: plain, PAD=8, Swizzle<3,3,3>"),
        ("md", "Which registers does each phase fill? Phase j of `ldmatrix.x4` moves matrix j:"),
        ("sh", "layoutsim render ldmatrix.x4 --phase 1 -o docs/img/ldmatrix-x4-phase1.svg"),
        ("img", "img/ldmatrix-x4-phase1.svg", "ldmatrix.x4 registers, phase 1 highlighted"),
    ]),
    ("wgmma_desc", "Hopper: a wgmma descriptor in 128B swizzle", [
        ("md", "A Hopper GEMM keeps its A tile K-major in 128-byte rows, swizzled 128B (what a TMA "
               "copy with `CU_TENSOR_MAP_SWIZZLE_128B` writes), and gives wgmma a descriptor of it. "
               "Encode the descriptor of A at 0x400 (LBO and SBO of the dense tile), then see where "
               "each row's chunks are read:"),
        ("sh", "layoutsim desc encode --start 0x400 --swizzle 128B --instr wgmma.m64n64k16.f32.f16.f16 "
               "--operand A --rows 4"),
        ("md", "The same tile as shared memory, each word coloured by its bank: within each group of 8 "
               "rows the swizzle puts chunk k 0-7 of every row in a different group of 4 banks, so a "
               "read of one chunk column of 8 rows touches all 32 banks once:"),
        ("sh", "layoutsim render wgmma.m64n64k16.f32.f16.f16 --operand A --desc 0x4000004000010040 "
               "-o docs/img/wgmma-desc-A-128B.svg"),
        ("img", "img/wgmma-desc-A-128B.svg", "A of wgmma.m64n64k16 through a 128B-swizzled descriptor, by bank"),
        ("md", "Check it against the TMA box that fills it (64 f16 x 64 rows, 128B swizzle, at 0x400): "
               "exit 0 and no problem. With SBO written in bytes (1024) into the 16-byte-unit field, or a "
               "64B box, `desc check` names the problem and exits 1 ([Shared-memory operands](smem.md))."),
        ("sh", "layoutsim desc check 0x4000004000010040 --instr wgmma.m64n64k16.f32.f16.f16 --operand A "
               "--tma-box 64x64 --tma-swizzle 128B"),
    ]),
    ("w8a8", "W8A8 batch-1 GEMV on INT8 WMMA: how much of each tile is padding", [
        ("md", "A batch-1 GEMV `y = W x` has one activation row. On RDNA4's "
               "`v_wmma_i32_16x16x16_iu8` (gfx1201, wave32) the seed puts `x` in row 0 of the 16-row A "
               "tile and W^T in B; rows 1-15 of A are zeros. Which lanes hold the one real row:"),
        ("sh", "layoutsim render v_wmma_i32_16x16x16_iu8 --arch gfx1201 --operand A --rows 0 "
               "-o docs/img/w8a8-A-row0.svg --json"),
        ("img", "img/w8a8-A-row0.svg", "v_wmma_i32_16x16x16_iu8 A operand, row 0 highlighted"),
        ("py", textwrap.dedent("""\
            import layoutsim
            inst = layoutsim.get("v_wmma_i32_16x16x16_iu8", arch="gfx1201")
            for name in ("A", "D"):
                frag = inst.operand(name).fragment
                held = frag.holders[0, 0]                 # [col, replication, (lane, reg, slot)]
                lanes = sorted({int(l) for l in held[..., 0].ravel()})
                regs = sorted({frag.name(int(r), int(s)) for _, r, s in held.reshape(-1, 3)})
                total = frag.shape[1] * frag.shape[2]
                print(f"{name}: row 0 = {frag.shape[2]} of {total} elements "
                      f"({100 * frag.shape[2] / total:.2f}%), held by lanes {lanes} "
                      f"in {', '.join(regs)}")
            """)),
        ("md", "Only row 0 of A is data and only row 0 of D is wanted. The seed on the simulator, "
               "next to the NVIDIA int8 `mma.sync` forms (where putting W in A and x in B's 8 "
               "columns wastes less):"),
        ("py", textwrap.dedent("""\
            import numpy as np
            from layoutsim.sim import seeds
            rng = np.random.default_rng(0)
            W = rng.integers(-128, 128, (32, 256)).astype(np.int8)
            x = rng.integers(-128, 128, 256).astype(np.int8)
            for arch, layout in (("gfx1201", "x_in_A"), ("sm_90", "x_in_A"), ("sm_90", "w_in_A")):
                run = seeds.gemv_w8a8(W, x, layout=layout, arch=arch)
                ok = bool((run.result["y"] == W.astype(np.int64) @ x.astype(np.int64)).all())
                print(f"{arch}: y == W x: {ok}")
                print("  " + seeds.padding_summary(run.result["padding"]))
            """)),
    ]),
    ("coalesce", "How well does a warp's global load coalesce? (strides and gathers)", [
        ("md", "Chapter three of the seed reads global memory at growing strides and through a "
               "gather. What one warp's `ld.global` costs in 32-byte sectors (what Nsight Compute "
               "counts per request) and how far that is from ideal:"),
        ("sh", "layoutsim coalesce --op ld.global.b32 --stride 1,2,4,8,16,32"),
        ("md", "A gather through an index that keeps neighbours together costs little; one that "
               "scatters them costs a sector per lane:"),
        ("sh", "layoutsim coalesce --op ld.global.b32 --addr \"(lane ^ 5) * 4\""),
        ("sh", "layoutsim coalesce --op ld.global.b32 --addr \"(lane * 37 % 32) * 4096\""),
        ("md", "More in [Global memory](coalescing.md); the counting rules are being confirmed on "
               "the H200 (`model:` line)."),
    ]),
    ("rdna4", "The RDNA4 LDS stride experiment (1, 32, 33)", [
        ("md", "A published gfx1201 experiment read floats from LDS at a stride of 1, 32 and 33 "
               "words: stride 32 ran about 5x slower than stride 1, stride 33 about as fast. What "
               "the model predicts for one `ds_read_b32` of a wave32 (unverified on hardware: no AMD "
               "GPU has been used here):"),
        ("sh", "layoutsim banks --op ds_read_b32 --arch gfx1201 --addr \"lane*4*stride\" --var stride=1"),
        ("sh", "layoutsim banks --op ds_read_b32 --arch gfx1201 --addr \"lane*4*stride\" --var stride=32"),
        ("sh", "layoutsim banks --op ds_read_b32 --arch gfx1201 --addr \"lane*4*stride\" --var stride=33"),
        ("sh", "layoutsim render --banks --op ds_read_b32 --arch gfx1201 --addr \"lane*4\" "
               "--addr \"lane*4*32\" --addr \"lane*4*33\" --label \"stride 1\" --label \"stride 32\" "
               "--label \"stride 33\" -o docs/img/rdna4-stride.svg"),
        ("img", "img/rdna4-stride.svg", "ds_read_b32 at strides 1, 32 and 33 words on gfx1201"),
        ("md", "The model orders the three as measured (33 as cheap as 1, 32 far dearer). It counts "
               "LDS wavefronts of one instruction; a whole kernel's time also holds address math, "
               "the loop and latency that other waves hide, so a 32x serialisation of the reads "
               "need not show up as 32x in the measured run time (it was about 5x)."),
    ]),
    ("mfma", "AMD MFMA: the blocks of a 4x4x4_16b and the CBSZ/ABID broadcast", [
        ("md", "`v_mfma_f32_4x4x4_16b_f16` (CDNA, wave64) computes 16 independent 4x4x4 blocks; "
               "block b's A sits in lanes 4b..4b+3. With `cbsz:2 abid:1` (assembly modifiers, "
               "written after the name) every group of four blocks reads block 1 of its group: "
               "lane 4 then feeds blocks 0-3. The maps come from AMD's matrix instruction "
               "calculator, which the catalog matches entry by entry (not run on AMD hardware):"),
        ("sh", "layoutsim query v_mfma_f32_4x4x4_16b_f16 --operand A --lane 4"),
        ("sh", "layoutsim query \"v_mfma_f32_4x4x4_16b_f16 cbsz:2 abid:1\" --operand A --lane 4"),
        ("md", "The integer MFMA arithmetic is exact (`layoutsim.mma` takes the blocks as a "
               "leading dimension); a CDNA3 `ds_read_b128` of a wave64 is served in eight groups "
               "of eight lanes:"),
        ("sh", "layoutsim banks --op ds_read_b128 --arch gfx942 --addr \"lane*16\""),
    ]),
]

PENDING = re.compile(r"No module named|invalid choice|has no attribute|cannot import name|"
                     r"ImportError|ModuleNotFoundError|unrecognized arguments")


def scratch_root(folder):
    """Lay `folder` out like the repository root for the documented commands: a copy of READS and
    an empty docs/img. Returns `folder`."""
    for rel in READS:
        src, dst = os.path.join(ROOT, rel), os.path.join(folder, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    os.makedirs(os.path.join(folder, "docs", "img"), exist_ok=True)
    return folder


@contextlib.contextmanager
def scratch():
    """A scratch root (`scratch_root`) for one build, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="layoutsim-docs-") as tmp:
        yield scratch_root(tmp)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "100"
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def run_shell(cmd, cwd):
    argv = shlex.split(cmd)
    if argv[0] != "layoutsim":
        raise SystemExit(f"cookbook commands start with layoutsim: {cmd}")
    return _run([sys.executable, "-m", "layoutsim.cli", *argv[1:]], cwd)


def run_python(code, cwd):
    return _run([sys.executable, "-"], cwd, stdin=code)


def _run(argv, cwd, stdin=None):
    p = subprocess.run(argv, cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True, timeout=600)
    out = (p.stdout + p.stderr).rstrip("\n")
    return p.returncode, out


def _clip(text):
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"... ({len(lines) - MAX_LINES} more lines)"]
    return "\n".join(lines)


def build_recipe(rid, title, items, out_dir, problems, root):
    """The recipe's markdown, its commands run in the scratch root `root`; the pictures it shows
    are copied from root/docs/img to out_dir/img."""
    md = [f"## {title}", ""]
    for item in items:
        kind = item[0]
        if kind == "md":
            md += [item[1], ""]
            continue
        if kind == "img":
            drawn = os.path.join(root, "docs", item[1])
            if os.path.exists(drawn):           # else its command failed: a problem already
                shutil.copyfile(drawn, os.path.join(out_dir, item[1]))
            md += [f"[![{item[2]}]({item[1]})]({item[1]}) (click for full size)", ""]
            continue
        if kind == "sh":
            shown = item[1]
            rc, out = run_shell(item[1], root)
            md += ["```console", f"$ {shown}", _clip(out), "```", ""]
        else:
            rc, out = run_python(item[1], root)
            md += ["```python", item[1].rstrip("\n"), "```", "", "```text", _clip(out), "```", ""]
        if rc != 0:
            last = out.strip().splitlines()[-1] if out.strip() else f"exit code {rc}"
            if PENDING.search(out):
                md[-1:-1] = []
                md += [f"> **Not available yet**: this step needs a part of layoutsim that is still "
                       f"being written (`{last}`). Rerun `python docs/build_cookbook.py` when it lands.", ""]
                problems.append(f"{rid}: pending: {last}")
            else:
                problems.append(f"{rid}: exit {rc}: {last}")
    return md


def build_cookbook(out_dir, only=None, root=None):
    if root is None:
        with scratch() as root:
            return build_cookbook(out_dir, only, root)
    os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
    problems = []
    md = ["# Cookbook", "",
          "Each recipe reproduces a question from the seed material with the tool. Every block "
          "below is a command and what it printed: the page is written by "
          "`python docs/build_cookbook.py`, which runs them all, so the numbers cannot drift from "
          "the code. The commands run from the root of the repository, as everywhere in these "
          "docs: pictures are written to `docs/img/`.", ""]
    md += [f"- [{title}](#{_anchor(title)})" for rid, title, _ in RECIPES if not only or rid in only]
    md.append("")
    for rid, title, items in RECIPES:
        if only and rid not in only:
            continue
        md += build_recipe(rid, title, items, out_dir, problems, root)
    return "\n".join(md).rstrip("\n") + "\n", problems


def _anchor(title):
    a = re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")
    return re.sub(r"-+", "-", a)


COMMAND_HELP = ("query", "show", "list", "banks", "coalesce", "swizzle-search", "render", "desc",
                "desc decode", "desc encode", "desc check", "ptx run")


def build_cli(root):
    md = ["# Command line", "",
          "`layoutsim COMMAND --help` prints these pages; they are copied here by "
          "`python docs/build_cookbook.py`. Every command takes `--json` "
          "([schemas](json.md)); bad input prints one line and exits with code 2.", ""]
    rc, out = run_shell("layoutsim --help", root)
    md += ["```text", out, "```", ""]
    for name in COMMAND_HELP:
        rc, out = run_shell(f"layoutsim {name} --help", root)
        if rc != 0:
            raise SystemExit(f"layoutsim {name} --help failed ({rc}): {out[-300:]}")
        md += [f"## layoutsim {name}", "", "```text", out, "```", ""]
    return "\n".join(md).rstrip("\n") + "\n"


JSON_EXAMPLES = [
    ("query", f"layoutsim query {MMA} --operand C --lane 13 --json",
     '`{"instruction": str, "arch": str, "operand": str, "entries": [{"lane", "reg", "slot", '
     '"name", "matrix", "row", "col"}, ...]}`: `slot` is the packed element inside the 32-bit '
     'register, `matrix` is 0 except for ldmatrix/stmatrix. Without `--lane`/`--element`: every entry. '
     'AMD WMMA/SWMMAC add `"arithmetic"`: one line saying what backs `layoutsim.mma` on that arch (the '
     'AMD hardware captures it matches, or why it is an assumption); `show` adds it too.'),
    ("show", f"layoutsim show {MMA} --operand C --json",
     '`{"instruction", "arch", "operand", "replication": int, "grid": [matrix][row][col] -> '
     '"T<lane>:<register>"}` (the lowest holder; `+` marks replicated elements).'),
    ("list", "layoutsim list --arch sm_90 --family ldmatrix --json",
     '`{"arch", "family", "instructions": [{"name", "family", "vendor", "archs", "wave", '
     '"aliases", "summary"}, ...]}`'),
    ("banks", 'layoutsim banks --op ldmatrix.x4 --addr "(lane%8)*128 + (lane//8)*16" --json',
     '`{"op", "arch", "wavefronts", "ideal", "conflicts", "phases": [{"lanes": [...], '
     '"wavefronts": n, "banks": [32 counts of distinct words], "words": [byte addresses], '
     '"serves": [{"lanes", "words"} per wavefront], "source"}]}`. See the [bank model](banks.md).'),
    ("coalesce", 'layoutsim coalesce --op ld.global.b32 --addr "lane*8" --active 0xff --json',
     '`{"op", "arch", "vendor", "active_lanes", "requests", "sectors", "ideal_sectors", "lines", '
     '"wavefronts" (null on AMD), "excess_sectors", "sector_bytes", "bytes_requested", '
     '"bytes_fetched", "sector_lanes": [{"sector": byte address, "lanes": [...]}], "rule", "source", '
     '"status"}`; with `--stride`: `{"op", "arch", "base", "sector_bytes", "rows": [{"stride", '
     '"stride_bytes", "requests", "sectors", "ideal_sectors", "lines", "wavefronts"}], "rule", '
     '"source", "status"}`; with `--picture`, a `picture` record as `render` prints. See '
     '[global memory](coalescing.md).'),
    ("swizzle-search", "layoutsim swizzle-search --tile 64x32 --top 2 --json",
     '`{"tile", "arch", "reads", "writes", "accesses", "weights", "candidates": [{"layout", '
     '"pad", "pitch", "swizzle", "reads", "writes", "total", "ideal", "wasted_bytes", "cute", '
     '"tma_wgmma", "cxx"}, ...], "baseline", "considered", "skipped"}`: `cute` is the CuTe swizzle '
     '(null for paddings), `tma_wgmma` the TMA/wgmma swizzle mode that lays the tile out the same '
     'way (null when none does), `cxx` a C++ expression for the element index of (row, col).'),
    ("desc decode", "layoutsim desc decode 0x4000004000010040 --instr wgmma.m64n8k16.f32.f16.f16 "
     "--operand B --json",
     '`{"value", "fields": {"start"|"lbo"|"sbo": {"raw", "bytes"}, "base_offset": {"raw"}, '
     '"swizzle": {"raw", "name"}, "reserved": {"raw"}}, "swizzle": {"name", "span", "repeat", '
     '"cute"}, "reading", "notes", "confirmed", "operand": {"instruction", "operand", "major", '
     '"format", "shape", "addresses"}}`: `addresses` is the shared-window byte address of every '
     'element, (M, K) for A and (K, N) for B; `operand` only with `--instr`. `desc encode` prints '
     'the same. With `--arch sm_100` (a tcgen05.mma descriptor): `{"value", "arch", "fields": '
     '{"start"|"lbo"|"sbo": {"raw", "bytes"}, "version"|"base_offset"|"lbo_mode": {"raw"}, "swizzle": '
     '{"raw", "name"}}, "problem" (a line, or null), "source", "sm90_equivalent" (the wgmma descriptor '
     'with the same element addresses, or null)}`. See [Shared-memory operands](smem.md).'),
    ("desc check", "layoutsim desc check 0x4000004000010048 --instr wgmma.m64n8k16.f32.f16.f16 "
     "--operand B --json",
     'The `desc decode` object plus `"problems": [{"kind", "field", "message"}]` (kinds: fault, '
     'duplicate, units, alignment, base, reserved, overlap, tma; a TMA box starting off 16 bytes '
     'is kind fault, field tma_coords; one landing outside shared memory kind fault, field tma_dst), '
     '`"sound"` and, with `--tma-box`, `"tma": {"box", '
     '"elem_bytes", "swizzle", "dst", "coords", "reading", "confirmed"}`; the exit code is 1 when '
     'there is a problem, 0 when there is none, 2 for bad input.'),
    ("render", f"layoutsim render {MMA} --operand C --lane 13 -o json-example.svg --json",
     '`{"file", "format", "bytes", "width", "height", ...}` and, for fragments, `instruction`, '
     '`arch`, `operand`, `matrices`, `rows`, `cols`, `cells`, `replication`, `lanes`, and '
     '`highlight`/`highlighted_cells` when something is highlighted. PNG width and height are '
     'in image pixels, SVG/HTML in CSS pixels.'),
    ("ptx run", "layoutsim ptx run docs/examples/transpose.sm_90.ptx --kernel transpose_padded --grid 1 "
                "--block 32,8 --arg arange:f32:32x32 --arg zeros:f32:32x32 --arg i32:32 --json",
     '`{"schema", "kernel", "arch", "grid", "block", "cluster" (the cluster shape of a cluster launch, else '
     'null), "shared_wavefronts": {"ld", "st"}, "shared_ideal", '
     '"global": {"requests", "sectors", "ideal_sectors", "ld", "st", "atom", "red": {"requests", "sectors"}} '
     'or null, "warp_instructions", "sampled": {"ctas", "of", "factor"} or null, "notes", "hazards" (with '
     '--racecheck), "initcheck" (with --initcheck: [{"ptx_line", "cuda", "ptx", "space", "size", "address", '
     '"cta", "thread", "warp", "lane", "count"}]), "fault" (null, or the fault that stopped the launch: '
     '{"kind", "message", "thread", "cta", "warp", "lane", "ptx_line", "ptx", "cuda", "address", "space", '
     '"buffer": {"space", "name", "arg", "start", "bytes", "offset"} or null}; a deadlock adds "waits"; the '
     'exit code is then 2; a run stopped by --max-steps or --timeout prints only {"fault": {"kind": '
     '"step_limit" or "time_limit", "message", "steps"}, "outputs": []}), "seconds", "sass_source" (where the SASS costed came from; null: costed per '
     'PTX instruction), "fidelity": {"warp_instructions", "exact", "approximate", "unknown", "refused", '
     '"documented", "documented_instructions": [{"line", "instruction", "source", "executions"}], '
     '"approximate_instructions": [{"line", "instruction", "executions", "error", "source"}], '
     '"unknown_instructions": [{"line", "instruction", "why", "executions"}], "contraction": {"available", '
     '"fused", "note"}} (see [running kernels](ptx.md)), "instructions": [{"line", "cuda": {"file", "line"} or null, "text", "executions", '
     '"wavefronts", "ideal", "excess", "kind", "sass", "requests", "sectors", "ideal_sectors", '
     '"excess_sectors", "global_kind", "note"}, ...], "outputs"}`; with `--show-line`, "accesses": '
     '[{"ptx_line", "ptx", "cuda", "space", "op", "cta", "warp", "mask", "addresses", and "wavefronts", '
     '"ideal" or "requests", "sectors", "ideal_sectors"}] and with `--picture` a "picture" record as '
     '`render` prints. See [running kernels](ptx.md).'),
    ("render --banks", "layoutsim render --banks --op ldmatrix.x4 --tile 64x32 --pad 8 "
     f"--fragment {MMA}:A --at 16,16 -o json-example.svg --json",
     '`{"file", "format", "bytes", "width", "height", "kind": "banks", "accesses": [one `banks` '
     'report per drawn access (without `serves`), plus `label` and, for tiles, `layout`, `bytes`, '
     '`padding_bytes`, `access`]}`'),
]


def build_json(root):
    md = ["# JSON output", "",
          "Every command takes `--json` and prints one JSON object on standard output. The keys "
          "below are stable; new keys may be added. Each example is real output, cut to its "
          "first lines (regenerated by `python docs/build_cookbook.py`), of a command run from the "
          "root of the repository.", ""]
    for name, cmd, schema in JSON_EXAMPLES:
        rc, out = run_shell(cmd, root)
        if rc != 0 and PENDING.search(out):
            continue
        lines = out.splitlines()
        shown = "\n".join(lines[:30] + ([f"... ({len(lines) - 30} more lines)"] if len(lines) > 30 else []))
        md += [f"## {name}", "", schema, "", "```console", f"$ {cmd}", shown, "```", ""]
    return "\n".join(md).rstrip("\n") + "\n"


PYTHON_API = [
    ("Catalog", "layoutsim", ["get", "lookup", "listing", "LayoutsimError"]),
    ("Instructions and operands", "layoutsim.isa.instruction", ["Instruction", "Instruction.operand",
                                                                "Operand", "Operand.lane", "Operand.who_holds"]),
    ("Fragment maps", "layoutsim.fragment", ["FragmentMap", "FragmentMap.lane_entries", "FragmentMap.who_holds",
                                             "FragmentMap.entries", "FragmentMap.bit_range"]),
    ("Bank model", "layoutsim.banks", ["analyze", "wavefronts"]),
    ("Global-memory coalescing", "layoutsim.memory", ["coalesce", "coalesce_batch"]),
    ("Addresses and tile layouts", "layoutsim.address", ["lane_offsets", "Tile", "Tile.offset", "Swizzle",
                                                         "XorSwizzle", "parse_swizzle", "fill_offsets"]),
    ("Tile addresses of ops given by their spelling", "layoutsim.banks", ["fragment_offsets", "block_offsets"]),
    ("Tensor-core arithmetic", "layoutsim", ["mma"]),
    ("Approximate math (the H200's MUFU)", "layoutsim.numerics.sfu", ["evaluate", "model", "info", "names"]),
    ("Simulator", "layoutsim.sim", ["Warp", "Warpgroup"]),
    ("Running kernels", "layoutsim.ptx", ["run", "compile_cu", "Run", "Run.accesses", "Run.render_access", "InstructionStats",
                                         "PtxFault"]),
    ("Triton kernels (needs Triton)", "layoutsim.triton", ["launch", "compile_for", "bits", "configs", "patch"]),
    ("Shared-memory operands (wgmma descriptors, TMA)", "layoutsim.smem",
     ["Descriptor", "Descriptor.dense", "operand_addresses", "operand_fault", "addresses", "TensorMap",
      "box_addresses", "box_fault", "check_coords", "coords_problem", "consistency", "problems", "Reading",
      "TmaReading", "status"]),
    ("Pictures", "layoutsim.render", ["fragment", "fragment_scene", "highlight_for", "save"]),
    ("Bank pictures", "layoutsim.render.banks", ["Access", "access_scene", "tile_scene"]),
]


def build_python():
    """The Python reference: signatures and docstrings, read from the code itself."""
    import importlib
    import inspect
    sys.path.insert(0, ROOT)
    md = ["# Python reference", "",
          "Signatures and docstrings of the public functions, read from the code by "
          "`python docs/build_cookbook.py` (so they match the installed version). Every function "
          "raises `layoutsim.LayoutsimError` (a `ValueError`) with a one-line message on bad input.",
          "", "```python", "import layoutsim",
          'mma = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32")',
          'c = mma.operand("C")',
          "c.lane(13)            # [(reg, slot, matrix, row, col), ...]",
          "c.who_holds(11, 2)    # [(lane, reg, slot)]",
          "c.table.shape         # (lanes, regs, slots, 3): (matrix, row, col), -1 = unused",
          "```", ""]
    for title, modname, names in PYTHON_API:
        try:
            mod = importlib.import_module(modname)
        except Exception as e:
            md += [f"## {title}", "", f"> **Not available yet** (`{modname}`: {e}).", ""]
            continue
        md += [f"## {title}", ""]
        for name in names:
            obj = mod
            try:
                for part in name.split("."):
                    obj = getattr(obj, part)
            except AttributeError:
                md += [f"### `{modname}.{name}`", "", "> **Not available yet.**", ""]
                continue
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):
                sig = ""
            if inspect.isclass(obj) and sig:
                sig = re.sub(r"=<[^>]*>", "=...", sig)
            qual = f"{modname}.{name}"
            doc = inspect.getdoc(obj) or ""
            md += [f"### `{qual}`", "", "```text", f"{name.split('.')[-1]}{sig}", "```", ""]
            if doc:
                md += ["```text", doc, "```", ""]
    return "\n".join(md).rstrip("\n") + "\n"


def _steady(text):
    """Text with timings masked: '54 layouts ranked in 0.10 s' may differ from run to run."""
    if text is None:
        return None
    return re.sub(r"\b\d+(\.\d+)? ?(s|ms|us)\b", "<time>", text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DOCS, help="folder for cookbook.md, cli.md and img/ (default docs/)")
    ap.add_argument("--only", action="append", help="recipe id(s): " + ", ".join(r[0] for r in RECIPES))
    ap.add_argument("--check", action="store_true", help="do not write: exit 1 if the pages would change")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    if args.only and out == DOCS and not args.check:
        ap.error("--only writes a partial cookbook: give --out FOLDER (not docs/)")
    with contextlib.ExitStack() as stack:
        # --check writes the pictures into a folder it removes; the pages it only compares
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="cookbook-")) if args.check else out
        root = stack.enter_context(scratch())
        cookbook, problems = build_cookbook(work, args.only, root)
        pages = {"cookbook.md": cookbook}
        if not args.only:
            pages["cli.md"] = build_cli(root)
            pages["json.md"] = build_json(root)
            pages["python.md"] = build_python()
    changed = []
    for name, text in pages.items():
        path = os.path.join(out, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if _steady(old) != _steady(text):
            changed.append(name)
            if not args.check:
                tmp = path + ".tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, path)
    for p in problems:
        print(f"build_cookbook: {p}", file=sys.stderr)
    if args.check and changed:
        print(f"build_cookbook: {', '.join(changed)} out of date: run python docs/build_cookbook.py",
              file=sys.stderr)
        return 1
    print(f"build_cookbook: {'checked' if args.check else 'wrote'} {', '.join(pages)} in {out}"
          + (f" ({len(problems)} step(s) failed or pending)" if problems else ""))
    return 1 if any(": exit " in p for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
