"""`layoutsim triton layouts`' bank costs of the shared encodings (layoutsim.triton.shared_costs),
checked against execution: the same kernel launched through layoutsim.triton.launch, its
executed shared wavefronts per Python line (Run.instructions, costed by layoutsim.banks as the
PTX ran) against what the layouts predicted for the ttgir ops at that line (their `loc`).

Expected values come from the executed run, not from constants: each predicted (line, kind) must
have the executed wavefronts and ideal per instruction. Every executed shared line that no
prediction covers must be the line of an op whose shared memory Triton lays out in its lowering
(convert_layout, reduce, scan, tensormap_create: ttgir.scratch_ops), which docs/triton.md says is
not predicted, or code LLVM gave line 0 (shared_costs.line_zero: the executor charges it to the
line before). Where several ops share a line and kind, each op is checked on its own executed
instructions (compare's "per_op").
The swizzle formulas are Triton's (TritonGPUAttrDefs.td, SwizzledSharedEncodingAttr) and the
wgmma/TMA modes of layoutsim.smem (PTX ISA 9.7.15.5.1.2.2)."""
import re
from pathlib import Path

import numpy as np
import pytest

from triton_needs import needs_triton

pytestmark = needs_triton
ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".triton-src"


def _check(r):
    from layoutsim.triton.shared_costs import compare, predict
    from layoutsim.triton.ttgir import encodings, scratch_ops
    sites = predict(r.triton, encodings(r.triton.ttgir))
    rows = compare(sites, r)
    scratch = {(o["line"][0].rsplit("/", 1)[-1], o["line"][1]) for o in scratch_ops(r.triton.ttgir) if o["line"]}
    for row in rows:
        if row["predicted"] is None:
            assert row["line_zero"] or (row["file"], row["line"]) in scratch, \
                f"{row}: executed shared accesses at a line no op explains"
        elif row["instructions"]:       # an op the launch never reaches (a branch not taken) has nothing to check
            assert row["agrees"], f"predicted {row['predicted']} but executed {row['executed']} at {row}"
    assert any(row["agrees"] for row in rows) or not any(row["predicted"] for row in rows)
    return sites, rows


def _corpus_cases():
    from gpu_check.triton_corpus import cases as C
    return sorted(C.CASES)


# Where the Triton tutorial cases found the prediction (or the run) not agreeing, each in docs/triton.md
# ("Launches the model does not run yet", "Known disagreements of the shared-memory prediction"): the
# check must fail with exactly these words, so a fix shows up as a test to update.
KNOWN = {
    # the row loaded in a software-pipelined tl.range loop (num_stages=4): cp.async to shared memory, read
    # back by a local_load the prediction lowers to ld.shared.b32 (1 wavefront each); Triton's PTX reads
    # it with ldmatrix.x4 (4 wavefronts each)
    "tut_fused_softmax": "predicted [{'wavefronts': 1, 'ideal': 1}] but executed {'wavefronts': 4, 'ideal': 4} at "
                         "{'file': '02-fused-softmax.py', 'line': 99, 'kind': 'ld'",
    # one line, two wgmma ops (the helper _attn_bwd_dkdv inlined at its MASK=True call, BLOCK_M1 16, and
    # its MASK=False call, 32): each executes at its predicted cost (m64n16k16 at 20, m64n32k16 at 24),
    # but compare does not split a line's gmma instructions between its ops
    "tut_attn_bwd": "predicted [{'wavefronts': 20, 'ideal': 20}, {'wavefronts': 24, 'ideal': 24}] but executed "
                    "{'wavefronts': '104/5', 'ideal': '104/5'} at {'file': '06-fused-attention.py', 'line': 239, "
                    "'kind': 'gmma'",
    # the e4m3 tile staged for its TMA store: two local_store ops predicted at the line (st.shared.v4.b32
    # at 4 wavefronts, st.shared.b16 at 1); the PTX executes only st.shared.b16
    "tut_matmul_descriptor_persistent_fp8": "predicted [{'wavefronts': 1, 'ideal': 1}, {'wavefronts': 4, 'ideal': 4}]"
                                            " but executed {'wavefronts': 1, 'ideal': 1} at {'file': "
                                            "'09-persistent-matmul.py', 'line': 639, 'kind': 'st'",
}


