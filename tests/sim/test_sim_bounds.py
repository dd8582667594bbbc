"""The simulator's edges: sizes, addresses near 2**63, and junk given to the host helpers.

Every bad value must end in one LayoutsimError and leave the machine exactly as it was; nothing
else (TypeError, ValueError, OverflowError, IndexError) may escape. Limits come from the CUDA
C++ Programming Guide (1024 threads per block) and the bank model's shared-memory sizes.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from layoutsim import archs
from layoutsim.errors import LayoutsimError
from layoutsim.sim import Machine, Warp, smem_limit

# values a caller might pass by mistake: wrong types, huge and negative numbers, odd arrays
JUNK = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True), st.text(max_size=6), st.binary(max_size=4),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.sampled_from([2 ** 63 - 1, 2 ** 63 - 4, 2 ** 64 - 4, -1, 0, 16, np.uint64(2 ** 64 - 4),
                     np.int64(2 ** 63 - 4), object(), {}, [1, 2], (2, 3), (-1,), (1 << 40, 1 << 40),
                     np.zeros(3), np.array(["a"]), np.array([1 + 2j]), np.float32, "u4", "f16"]),
    st.lists(st.integers(min_value=-(1 << 66), max_value=1 << 66), min_size=0, max_size=3),
)


def _machine():
    w = Warp("sm_90")
    w.global_alloc("A", np.arange(64, dtype=np.uint32))
    w.mov("r0", 7)
    w.smem_write(0, np.arange(256, dtype=np.uint8))
    return w


CALLS = {
    "smem_write offset": lambda w, v: w.smem_write(v, np.zeros(4, np.uint8)),
    "smem_write array": lambda w, v: w.smem_write(0, v),
    "smem_read offset": lambda w, v: w.smem_read(v, "u1", (2,)),
    "smem_read dtype": lambda w, v: w.smem_read(0, v, (2,)),
    "smem_read shape": lambda w, v: w.smem_read(0, "u1", v),
    "global_alloc name": lambda w, v: w.global_alloc(v, np.zeros(3)),
    "global_alloc array": lambda w, v: w.global_alloc("B", v),
    "global_array name": lambda w, v: w.global_array(v),
    "global_array dtype": lambda w, v: w.global_array("A", v),
    "reg": lambda w, v: w.reg(v),
    "fragment instruction": lambda w, v: w.fragment(v, "C", "c"),
    "fragment names": lambda w, v: w.fragment("mma.m16n8k16.f32.f16.f16.f32", "C", v),
    "set_fragment bits": lambda w, v: w.set_fragment("mma.m16n8k16.f32.f16.f16.f32", "C", "c", v),
    "mov value": lambda w, v: w.mov("r1", v),
    "mov register": lambda w, v: w.mov(v, 1),
    "ld.shared address": lambda w, v: w.ld_shared("r2", v),
    "ld.shared width": lambda w, v: w.ld_shared("r2", 0, bits=v),
    "ld.shared mask": lambda w, v: w.ld_shared("r2", 0, mask=v),
    "st.shared address": lambda w, v: w.st_shared(v, "r0"),
    "ld.global address": lambda w, v: w.ld_global("r2", "A", v),
    "st.global address": lambda w, v: w.st_global("A", v, "r0"),
    "ldmatrix address": lambda w, v: w.ldmatrix("ldmatrix.x4", "q", v),
    "stmatrix address": lambda w, v: w.stmatrix("stmatrix.x1", v, ["r0"]),
}


@pytest.mark.parametrize("what", sorted(CALLS))
@given(value=JUNK)
def test_host_helpers_and_instructions_raise_only_layoutsim_errors(what, value):
    w = _machine()
    before = w.snapshot()
    try:
        CALLS[what](w, value)
    except LayoutsimError as e:
        assert "\n" not in str(e)
        assert w.snapshot() == before            # a refused call changes nothing
    # a value that happens to be valid may succeed; anything else escaping fails the test


@pytest.mark.parametrize("address", [2 ** 63 - 16, 2 ** 63 - 32, np.uint64(2 ** 64 - 16), 2 ** 62])
def test_addresses_near_2_63_are_out_of_range_not_wrapped(address):
    # address + width used to wrap past 2**63 and slip under the range check
    w = _machine()
    for op in (lambda: w.ld_shared("r2", address), lambda: w.ld_shared("r2", address, bits=128),
               lambda: w.st_shared(address, "r0"), lambda: w.ldmatrix("ldmatrix.x4", "q", address),
               lambda: w.ld_global("r2", "A", address)):
        with pytest.raises(LayoutsimError, match="outside"):
            op()


def test_inactive_lanes_may_hold_any_address():
    w = _machine()
    far = np.full(32, 2 ** 64 - 4, np.uint64)
    far[0] = 8
    w.ld_shared("r2", far, mask=1)                     # only lane 0 loads
    assert int(w.reg("r2")[0]) == int.from_bytes(bytes(range(8, 12)), "little")


@pytest.mark.parametrize("arch,wave", [("sm_90", 32), ("gfx1201", 32), ("gfx1201", 64)])
def test_machine_size_limits(arch, wave):
    most = archs.MAX_BLOCK_THREADS // wave           # 1024 threads per block
    assert Machine(arch, warps=most, wave=wave).threads == 1024
    for warps in (most + 1, 10 ** 6, 0, -1, 2.0, True, "4", None):
        with pytest.raises(LayoutsimError, match="warps"):
            Machine(arch, warps=warps, wave=wave)
    limit = smem_limit(arch)
    assert Machine(arch, smem_bytes=limit, wave=wave).smem.size == limit
    for size in (limit + 1, 0, 1.5, float(limit), True, "1024", 10 ** 30):
        with pytest.raises(LayoutsimError, match="smem_bytes"):
            Machine(arch, smem_bytes=size, wave=wave)
    for bad_wave in (32.0, True, "32", 16):
        with pytest.raises(LayoutsimError, match="wave size"):
            Machine(arch, wave=bad_wave)
