"""Costing the SASS that runs (layoutsim/ptx/sass.py, lowering.py): the committed lowering data for
the corpus PTX, ptxas + nvdisasm at run time for other PTX, and per PTX instruction, said so, when
neither is there. The expected counts are the H200's (tests/data/kernels/h200.json)."""
import json

import pytest

import layoutsim.ptx as P
from gpu_check.kernel_corpus import corpus as C, ncu as N
from layoutsim.ptx import lowering as L, runner, sass as S

MANIFEST = {e["name"]: e for e in C.load_manifest()}
H200 = json.loads((C.DATA / "h200.json").read_text())["cases"]
TOOLS = L.find_ptxas() is not None and L.find_nvdisasm() is not None
CSE_LINE = 129          # warp_reduce.sm_90.ptx: xi[i] loaded again; ptxas reuses the first load,
FIRST_LINE = 119        # this one (LDG.E)


def replay(name, ptx=None):
    e = MANIFEST[name]
    ptx = ptx if ptx is not None else (C.DATA / e["ptx"]["sm_90"]).read_text()
    return P.run(ptx, e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, C.load_inputs(e)),
                 shared_bytes=e["shared_bytes"])


def global_ld(r):
    return r.global_totals["ld"]["requests"], r.global_totals["ld"]["sectors"]