def _launch(case):
    """The case's Run with its Triton compile (Run.triton): through layoutsim.triton.launch, or for a case
    with Addresses arguments (its tables need the model's addresses of the launch) the corpus replay of
    the committed PTX, which equals this compile (test_triton_corpus_replay.test_ptx_is_what_triton_compiles)."""
    from gpu_check.triton_corpus import cases as C
    import layoutsim.triton as lt
    if not C.addresses(case):
        k, _ = C.kernel(case, WHEELS, ROOT)
        return lt.launch(k, C.grid(case), *C.launch_inputs(case), **C.meta(case))
    from gpu_check.triton_corpus import replay as R
    from gpu_check.triton_corpus.build import compile_case
    corpus = ROOT / "tests" / "data" / "triton_corpus"
    entry = {e["case"]: e for e in R.load_manifest(corpus)["cases"]}[case]
    r, _ = R.run_case(corpus, entry)
    r.triton = compile_case(case, WHEELS, ROOT)[0]
    return r


@pytest.mark.parametrize("case", _corpus_cases())
def test_corpus_prediction_agrees_with_execution(case):
    from gpu_check.triton_corpus import cases as C, replay as R, tutorials as T
    from layoutsim.errors import LayoutsimError
    if C.CASES[case][0][0] != "local" and not WHEELS.is_dir():
        pytest.skip(f"{case}: the package wheels are not in .triton-src/ (pip download --no-deps liger-kernel==0.8.5 "
                    f"flag-gems==5.0.2 fla-core==0.6.0 -d .triton-src)")
    src = C.CASES[case][0]
    if src[0] == T.FOLDER and src[1] in T.missing(WHEELS):
        pytest.skip(f"{case}: {T.local_path(src[1], WHEELS)} is missing: {T.fetch_command(src[1], WHEELS)}")
    gap = R.MODEL_GAPS.get(case, ("",))
    if gap[0] == "raises":                  # the model cannot run it yet (replay.MODEL_GAPS)
        with pytest.raises(LayoutsimError, match=re.escape(gap[1])):
            _launch(case)
        return
    r = _launch(case)
    if case in KNOWN:
        with pytest.raises(AssertionError, match=re.escape(KNOWN[case])):
            _check(r)
        return
    sites, rows = _check(r)
    if case.startswith("matmul"):
        # cp.async of A and B, wgmma's operand reads: every one predicted and agreeing
        assert {s["kind"] for s in sites} == {"ldgsts", "gmma"}
        assert sum(1 for row in rows if row["agrees"]) == 3
    if case == "fla_gla_fwd_o":
        # line 438 stores an f16 and an f32 tile and loads each back: per op, 4 and 8 wavefronts per
        # st.shared.v4 (ideal 4), ldmatrix.x4 at 4 and ld.shared.v2 at 2
        row = next(row for row in rows if row["line"] == 438 and row["kind"] == "ld")
        assert sorted(p["instruction"] for p in row["per_op"]) == ["ld.shared.v2.b32", "ldmatrix.x4"]
        assert all(p["agrees"] for p in row["per_op"])
    if case == "fat_attn_bwd":
        # a 16-element f32 row held by every warp: cp.async by warp 0's lanes 0..3 only (the other
        # warps execute it masked off, 0 wavefronts)
        s = next(s for s in sites if s["kind"] == "ldgsts" and s["shape"] == [16])
        assert s["active_warps"] == 1 and s["warps"] == 4 and s["histogram"] == {"0": 6, "1": 2}
    if case == "matmul_tf32":
        # B (f32, N contiguous in global) goes to a K-contiguous (transposed) 128B-swizzled buffer:
        # 4-byte cp.async, 8 wavefronts each where 1 would do
        b = next(s for s in sites if s["kind"] == "ldgsts" and s["shared"] == ["#shared1"])
        assert b["instruction"] == "cp.async 4 B" and b["per_instruction"] == {"wavefronts": 8, "ideal": 1}


