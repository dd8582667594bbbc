"""The executor's event bus (layoutsim/ptx/events.py): an observer subscribed to a batch receives
exactly one record per warp-batch execution of each memory instruction, with the op class, state
space, width, executing threads and addresses of what the handler did; the cost model, the race
checker and the initcheck are such observers and see the same records."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim import archs
from layoutsim.ptx import runner
from layoutsim.ptx.events import Access, Events

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry {name}(.param .u64 out)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<10>;
	.reg .b64 %rd<6>;
	.shared .align 16 .b32 s[128];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	mov.u32 %r3, s;
	shl.b32 %r4, %r1, 2;
	add.u32 %r5, %r3, %r4;
"""
KERNEL = HEAD.format(name="k") + """	ld.global.u32 %r2, [%rd4];
	st.shared.u32 [%r5], %r2;
	bar.sync 0;
	setp.lt.u32 %p1, %r1, 8;
	shl.b32 %r6, %r1, 3;
	add.u32 %r7, %r3, %r6;
	@%p1 ld.shared.v2.u32 {%r8, %r9}, [%r7];
	atom.shared.add.u32 %r8, [%r3+252], 1;
	@%p1 red.global.add.u32 [%rd2], %r1;
	ret;
}
"""
THREADS = 64


class Recorder:
    def __init__(self):
        self.records, self.syncs = [], []

    def on_access(self, rec):
        self.records.append(rec)

    def on_sync(self, kind, ctas):
        self.syncs.append((kind, None if ctas is None else list(ctas)))


def _subscribe(monkeypatch):
    """A Recorder the runner subscribes to every batch's bus beside its own observers."""
    rec = Recorder()

    class WithRecorder(Events):
        def __init__(self, *observers):
            super().__init__(*observers, rec)
    monkeypatch.setattr(runner, "Events", WithRecorder)
    return rec


@pytest.fixture
def recorded(monkeypatch):
    """Run KERNEL (one CTA of 64 threads) with a Recorder subscribed beside the runner's observers."""
    rec = _subscribe(monkeypatch)
    out = np.arange(THREADS, dtype=np.uint32)
    run = P.run(KERNEL, "k", 1, THREADS, [out], racecheck=True, initcheck=True)
    return run, rec


def _line(run, text):
    return next(i for i, s in enumerate(run.instructions) if s.text.lstrip("@%p1 ").startswith(text))


def test_one_record_per_memory_instruction_execution(recorded):
    run, rec = recorded
    got = [(r.op, r.space, r.width, r.vector, r.effect) for r in rec.records]
    assert got == [("ld", "kparam", 8, 1, "read"), ("ld", "global", 4, 1, "read"), ("st", "shared", 4, 1, "write"),
                   ("ld", "shared", 8, 2, "read"), ("atom", "shared", 4, 1, "atomic"),
                   ("red", "global", 4, 1, "atomic")]
    assert all(isinstance(r, Access) and r.proxy == "generic" and r.issued and r.lands for r in rec.records)


def test_the_masks_are_the_executing_threads(recorded):
    run, rec = recorded
    every, first8 = np.arange(THREADS), np.arange(8)
    assert len(rec.records) == 6
    for r, want in zip(rec.records, (every, every, every, first8, every, first8)):
        assert np.array_equal(np.sort(r.threads), want)
        assert r.mask(THREADS).sum() == len(want)


def test_the_addresses_are_the_lanes_addresses(recorded):
    run, rec = recorded
    param, ld_g, st_s, ld_v2, atom, red = rec.records
    assert np.array_equal(ld_g.addresses - ld_g.addresses[0], 4 * np.arange(THREADS))    # generic, per lane
    # CTA-relative shared addresses: s, the kernel's shared array, begins after the reserved KiB
    # (sm_90: archs.user_smem_base)
    s0 = archs.user_smem_base("sm_90")
    assert np.array_equal(st_s.addresses, s0 + 4 * np.arange(THREADS))
    assert np.array_equal(ld_v2.addresses, s0 + 8 * np.arange(8))
    assert np.array_equal(atom.addresses, np.full(THREADS, s0 + 252))     # s[63], written by thread 63
    assert red.addresses.tolist() == [ld_g.addresses[0]] * 8
    assert [r.site for r in rec.records] == [_line(run, t) for t in
                                             ("ld.param", "ld.global", "st.shared", "ld.shared", "atom.shared", "red.global")]


def test_the_barrier_reaches_the_observers_as_a_sync(recorded):
    run, rec = recorded
    assert rec.syncs == [("bar", [0])]


def test_the_runner_observers_account_the_same_records(recorded):
    """Costs saw them (shared wavefronts, global sectors); racecheck and initcheck found nothing:
    every shared byte read was written before the barrier."""
    run, rec = recorded
    by_text = {r.text: r for r in run.instructions}
    st = next(r for t, r in by_text.items() if t.startswith("st.shared"))
    ld = next(r for t, r in by_text.items() if t.startswith("ld.global"))
    assert st.wavefronts == 2 and st.kind == "st"               # 64 lanes, 4 bytes, stride 4: 2 warps
    assert ld.requests == 2 and ld.sectors == 8
    assert run.hazards == [] and run.initcheck == []


def test_a_bus_without_observers_is_silent_and_subscribe_takes_either_method():
    class OnlySync:
        def __init__(self):
            self.seen = []

        def on_sync(self, kind, ctas):
            self.seen.append(kind)
    s = OnlySync()
    bus = Events(None, s)
    bus.access(Access("ld", "shared", 0, 4, np.arange(4)))      # nobody listens to accesses: no error
    bus.sync("mbarrier")
    assert s.seen == ["mbarrier"]


def test_byte_rows_spell_each_access_bytes():
    r = Access("ld", "shared", 0, 4, np.array([3, 5]), flat=np.array([16, 40]))
    assert r.byte_rows().tolist() == [[16, 17, 18, 19], [40, 41, 42, 43]]
    w = Access("wgmma", "shared", 0, 2, np.array([0]), flat=np.array([[[0, 8]]]))    # a warpgroup, 2 elements
    assert w.byte_rows().tolist() == [[0, 1, 8, 9]]


CP_ASYNC = HEAD.format(name="c") + """	cp.async.ca.shared.global [%r5], [%rd4], 4;
	cp.async.commit_group;
	cp.async.wait_all;
	ld.shared.u32 %r6, [%r5];
	ret;
}
"""


def test_a_cp_async_is_costed_at_issue_and_checked_where_it_lands(monkeypatch):
    """cp.async: its global read and its shared write are issued (costed) by the instruction, the
    write lands (racecheck, initcheck) at the wait: a record of its own, not costed again."""
    rec = _subscribe(monkeypatch)
    run = P.run(CP_ASYNC, "c", 1, 32, [np.arange(32, dtype=np.uint32)], initcheck=True)
    got = [(r.op, r.space, r.issued, r.lands, r.path) for r in rec.records if r.space != "kparam"]
    assert got == [("cp.async", "global", True, True, "ca"), ("cp.async", "shared", True, False, "ca"),
                   ("cp.async", "shared", False, True, ""), ("ld", "shared", True, True, "")]
    issue, landing = rec.records[2], rec.records[3]
    assert np.array_equal(issue.flat, landing.flat) and landing.effect == "write"
    assert run.initcheck == []                      # the ld reads what the landing wrote
    cp = next(r for r in run.instructions if r.text.startswith("cp.async.ca"))
    assert cp.kind == "ldgsts" and cp.wavefronts == 1 and cp.requests == 1
