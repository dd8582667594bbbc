"""clusterlaunchcontrol in the executor (layoutsim/ptx/ops_clc.py), hand-written PTX after the
example of PTX ISA 9.x 9.7.13.17 'clusterlaunchcontrol.try_cancel' (every CTA arrives on its
mbarrier expecting 16 transaction bytes, the cluster's rank 0 issues the multicast request, each
waits for the response). What the ISA fixes and these tests check: the response is 16 bytes at
addr (of every CTA of the cluster for .multicast::cluster::all), its arrival a complete-tx of 16
bytes on mbar, and .multicast::cluster::all with an exited CTA is undefined. The model's response
is a failure (assumed: a valid schedule in which every cluster has started; the ISA's response is
opaque, the model's is 16 zero bytes). Each kernel assembles with ptxas -arch=sm_100a. CUTLASS 4.2's
own scheduler code (its inline PTX, compiled by nvcc from the PyPI wheel) decodes the response as
"no next tile" (test_cutlass_tile_scheduler_sees_no_next_tile_after_the_failed_request).
"""
import gzip
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.files import measured_data
from layoutsim.ptx.state import PtxFault
from test_ptx_tcgen05 import ptxas_sm100a

HEAD = ".version 8.7\n.target sm_100a\n.address_size 64\n"


def clc_kernel(request, early_exit=False):
    """Each CTA (one thread): response bytes preset to 0xFF, mbarrier armed for 16 bytes, then
    `request` by cluster rank 0, the wait, and the response's two 64-bit halves to out[rank]."""
    leave = "  setp.ne.u32 %p3, %r5, 0;\n  @%p3 ret;\n" if early_exit else ""
    return HEAD + f""".visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<10>; .reg .b64 %rd<8>; .reg .pred %p<4>;
  .shared .align 16 .b8 resp[16];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, resp;
  mov.u32 %r2, bar;
  mov.u64 %rd1, -1;
  st.shared.v2.u64 [%r1], {{%rd1, %rd1}};
  mbarrier.init.shared::cta.b64 [%r2], 1;
  fence.mbarrier_init.release.cluster;
  mbarrier.arrive.expect_tx.relaxed.cluster.shared::cta.b64 %rd2, [%r2], 16;
  mov.u32 %r5, %cluster_ctarank;
{leave}  barrier.cluster.arrive.relaxed.aligned;
  barrier.cluster.wait.aligned;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 {request}
WAIT:
  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  ld.shared.v2.u64 {{%rd3, %rd4}}, [%r1];
  ld.param.u64 %rd5, [out];
  mul.wide.u32 %rd6, %r5, 16;
  add.s64 %rd5, %rd5, %rd6;
  st.global.v2.u64 [%rd5], {{%rd3, %rd4}};
  ret;
}}
"""


MULTICAST = ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
             ".multicast::cluster::all.b128 [%r1], [%r2];")
ONE = "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];"


def test_multicast_try_cancel_writes_every_ctas_response_and_completes_its_mbarrier():
    out = np.full((4, 2), 7, np.uint64)
    r = ptx.run(clc_kernel(MULTICAST), "k", 4, 1, [out], arch="sm_100", cluster=(4, 1, 1))
    assert np.array_equal(r.buffers[0], np.zeros((4, 2), np.uint64))   # every CTA's wait ended; bytes written
    assert r.fidelity["documented"] > 0
    assert any("assumed: every try_cancel fails" in x["source"] for x in r.fidelity["documented_instructions"])


def test_try_cancel_with_generic_addresses():
    # no state space: both operands are generic addresses (9.7.13.17), here the shared window's
    src = clc_kernel(ONE.replace(".shared::cta", "").replace("[%r1], [%r2]", "[%rd6], [%rd7]")).replace(
        "  @%p1 clusterlaunchcontrol", "  cvta.shared.u64 %rd6, %rd6;\n  cvta.shared.u64 %rd7, %rd7;\n"
        "  @%p1 clusterlaunchcontrol").replace("  mov.u32 %r5, %cluster_ctarank;",
        "  mov.u32 %r5, %cluster_ctarank;\n  cvt.u64.u32 %rd6, %r1;\n  cvt.u64.u32 %rd7, %r2;")
    out = np.full((1, 2), 7, np.uint64)
    assert np.array_equal(ptx.run(src, "k", 1, 1, [out], arch="sm_100").buffers[0], np.zeros((1, 2), np.uint64))


def test_try_cancel_without_multicast_completes_only_the_issuers_mbarrier():
    # the other CTA's mbarrier waits for 16 bytes nothing sends: a deadlock, as on the GPU
    with pytest.raises(layoutsim.LayoutsimError, match="mbarrier"):
        ptx.run(clc_kernel(ONE), "k", 2, 1, [np.zeros((2, 2), np.uint64)], arch="sm_100", cluster=(2, 1, 1))
    out = np.full((1, 2), 7, np.uint64)
    got = ptx.run(clc_kernel(ONE), "k", 1, 1, [out], arch="sm_100").buffers[0]
    assert np.array_equal(got, np.zeros((1, 2), np.uint64))


def test_multicast_with_an_exited_cta_in_the_cluster_is_a_fault():
    with pytest.raises(PtxFault, match="rank 1 of the cluster has exited"):
        ptx.run(clc_kernel(MULTICAST, early_exit=True), "k", 2, 1, [np.zeros((2, 2), np.uint64)], arch="sm_100",
                cluster=(2, 1, 1))


# CUTLASS 4.2's decoding of a response (sm100_tile_scheduler.hpp work_tile_info_from_clc_response), the
# CTA then trying again: its second request comes after it observed a failure (undefined, 9.7.13.17)
QUERY = """  ld.shared.b128 %q0, [%r1];
  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p3, %q0;
  selp.u32 %r6, 1, 0, %p3;
  @%p3 clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r7, %r8, %r9, _}, %q0;
  st.shared.u32 [%r1], %r6;
"""