VARIANTS = {"scaled_a": (1, False), "scaled_b": (2, False), "b_transposed": (0, True)}


@pytest.mark.parametrize("kernel,arch,dtype", [
    ("scaled_a", "sm_80", "float16"),               # ldmatrix.x4 of A, ldmatrix.x4.trans of B
    ("scaled_a", None, "float16"),                  # sm_90a: A to registers by ldmatrix, B by wgmma
    ("b_transposed", None, "float16"),              # tl.trans of a loaded tile read by wgmma
    ("b_transposed", "sm_80", "float32"),           # tf32 on sm_80: ldmatrix of 32-bit elements
    # B doubled in registers: local_load (ld.shared.v4) back and local_alloc of the result for
    # wgmma, K-major for tf32: st.shared.b32 at 8 wavefronts where 1 would do
    ("scaled_b", None, "float32"),
])
def test_shared_kernels_prediction_agrees_with_execution(kernel, arch, dtype):
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    import shared_kernels as S
    import layoutsim.triton as lt
    BM = BN = 64
    BK, K = 32, 64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((BM, K)).astype(dtype)
    scaled, transposed = VARIANTS[kernel]
    b = rng.standard_normal((BN, K) if transposed else (K, BN)).astype(dtype)
    c = np.zeros((BM, BN), np.float32)
    r = lt.launch(S.matmul_variants, (1,), a, b, c, K, arch=arch, BM=BM, BN=BN, BK=BK, SCALED=scaled,
                  B_TRANSPOSED=transposed)
    sites, rows = _check(r)
    assert sum(row["agrees"] for row in rows) >= 3
    if arch == "sm_80" and kernel == "scaled_a":
        assert {s["instruction"] for s in sites if s["kind"] == "ld"} == {"ldmatrix.x4", "ldmatrix.x4.trans"}
    if kernel == "scaled_b":
        store = next(s for s in sites if s["op"] == "ttg.local_alloc")
        assert store["instruction"] == "st.shared.b32" and store["per_instruction"] == {"wavefronts": 8, "ideal": 1}


