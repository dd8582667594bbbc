"""`layoutsim.smem.problems`: each kind of problem from a descriptor built to have it, and none
from the canonical tiles."""
import pytest

from layoutsim.smem import Descriptor, TensorMap, operand_fault, problems

F16 = "wgmma.m64n128k16.f32.f16.f16"


def kinds(*a, **kw):
    return sorted({p.kind for p in problems(*a, **kw)})


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("op, trans", [("A", False), ("B", False), ("B", True)])
def test_canonical_tiles_are_sound(swizzle, op, trans):
    mn = 64 if op == "A" else 128
    d = Descriptor.dense(0x8000, mn, 16, 16, swizzle, "MN" if trans else "K")
    assert problems(F16, op, d, trans) == []


def test_each_problem():
    assert kinds(F16, "A", Descriptor(0x38000, 16, 1024, "128B")) == ["fault"]
    assert kinds(F16, "A", Descriptor(0x8000, 128, 0, "none")) == ["duplicate"]
    assert kinds(F16, "A", Descriptor(0x8000, 16, 16 * 1024, "128B")) == ["units"]
    assert kinds(F16, "A", Descriptor(0x8000, 16 * 128, 256, "none")) == ["units"]
    assert kinds(F16, "A", Descriptor(0x8180, 16, 1024, "128B")) == ["alignment"]
    assert kinds(F16, "A", Descriptor(0x8180, 16, 1024, "128B", base_offset=3)) == []
    assert kinds(F16, "A", Descriptor(0x8180, 16, 1024, "128B", base_offset=2)) == ["base"]
    assert kinds(F16, "A", Descriptor(0x8000, 16, 1024, "128B", base_offset=2)) == ["base"]
    assert kinds(F16, "A", Descriptor(0x8000, 128, 256, "none", base_offset=1)) == ["base"]
    assert kinds(F16, "A", Descriptor(0x8000, 16, 1024, "128B", reserved=1 << 46)) == ["reserved"]
    assert kinds(F16, "A", Descriptor(0x8020, 16, 1024, "128B")) == []              # a k-advance
    a = Descriptor.dense(0x8000, 64, 16, 16, "128B")
    b = Descriptor.dense(0x8400, 128, 16, 16, "128B")
    assert kinds(F16, "B", b, other=a) == ["overlap"]
    assert kinds(F16, "B", Descriptor.dense(0xA000, 128, 16, 16, "128B"), other=a) == []
    assert kinds(F16, "A", a, tma=TensorMap((64, 64), 2, "128B"), tma_dst=0x8000) == []
    assert kinds(F16, "A", a, tma=TensorMap((32, 64), 2, "64B"), tma_dst=0x8000) == ["tma"]
    assert kinds(F16, "A", a, smem_bytes=0x8000 + 4096) == ["fault"]
    box = TensorMap((64, 64), 2, "128B")
    assert kinds(F16, "A", a, tma=box, tma_dst=0x8000, tma_coords=(64, 128)) == []
    assert kinds(F16, "A", a, tma=box, tma_dst=0x8000, tma_coords=(4, 0)) == ["fault"]
    assert kinds(F16, "A", Descriptor.dense(0x8000, 64, 16, 16, "64B"), tma=TensorMap((16, 64), 2, "64B"),
                 tma_dst=0x8000) == []                                  # a narrow box: span-wide rows


def test_messages_name_the_field_and_the_rule():
    p = problems(F16, "A", Descriptor(0x8000, 16, 16 * 1024, "128B"))[0]
    assert p.field == "sbo" and "write 64 (= 1024 bytes), not 1024" in p.message
    p = problems(F16, "A", Descriptor(0x8180, 16, 1024, "128B"))[0]
    assert "0x8180" in p.message and "1024-byte boundary" in p.message and "base_offset = 3" in p.message
    p = problems(F16, "A", Descriptor.dense(0x8000, 64, 16, 16, "128B"), tma=TensorMap((64, 64), 2, "128B"),
                 tma_dst=0x8000, tma_coords=(4, 0))[0]
    assert p.kind == "fault" and p.field == "tma_coords"
    assert p.message.startswith("TMA coordinate c0=4 x 2 B = 8 bytes: the innermost coordinate must start on "
                                "a multiple of 16 bytes")


def test_a_tma_destination_outside_shared_memory_is_a_fault():
    """The audit's case: 0x38c00 is the end of sm_90's 227 KiB (232448 bytes) per block."""
    a = Descriptor.dense(0x400, 64, 16, 16, "128B")
    box = TensorMap((64, 64), 2, "128B")
    found = problems(F16, "A", a, tma=box, tma_dst=0x38c00)
    assert [(p.kind, p.field) for p in found] == [("fault", "tma_dst")]
    assert found[0].message.startswith("TMA destination 0x38c00: the 64x64 box of 2-byte elements (128B swizzle) "
                                       "lands on bytes up to 0x3abff, outside shared memory (232448 bytes")
    # the swizzles still disagree; where the bytes would land is not compared once the copy faults
    assert kinds(F16, "A", a, tma=TensorMap((32, 64), 2, "64B"), tma_dst=0x38c00) == ["fault", "tma"]
    assert kinds(F16, "A", a, tma=box, tma_dst=0x400, smem_bytes=0x400 + 4096) == ["fault"]   # the box: 8192 B
    assert kinds(F16, "A", a, tma=box, tma_dst=0x400, smem_bytes=0x400 + 8192) == []


def test_the_descriptor_fault_is_the_simulators_line():
    d = Descriptor(0x38000, 16, 1024, "128B")               # rows 24.. of A start at 0x38c00
    (p,) = problems(F16, "A", d)
    assert p.kind == "fault" and p.message == operand_fault(F16, "A", d)
    assert "puts A[24][0] at address 0x38c00, outside shared memory (232448 bytes per block on sm_90: 0..0x38bff; " \
           "640 of 1024 elements outside)" in p.message
    # 64 rows of 128 B: row 63 (chunks 0-1 XOR 7 = 7-6) ends on the last byte
    assert operand_fault(F16, "A", Descriptor.dense(0x38c00 - 8192, 64, 16, 16, "128B")) is None


def test_the_descriptor_docstring_tells_the_confirmation():
    from layoutsim.smem import CONFIRMED, descriptor
    assert CONFIRMED and "unconfirmed" not in descriptor.__doc__ and "confirmed it" in descriptor.__doc__
