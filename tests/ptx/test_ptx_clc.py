"""clusterlaunchcontrol in the executor (layoutsim/ptx/ops_clc.py), hand-written PTX after the
example of PTX ISA 9.x 9.7.13.17 'clusterlaunchcontrol.try_cancel' (every CTA arrives on its
mbarrier expecting 16 transaction bytes, the cluster's rank 0 issues the multicast request, each
waits for the response). What the ISA fixes and these tests check: the response is 16 bytes at
addr (of every CTA of the cluster for .multicast::cluster::all), its arrival a complete-tx of 16
bytes on mbar, and .multicast::cluster::all with an exited CTA is undefined. The model's response
is a failure (assumed: a valid schedule in which every cluster has started; the ISA's response is
opaque, the model's is 16 zero bytes). Each kernel assembles with ptxas -arch=sm_100a.
"""
import shutil
import subprocess

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.ptx.state import PtxFault

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


@pytest.mark.parametrize("line,match", [
    ("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %rd1;", "held in a .b128 register"),
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
    for n, src in enumerate((clc_kernel(MULTICAST), clc_kernel(ONE, early_exit=True))):
        p = tmp_path / f"k{n}.ptx"
        p.write_text(src)
        res = subprocess.run(["ptxas", "-arch=sm_100a", str(p), "-o", str(tmp_path / f"k{n}.cubin")],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
