"""The address layer's ldmatrix/stmatrix functions for an op given by its spelling.

`layoutsim.address` computes the row addresses of a parsed op; these read the spelling first
(ops.py: 'ldmatrix.x4', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16', 'LDSM.16.M88.4'), so
`banks.fragment_offsets(tile, "ldmatrix.x4", ...)` works as the bank model's users write it.
"""
from .. import address
from .ops import parse


def matrix_origins(op, fragment, stored="row"):
    return address.matrix_origins(parse(op), fragment, stored)


def fragment_offsets(tile, op, fragment, row=0, col=0, stored="row"):
    return address.fragment_offsets(tile, parse(op), fragment, row, col, stored)


def block_offsets(tile, op, row=0, col=0):
    return address.block_offsets(tile, parse(op), row, col)


def block_offsets_array(tile, op, positions):
    return address.block_offsets_array(tile, parse(op), positions)


# the docstrings are the address layer's (written once), plus what the op may be here
for _f in (matrix_origins, fragment_offsets, block_offsets, block_offsets_array):
    _f.__doc__ = getattr(address, _f.__name__).__doc__ + "\n\n    op: the spelling of an ldmatrix/stmatrix (or its OpSpec)."
