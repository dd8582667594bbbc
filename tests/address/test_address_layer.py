"""layoutsim.address, the floor under banks, memory, smem, sim and ptx (issue 23): the moved
functions give what they gave in banks/address.py, the ldmatrix/stmatrix ones take a parsed op,
and the facts they needed from banks now come from archs.py and access.py."""
import numpy as np
import pytest

from layoutsim import address, archs, banks
from layoutsim.access import lane_ranges
from layoutsim.errors import LayoutsimError

A = "mma.m16n8k16.f32.f16.f16.f32:A"


def test_the_row_addresses_of_a_parsed_op_are_those_of_its_spelling():
    tile = address.Tile(64, 32, "f16", pad=8)
    for op in ("ldmatrix.x4", "LDSM.16.M88.4", "ldmatrix.sync.aligned.m8n8.x4.shared.b16"):
        spec = banks.parse_op(op)
        assert address.fragment_offsets(tile, spec, A, 16, 16) == banks.fragment_offsets(tile, op, A, 16, 16)
        assert address.block_offsets(tile, spec, 8, 8) == banks.block_offsets(tile, op, 8, 8)
        assert address.matrix_origins(spec, A) == banks.matrix_origins(op, A) == [(0, 0), (8, 0), (0, 8), (8, 8)]
    # lane 0 gives row 16 of the padded tile (pitch 40 f16 = 80 bytes) at column 16 (32 bytes)
    assert banks.fragment_offsets(tile, "ldmatrix.x4", A, 16, 16)[0] == 16 * 80 + 32
    many = address.block_offsets_array(tile, banks.parse_op("ldmatrix.x2"), [(0, 0), (16, 8)])
    assert many.shape == (2, 32) and list(many[1][:16]) == banks.block_offsets(tile, "ldmatrix.x2", 16, 8)[:16]
    assert (many[:, 16:] == -1).all()              # x2: lanes 16-31 give no address


def test_an_op_spelling_given_to_the_address_layer_is_one_clear_error():
    tile = address.Tile(64, 32, "f16")
    with pytest.raises(LayoutsimError, match=r"^op 'ldmatrix.x4': give it parsed \(layoutsim.banks.parse_op\)"):
        address.fragment_offsets(tile, "ldmatrix.x4", A)
    with pytest.raises(LayoutsimError, match="^ld.shared.b32 is not ldmatrix/stmatrix"):
        address.block_offsets(tile, banks.parse_op("ld.shared.b32"))
    with pytest.raises(LayoutsimError, match="^ds_read_b128 is an AMD LDS op"):
        address.matrix_origins(banks.parse_op("ds_read_b128"), A)


def test_shared_memory_limits_are_the_arch_table():
    assert archs.shared_memory_limit("sm_90") == (227 * 1024, "sm_90's shared memory: 227 KiB usable per block "
                                                               "(228 KiB per SM)")
    assert archs.shared_memory_limit("gfx950") == (160 * 1024, "gfx950's LDS: 160 KiB per workgroup")
    assert archs.shared_memory_limit("gfx1201")[0] == archs.shared_memory_limit("gfx942")[0] == 64 * 1024
    assert address.largest_shared_memory() == 227 * 1024 == max(archs.shared_memory_limit(a)[0] for a in archs.ALL)
    with pytest.raises(LayoutsimError, match=f"no GPU's shared memory holds more than {227 * 1024} bytes"):
        address.Tile(1, 227 * 512 + 1, "f16")
    assert address.Tile(1, 227 * 512, "f16").bytes == 227 * 1024


def test_lane_ranges_write_runs():
    assert lane_ranges([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    assert lane_ranges([5]) == "5" and lane_ranges([]) == "-"


def test_the_expression_language_and_swizzles_are_the_address_layer_s():
    lanes = np.arange(32)
    assert list(address.lane_offsets("(lane % 8) * 144 + (lane // 8) * 16")) == list((lanes % 8) * 144 + (lanes // 8) * 16)
    assert address.Expr("row * stride + lane")(lane=3, row=2, stride=10) == 23
    assert address.parse_swizzle("3,3,3") == address.Swizzle(3, 3, 3)
    assert address.parse_swizzle("xor:7->4") == address.XorSwizzle(((7, 4),))
    assert int(address.Swizzle(3, 3, 3)(0b1000000)) == 0b1001000      # bit 6 into bit 3
