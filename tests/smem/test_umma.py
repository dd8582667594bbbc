"""The sm_100 (tcgen05) shared-memory matrix descriptor (layoutsim.smem.umma) against the PTX ISA 9.x
9.7.16.4.1 'Shared memory descriptor' field table and the value CuTe's make_umma_desc produced in
the CuTe Blackwell tutorial 01 (tests/data/tcgen05_cute/01_mma_sm100.sm_100a.ptx.gz: nvcc folded its
constant part into `or.b64 %rd, %rd, 4611756662049538048`, the start address or-ed in)."""
import gzip
import re

import numpy as np
import pytest

from layoutsim.errors import LayoutsimError
from layoutsim.files import measured_data
from layoutsim.smem import Descriptor, addresses
from layoutsim.smem.umma import UmmaDescriptor, element_addresses, problem

CUTE_CONSTANT = 0x4000404000010000      # 128B swizzle (2 << 61), version 1 (bit 46), SBO 1024, LBO 16


def test_cutes_descriptor_reads_as_the_isa_fields():
    ptx = measured_data("tcgen05_cute") / "01_mma_sm100.sm_100a.ptx.gz"
    if ptx.is_file():
        text = gzip.decompress(ptx.read_bytes()).decode()
        assert str(CUTE_CONSTANT) in re.findall(r"or\.b64\s+%rd\d+, %rd\d+, (\d{15,});", text)
    d = UmmaDescriptor.decode(CUTE_CONSTANT | (0x400 >> 4))
    assert (d.start, d.lbo, d.sbo, d.swizzle, d.base_offset, d.version, d.lbo_mode) == \
        (0x400, 16, 1024, "128B", 0, 1, 0)
    assert d.encode() == CUTE_CONSTANT | (0x400 >> 4) and problem(d.encode()) is None


@pytest.mark.parametrize("code,name", [(0, "none"), (2, "128B"), (4, "64B"), (6, "32B")])
def test_the_three_bit_swizzle_field_and_the_sm90_reading(code, name):
    # bits 61-63: 0 none, 2 128B, 4 64B, 6 32B; the element addresses are the sm_90 descriptor's of
    # that mode (the canonical layouts of PTX ISA 9.7.16.3.1 are wgmma's)
    v = (1 << 46) | (code << 61) | (1024 >> 4) << 32 | (128 >> 4) << 16 | (0x800 >> 4)
    assert UmmaDescriptor.decode(v).swizzle == name
    for major in ("K", "MN"):
        want = addresses(Descriptor(0x800, 128, 1024, name), 64, 32, 16, major)
        assert np.array_equal(element_addresses(v, 64, 32, 16, major), want)


@pytest.mark.parametrize("value,match", [
    (2 << 61, "bits 46-48 are 0b000, not the fixed 0b001"),
    ((1 << 46) | (1 << 61), "128B with 32B atomicity"),
    ((1 << 46) | (3 << 61), "swizzle code 3 is reserved"),
    ((1 << 46) | (1 << 52), "absolute-address leading-dimension mode"),
])
def test_what_is_not_modelled_is_refused_in_one_line(value, match):
    assert match in problem(value)
    with pytest.raises(LayoutsimError, match=match):
        element_addresses(value, 8, 8, 16)
