"""The `kernels` check group: the kernel corpus (tests/data/kernels) and the real-world corpus
(tests/data/realworld, issue 24) launched from their PTX, their buffers compared with the recorded
H200 run and with layoutsim.ptx, their ncu totals with both."""
from layoutsim.files import measured_data

from . import check
from .corpus import MANIFEST

NEEDS_KERNELS = False     # the corpora bring their own PTX


def run(session):
    """The real-world corpus first, without ncu (its totals over five ncu runs are
    gpu_check.realworld.measure's), then the kernel corpus with ncu (which gives the context up)."""
    out = []
    realworld = measured_data("realworld")
    if (realworld / MANIFEST).is_file():
        out += check.run(session.backend, realworld, record=session.record, log=session.log, use_ncu=False)
    return out + check.run(session.backend, record=session.record, log=session.log)
