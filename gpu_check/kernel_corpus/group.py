"""The `kernels` check group: the kernel corpus (tests/data/kernels) launched from its PTX, its
buffers compared with the recorded H200 run and with layoutsim.ptx, its ncu totals with both."""
from . import check

NEEDS_KERNELS = False     # the corpus brings its own PTX


def run(session):
    return check.run(session.backend, record=session.record, log=session.log)
