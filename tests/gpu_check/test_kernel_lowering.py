"""The SASS lowering data (layoutsim/ptx/data/lowering_sm90.json): it matches the committed PTX
line by line, it says what issue 10 names, and it is what the generator makes now."""
import hashlib
import json

import pytest

from gpu_check.kernel_corpus import corpus as C, lowering as L
from layoutsim.ptx import lowering as M

DOC = json.loads(L.OUT.read_text())


def test_every_sm90_ptx_file_and_entry_is_covered():
    manifest = C.load_manifest()
    assert set(DOC["kernels"]) == {C.run_ptx(e) for e in manifest}
    for e in manifest:
        assert DOC["kernels"][C.run_ptx(e)].get(e["kernel"]), e["name"]


def test_rows_name_real_ptx_lines():
    for f, entries in DOC["kernels"].items():
        lines = (C.DATA / f).read_text().splitlines()
        for rows in entries.values():
            for r in rows:
                op, text = M.ptx_instruction(lines[r["line"] - 1])
                assert (op, text) == (r["op"], r["ptx"]), (f, r["line"])
                assert M.KEEP.match(op)


def test_each_file_is_fingerprinted_by_its_text():
    """The executor uses this data for a PTX text whose SHA-256 is listed (layoutsim/ptx/sass.py)."""
    assert DOC["ptx_sha256"] == {f: hashlib.sha256((C.DATA / f).read_text().encode()).hexdigest()
                                 for f in DOC["kernels"]}


@pytest.mark.parametrize("ptx_op, sass", [
    ("wmma.load.a.sync.aligned.row.m16n16k16.shared.f16", {"LDSM.16.M88.4"}),     # issue 10: wmma from shared -> LDSM
    ("wmma.load.b.sync.aligned.row.m16n16k16.shared.f16", {"LDSM.16.MT88.4"}),
    ("st.shared.u8", {"STS.U8"}),                                                 # byte stores stay byte stores
    ("ld.shared.v4.u32", {"LDS.128"}),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", {"LDSM.16.M88.4"}),
    ("stmatrix.sync.aligned.m8n8.x4.shared.b16", {"STSM.16.M88.4"}),
    ("cp.async.cg.shared.global", {"LDGSTS.E.BYPASS.128"}),
    ("ex2.approx.f32", {"MUFU.EX2"}),
])
def test_lowering_facts(ptx_op, sass):
    assert set(DOC["rules"][ptx_op]["sass"]) == sass


def test_s8_wmma_b_from_shared_is_byte_loads_not_ldsm():
    """Measured by the generator (ptxas 13.0): the row-major s8 B fragment is gathered with LDS.U8."""
    assert DOC["rules"]["wmma.load.b.sync.aligned.row.m16n16k16.shared.s8"]["sass"] == {"LDS.U8": 40}


def test_ex2_approx_f32_is_the_rescaled_mufu_sequence():
    rows = DOC["kernels"]["softmax_ex2.sm_90.ptx"]["softmax_f32"]
    seqs = {tuple(r["sass"]) for r in rows if r["op"] == "ex2.approx.f32"}
    assert seqs == {("FSETP.GEU.AND", "FMUL", "MUFU.EX2", "FMUL")}


def test_generator_reproduces_the_committed_file():
    nvdisasm = M.find_nvdisasm()
    if nvdisasm is None or M.find_ptxas() is None:
        pytest.skip(f"ptxas or nvdisasm not installed ({M.install_hint('ptxas', 'nvdisasm')})")
    doc = L.generate(nvdisasm=nvdisasm)
    assert doc["kernels"] == DOC["kernels"] and doc["rules"] == DOC["rules"]
    assert doc["ptx_sha256"] == DOC["ptx_sha256"]


def test_the_lowering_describes_the_sass_the_h200_machines_ptxas_makes():
    """h200.json's ptxas_sass_sha256: each function's SASS bytes as ptxas 13.0 assembled them on the
    H200 machine (GPU job of 2026-12-01, from cuobjdump's listing). The lowering file was generated
    from byte-identical SASS, so its line-by-line data holds for that machine."""
    h200 = json.loads((C.DATA / "h200.json").read_text())
    assert DOC["sass_sha256"] == h200["ptxas_sass_sha256"]
    assert set(DOC["sass_sha256"]) == set(DOC["kernels"])


def test_fingerprints_of_a_listing_and_of_the_cubin_agree():
    """listing_sha256 (cuobjdump text, what the GPU job keeps) and sass_sha256 (cubin bytes) are
    the same fingerprint: two 16-byte instructions, written both ways."""
    import hashlib
    import struct
    words = [0x00000A00FF017B82, 0x000FE20000000800, 0x0000000000007919, 0x000E2E0000002500]
    listing = "\n".join(["\t\tFunction : k", *(f"        /*{16 * i:04x}*/  X ;  /* {words[2 * i]:#018x} */\n"
                                                  f"                   /* {words[2 * i + 1]:#018x} */" for i in range(2))])
    code = b"".join(struct.pack("<Q", w) for w in words)
    assert L.listing_sha256(listing) == {"k": hashlib.sha256(code).hexdigest()}


def test_check_ignores_only_the_disassembler_version():
    old = {"source": {"ptxas": "13.0", "nvdisasm": "13.1"}, "kernels": {"a.ptx": {"k": [{"sass": ["LDS"]}]}}}
    new = {"source": {"ptxas": "13.0", "nvdisasm": "13.0"}, "kernels": {"a.ptx": {"k": [{"sass": ["LDS.64"]}]}}}
    assert L.differences(old, new) == ["kernels.a.ptx.k[0].sass[0]"]
    assert L.differences(old, dict(new, kernels=old["kernels"])) == []


@pytest.mark.parametrize("corpus", ["realworld", "llmc", "samples"])
def test_the_real_world_corpora_lowering_is_their_ptx_and_the_gpus_ptxas(corpus):
    """lowering_sm90_<corpus>.json (python -m gpu_check.kernel_corpus.lowering --corpus NAME): every
    PTX a case runs, fingerprinted by its text, and where the GPU job recorded what its ptxas made of
    that PTX (h200.json ptxas_sass_sha256), the same SASS bytes; so a machine without ptxas costs
    those corpora from it."""
    directory, out = L.CORPORA[corpus]
    doc = json.loads(out.read_text())
    files = {C.run_ptx(e) for e in C.load_manifest(directory)}
    assert set(doc["kernels"]) == files
    assert doc["ptx_sha256"] == {f: hashlib.sha256((directory / f).read_text().encode()).hexdigest() for f in files}
    h200 = directory / "h200.json"
    recorded = json.loads(h200.read_text()).get("ptxas_sass_sha256") if h200.is_file() else None
    if recorded:
        assert {f: doc["sass_sha256"][f] for f in recorded} == recorded
