"""Global-memory coalescing: the L1TEX requests, 32-byte sectors, 128-byte lines and wavefronts
of one warp's global access, as Nsight Compute counts them, and the ideal sector count.

    from layoutsim import memory
    r = memory.coalesce("ld.global.v4.b32", "lane * 16")     # or 32 byte offsets
    r["requests"], r["sectors"], r["ideal_sectors"]          # 1, 16, 16
    memory.coalesce("ld.global.b32", "lane * 128")["sectors"]  # 32: one sector per lane
    memory.coalesce("st.global.b32", "lane * 4", active=0xFFFF)
    memory.coalesce_batch("ld.global.b32", offsets_Nx32, masks_N)   # {field: int64[N]}
    memory.coalesce("global_load_b32", "lane * 4", arch="gfx1201")   # AMD: from documents

NVIDIA rules: nvidia.py (documented facts, candidate rules, which ones the H200 confirmed:
gpu_check/coalesce_probe measures them). AMD: amd.py, documents only, unverified on hardware.
Offsets, masks and `lane` expressions: layoutsim.access and layoutsim.address (never the bank model).
"""
from .batch import FIELDS, coalesce_batch
from .model import coalesce, format_report
from .nvidia import Rules, parse_rules
from .ops import GlobalOp, names as op_names, parse as parse_op

__all__ = ["coalesce", "coalesce_batch", "format_report", "FIELDS", "Rules", "parse_rules",
           "GlobalOp", "op_names", "parse_op"]