def ncu_ld(name):
    ncu = H200[name]["ncu"]
    return ncu[N.GLOBAL_REQUESTS["ld"]], ncu[N.GLOBAL_SECTORS["ld"]]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No cached programs or lowerings: each run decides its SASS source again."""
    monkeypatch.setattr(runner, "_PROGRAMS", {})
    monkeypatch.setattr(S, "_MEMO", {})
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path))


def test_a_load_ptxas_removed_executes_but_costs_nothing(fresh):
    r = replay("warp_reduce")
    assert r.sass_source.startswith("committed lowering data")
    row = next(s for s in r.instructions if s.line == CSE_LINE)
    assert row.text.startswith("ld.global.u32") and row.executions > 0
    assert row.requests is None and "ptxas emits no memory instruction" in row.note
    assert global_ld(r) == ncu_ld("warp_reduce") == (32, 128)


def test_without_ptxas_every_ptx_access_is_costed_and_the_run_says_so(fresh, monkeypatch):
    monkeypatch.setattr(L, "find_ptxas", lambda: "/bin/true")    # ptxas here, nvdisasm not: the note
    monkeypatch.setattr(L, "find_nvdisasm", lambda: None)         # names nvdisasm alone, on any machine
    r = replay("warp_reduce", (C.DATA / "warp_reduce.sm_90.ptx").read_text() + "// not the committed text\n")
    line = "costed per PTX instruction: ptxas not consulted (install nvdisasm (pip install nvidia-cuda-nvdisasm))"
    assert r.sass_source is None and line in r.notes
    assert f"note: {line}" in r.format() and line in r.to_json()["notes"]
    assert global_ld(r) == (48, 192)           # line 129 charged again: what ncu did not count


@pytest.mark.skipif(not TOOLS, reason=f"needs ptxas and nvdisasm ({L.install_hint('ptxas', 'nvdisasm')})")
def test_other_ptx_is_lowered_now_and_cached(fresh, monkeypatch):
    text = (C.DATA / "warp_reduce.sm_90.ptx").read_text() + "// not the committed text\n"
    r = replay("warp_reduce", text)
    assert r.sass_source.startswith("ptxas -arch=sm_90 now") and not any("ptxas not consulted" in n for n in r.notes)
    assert global_ld(r) == ncu_ld("warp_reduce")
    monkeypatch.setattr(runner, "_PROGRAMS", {})
    monkeypatch.setattr(S, "_MEMO", {})
    monkeypatch.setattr(L, "lower", lambda *a, **k: pytest.fail("not read from the cache"))
    assert global_ld(replay("warp_reduce", text)) == ncu_ld("warp_reduce")


def test_ptx_ptxas_refuses_is_costed_per_instruction(fresh, monkeypatch):
    def refuse(*a, **k):
        raise L.LoweringError("ptxas -arch=sm_90 refused the PTX: syntax error")
    monkeypatch.setattr(L, "lower", refuse)
    monkeypatch.setattr(L, "find_ptxas", lambda: "/bin/true")
    monkeypatch.setattr(L, "find_nvdisasm", lambda: "/bin/true")
    r = replay("warp_reduce", (C.DATA / "warp_reduce.sm_90.ptx").read_text() + "// other\n")
    assert "costed per PTX instruction: ptxas not consulted: ptxas -arch=sm_90 refused the PTX: syntax error" in r.notes


def test_an_atom_ptxas_emits_as_red_is_a_reduction(fresh):
    """histogram_atomics: atomicAdd(&hist[i], c) with the old value unused is REDG (lowering data);
    ncu counts it under op_red, 32 requests and 128 sectors, and nothing under op_atom."""
    r = replay("histogram_atomics")
    ncu = H200["histogram_atomics"]["ncu"]
    assert r.global_totals["red"] == {"requests": ncu[N.GLOBAL_REQUESTS["red"]],
                                      "sectors": ncu[N.GLOBAL_SECTORS["red"]]} == {"requests": 32, "sectors": 128}
    assert r.global_totals["atom"] == {"requests": 0, "sectors": 0}
    row = next(s for s in r.instructions if s.text.startswith("atom.global"))
    assert row.global_kind == "red" and row.sass.startswith("REDG")


def test_global_op_follows_the_sass():
    assert S.global_op("atom.global.add.u32", ("REDG.E.ADD.STRONG.GPU",)) == "red.global.add.u32"
    assert S.global_op("atom.global.add.u32", ("ATOMG.E.ADD.STRONG.GPU",)) == "atom.global.add.u32"
    assert S.global_op("atom.global.add.u32", None) == "atom.global.add.u32"
    assert [S.width(s) for s in ("LDS.128", "STS.U8", "LDG.E.64", "LDG.E", "STS.U16")] == [16, 1, 8, 4, 2]


def test_a_wider_sass_access_is_named(fresh, monkeypatch):
    """ptxas may merge two accesses into one wider: the run names it rather than cost silently."""
    src = (C.DATA / "warp_reduce.sm_90.ptx").read_text()
    real = S.for_program

    def merged(ptx, prog, arch):
        low = real(ptx, prog, arch)
        low.by_line = {**low.by_line, FIRST_LINE: ("LDG.E.64",)}
        return low
    monkeypatch.setattr(S, "for_program", merged)
    row = next(s for s in replay("warp_reduce", src).instructions if s.line == FIRST_LINE)
    assert row.note == ("ptxas emits LDG.E.64 for this 4-byte access: merged with its neighbours: costed as one "
                        "8-byte access at the 8-byte aligned address")


def test_line_tagging_keeps_every_instruction_line():
    ptx = "\n".join([".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{",
                     "\t.loc\t1 5 3", "\tmov.u32 \t%r1, 0;", "$L__BB0_1:", "\t@%p1 bra \t$L__BB0_1;",
                     "\t{max.f16x2 %r2,%r3,%r4;", "}", "\tret;", "}", "\t.file\t1 \"k.cu\""])
    out = L.with_ptx_lines(ptx).splitlines()
    assert '.file 1 "kernel.ptx"' in out and not any("k.cu" in x or ".loc\t1 5" in x for x in out)
    tags = [int(x.split()[2]) for x in out if x.strip().startswith(".loc 1 ")]
    assert tags == [7, 9, 10, 12]


def test_nvdisasm_is_found_in_the_wheel(monkeypatch, tmp_path):
    """pip install nvidia-cuda-nvdisasm puts it in site-packages/nvidia/cu13/bin, not on PATH."""
    import importlib.util
    tool = tmp_path / "nvidia" / "cu13" / "bin" / "nvdisasm"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    spec = importlib.util.spec_from_loader("nvidia", loader=None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path / "nvidia")]
    monkeypatch.setattr(L.shutil, "which", lambda name: None)
    monkeypatch.setattr(L, "_existing", lambda path: None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec if name == "nvidia" else None)
    assert L.find_nvdisasm() == str(tool)


def test_an_access_ptxas_merged_or_split_is_costed_as_the_sass():
    """ptxas merges neighbouring ld.shared.f32 of one row (matrixMul's As[ty][k..k+3]) into one
    LDS.128 attributed to the first line, the others emitting none: the line is costed as that
    16-byte access at the 16-byte aligned address (a uniform LDS.128 is 2 wavefronts, the bank
    model's H200 rule, where the 4-byte PTX access is 1: matrixMul's 30,720 -> 36,864, issue 24).
    An access it splits (ld.shared.v4 at 8-byte alignment: two LDS.64) is costed as the pieces."""
    from layoutsim.ptx.costs import sass_width
    assert sass_width(("LDS.128",), 4) == (16, 1)
    assert sass_width(("LDS.64", "LDS.64"), 16) == (8, 2)
    assert sass_width(("LDG.E.64",), 4) == (8, 1)
    assert sass_width(("LDS",), 4) == (4, 1)
    assert sass_width(("LDS.64", "LDS.128"), 4) == (4, 1)       # mixed widths: as written
    assert sass_width(("LDS.64",), 16) == (16, 1)                # a split we cannot account for: as written
    assert sass_width(None, 4) == (4, 1) and sass_width(("LDGSTS.E.BYPASS.128",), None) == (None, 1)


def test_a_statement_spread_over_lines_is_tagged_once():
    """nvcc prints a call's operands one per line (CUTLASS's assert: `call.uni` / `__assertfail,` /
    `(` / `param0,` / `);`): a .loc between them is a ptxas syntax error ("Parsing error near
    '.loc'", issue 24), so only the statement's first line is tagged."""
    ptx = "\n".join([".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{",
                     "\t{ // callseq 0, 0", "\t.param .b64 param0;", "\tst.param.b64 \t[param0+0], 1;",
                     "\tcall.uni ", "\t__assertfail, ", "\t(", "\tparam0, ", "\tparam1", "\t);", "\t} // callseq 0",
                     "\tret;", "}"])
    out = L.with_ptx_lines(ptx).splitlines()
    tags = [int(x.split()[2]) for x in out if x.strip().startswith(".loc 1 ")]
    assert tags == [8, 9, 16]


def test_a_guard_naming_a_predicate_without_percent_is_tagged():
    """CUTLASS's epilogue stores through inline asm `{ .reg .pred p; setp.ne.b32 p, %r1, 0; @p
    st.global.u32 [%rd1], %r2; }`: the guarded store gets its own line (untagged, its STG was
    attributed to the setp, and the store went uncosted: 'ptxas emits no memory instruction')."""
    ptx = "\n".join([".version 9.0", ".target sm_90", ".address_size 64", ".visible .entry k()", "{",
                     "\t{", "  .reg .pred p;", "  setp.ne.b32 p, %r1, 0;", "  @p st.global.u32 [%rd1], %r2;", "}",
                     "\t@!p ret;", "}"])
    out = L.with_ptx_lines(ptx).splitlines()
    tags = [int(x.split()[2]) for x in out if x.strip().startswith(".loc 1 ")]
    assert tags == [8, 9, 11]
    assert L.ptx_instruction("  @p st.global.u32 [%rd1], %r2;")[0] == "st.global.u32"