def test_element_offsets_are_the_encodings_definitions():
    from layoutsim.smem.swizzle import mode
    from layoutsim.triton.shared_costs import element_offsets
    from layoutsim.triton.ttgir import Encoding
    # #swizzled_shared (TritonGPUAttrDefs.td): (row, col) at row * cols + ((col / vec) ^ phase) * vec + col % vec,
    # phase = (row / perPhase) % maxPhase, col the dim order[0]
    enc = Encoding("#s", "swizzled_shared", {"vec": 8, "perPhase": 2, "maxPhase": 4, "order": [1, 0]})
    off, _ = element_offsets(enc, [64, 32], 16)
    for row, col in ((0, 0), (2, 3), (3, 9), (7, 31), (63, 17)):
        phase = (row // 2) % 4
        assert off[row, col] == row * 32 + ((col // 8) ^ phase) * 8 + col % 8
    assert sorted(off.ravel()) == list(range(64 * 32))
    # #nvmma_shared 128B, f16, 64 columns per row of the span: the wgmma/TMA 128B mode on byte addresses
    enc = Encoding("#n", "nvmma_shared", {"swizzlingByteWidth": 128, "transposed": False, "elementBitWidth": 16})
    off, _ = element_offsets(enc, [32, 128], 16)
    want = mode("128B").apply((np.arange(32)[:, None] * 64 + np.arange(64)[None, :]) * 2) // 2
    assert np.array_equal(off[:, :64], want)
    assert np.array_equal(off[:, 64:], want + 32 * 64)      # the second span-wide column block after the first
    assert sorted(off.ravel()) == list(range(32 * 128))
    got, why = element_offsets(Encoding("#p", "padded_shared", {}), [8, 8], 16)
    assert got is None and "padded_shared" in why


def test_layouts_cli_lists_the_bank_cost_of_each_shared_encoding(capsys):
    import json
    from layoutsim.cli import main
    kernels = str(ROOT / "gpu_check" / "triton_corpus" / "kernels.py")
    argv = ["triton", "layouts", f"{kernels}:matmul", "--arg", "zeros:f32:64x64", "--arg", "zeros:f32:64x64",
            "--arg", "zeros:f32:64x64", *sum((["--arg", "i32:64"] for _ in range(6)), []),
            "--meta", "BM=64", "--meta", "BN=64", "--meta", "BK=32"]
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_line = {(a["line"][1], a["kind"]): a for a in doc["shared_accesses"]}
    assert by_line[40, "ldgsts"]["per_instruction"] == {"wavefronts": 8, "ideal": 1}
    assert by_line[41, "gmma"]["instruction"].startswith("wgmma m64n64k8")
    assert doc["scratch"][0]["op"] == "ttg.convert_layout" and doc["scratch"][0]["line"][1] == 42
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ("line 40 ttg.async_copy_global_to_local from #blocked1 (32x64 f32): cp.async 4 B, 16 per warp x 4 warps: "
            "8 wavefronts per instruction (ideal 1)") in out
    assert "ttg.convert_layout at line 42" in out


TTGIR = """#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#loc = loc("k.py":10:0)
#loc1 = loc("k.py":50:20)
#loc2 = loc("k.py":196:40)
#loc3 = loc("standard.py":191:40)
#loc4 = loc(callsite(#loc1 at #loc2))
#loc5 = loc(callsite(#loc3 at #loc2))
#loc6 = loc("x"(#loc4))
module {
  tt.func public @k() {
    %a = ttg.local_load %m : !ttg.memdesc<16x16xf16, #shared, #smem> -> tensor<16x16xf16, #blocked> loc(#loc6)
    %b = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%p: f32 loc(unknown), %q: f32 loc(unknown)):
      tt.reduce.return %y : f32 loc(#loc1)
    }) : (tensor<16xf32, #blocked>) -> f32 loc(#loc5)
    ttng.tensormap_create %d, %A, [%c64_i32] : (!tt.ptr<i8>, !tt.ptr<f16>, i32) -> () loc(#loc2)
    tt.return loc(#loc)
  } loc(#loc)
}
"""


def test_op_lines_are_the_executors_lines_and_scratch_ops():
    """An op inside an inlined helper of the kernel's own file is at the helper's line, one from
    another file (triton/language/standard.py) at its call site in the kernel's file: the PTX
    loader's rule for `.loc ... inlined_at` (layoutsim/ptx/module.py). tensormap_create zeroes its
    descriptor in shared scratch (Triton's TensorMapCreate lowering); a reduce's region return is
    not an op of its own."""
    from layoutsim.triton.shared_costs import line_zero
    from layoutsim.triton.ttgir import memory_ops, scratch_ops
    (op,) = memory_ops(TTGIR)
    assert op["line"] == ["k.py", 50]
    assert scratch_ops(TTGIR) == [{"op": "tt.reduce", "line": ["k.py", 196]},
                                  {"op": "ttng.tensormap_create", "line": ["k.py", 196]}]
    ptx = "\t.loc\t1 12 3\n\tld.shared.b32 %r1, [a];\n\t.loc\t1 0 27\n\tld.shared.b32 %r2, [b];\n\t.loc\t1 13 1\n\tret;\n"
    assert line_zero(ptx) == {4}
