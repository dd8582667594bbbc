"""`layoutsim.smem.problems`: each kind of problem from a descriptor built to have it, and none
from the canonical tiles."""
import pytest

from layoutsim.smem import Descriptor, TensorMap, problems

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