def query_kernel(after=""):
    return clc_kernel(MULTICAST).replace("  ld.shared.v2.u64 {%rd3, %rd4}, [%r1];",
                                         QUERY + after + "  ld.shared.v2.u64 {%rd3, %rd4}, [%r1];").replace(
        ".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .b128 %q<2>;")


def test_query_cancel_decodes_the_failed_response_as_not_canceled():
    out = np.full((2, 2), 7, np.uint64)
    got = ptx.run(query_kernel(), "k", 2, 1, [out], arch="sm_100", cluster=(2, 1, 1)).buffers[0]
    assert np.array_equal(got, np.zeros((2, 2), np.uint64))        # is_canceled false: 0 stored over the response


@pytest.mark.parametrize("after,match", [
    ("  @%p1 " + MULTICAST + "\n", "after the CTA observed a try_cancel fail"),
    ("  clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r7, %q0;\n", "of a failed request's response"),
    ("  mov.b128 %q1, {%rd1, %rd1};\n  clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p3, %q1;\n",
     "not a response the model's clusterlaunchcontrol.try_cancel wrote"),
])
def test_what_the_isa_leaves_undefined_after_a_failure_is_a_fault(after, match):
    with pytest.raises(PtxFault, match=match):
        ptx.run(query_kernel(after), "k", 2, 1, [np.zeros((2, 2), np.uint64)], arch="sm_100", cluster=(2, 1, 1))


@pytest.mark.parametrize("line,match", [
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.b128 [%r1], [%r2];", "needs .mbarrier::complete_tx::bytes"),
])
def test_what_is_not_modelled_or_not_legal_is_refused_in_one_line(line, match):
    src = HEAD + f".visible .entry k()\n{{\n  .reg .b32 %r<4>; .reg .b64 %rd<2>; .reg .pred %p<2>;\n  {line}\n  ret;\n}}\n"
    with pytest.raises(layoutsim.LayoutsimError, match=match):
        ptx.run(src, "k", 1, 1, [], arch="sm_100")


def test_try_cancel_before_sm_100_is_refused():
    with pytest.raises(layoutsim.LayoutsimError, match="clusterlaunchcontrol needs sm_100"):
        ptx.run(clc_kernel(ONE).replace("sm_100a", "sm_90a"), "k", 1, 1, [np.zeros((1, 2), np.uint64)],
                arch="sm_90")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed here")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    for n, src in enumerate((clc_kernel(MULTICAST), clc_kernel(ONE, early_exit=True), query_kernel())):
        res = ptxas_sm100a(src, tmp_path, f"k{n}")
        assert res.returncode == 0, res.stderr


# ---- .b128 registers: 16 opaque bytes (PTX ISA 5.2.2 .b128; ld/st 9.7.9.8-9, mov 9.7.9.1 packing) --------
B128 = HEAD + """.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .b128 %q<2>;
  .shared .align 16 .b8 buf[16];
  mov.u32 %r1, buf;
  mov.u64 %rd1, 0x1122334455667788;
  mov.u64 %rd2, 0x99aabbccddeeff00;
  st.shared.v2.u64 [%r1], {%rd1, %rd2};
  ld.shared.b128 %q0, [%r1];
  mov.b128 {%rd4, %rd5}, %q0;
  mov.b128 %q1, {%rd5, %rd4};
  ld.param.u64 %rd3, [out];
  st.global.b128 [%rd3], %q1;
  ret;
}
"""


def test_b128_registers_move_sixteen_bytes_and_mov_packs_the_first_part_lowest():
    got = ptx.run(B128, "k", 1, 1, [np.zeros(2, np.uint64)], arch="sm_100").buffers[0]
    assert [int(x) for x in got] == [0x99aabbccddeeff00, 0x1122334455667788]
    with pytest.raises(layoutsim.LayoutsimError, match="moves .b128 only between .b128 registers"):
        ptx.run(B128.replace("st.global.b128 [%rd3], %q1;", "st.global.b128 [%rd3], %rd1;"), "k", 1, 1,
                [np.zeros(2, np.uint64)], arch="sm_100")
    with pytest.raises(layoutsim.LayoutsimError, match="atom of .b128"):
        ptx.run(B128.replace("st.global.b128 [%rd3], %q1;", "atom.shared.exch.b128 %q1, [%r1], %q0;"), "k", 1, 1,
                [np.zeros(2, np.uint64)], arch="sm_100")


# ---- CUTLASS 4.2's own cluster launch control (tests/ptx/clc_cutlass/clc_probe.cu, PTX from the PyPI
# wheel nvidia-cutlass==4.2.0.0: its sm100 tile scheduler's issue_clc_query and
# work_tile_info_from_clc_response, as nvcc 13.0 compiles them for sm_100a) ------------------------------
CUTLASS_PROBE = measured_data("clc_cutlass") / "clc_probe.sm_100a.ptx.gz"


@pytest.mark.skipif(not CUTLASS_PROBE.is_file(), reason="tests/data/clc_cutlass/ absent: tests/ptx/clc_cutlass/rebuild.py")
def test_cutlass_tile_scheduler_sees_no_next_tile_after_the_failed_request():
    src = gzip.decompress(CUTLASS_PROBE.read_bytes()).decode()
    assert "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128" in src
    r = ptx.run(src, "clc_probe", 3, 64, [np.zeros(64, np.uint32)], arch="sm_100")
    assert (r.buffers[0] == 2).all()              # work_tile_info.is_valid_tile false in every thread
    assert r.fidelity["documented"] > 0
