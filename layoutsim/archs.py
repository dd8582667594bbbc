"""GPU architectures the catalog knows, in the order instructions appear on them."""
from .errors import LayoutsimError, suggest

# NVIDIA compute capabilities, oldest first. "sm_90" is Hopper hardware (H100/H200); its
# arch-specific instructions (wgmma, setmaxnreg) are compiled with the target sm_90a.
NVIDIA = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120")

# AMD RDNA3 (gfx11) and RDNA4 (gfx12) targets that have WMMA.
GFX11 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
GFX12 = ("gfx1200", "gfx1201")
AMD = GFX11 + GFX12
ALL = NVIDIA + AMD

# Threads one block (workgroup) may have: 1024 on every NVIDIA compute capability (CUDA C++
# Programming Guide, "Technical Specifications per Compute Capability": maximum number of threads
# per block) and on RDNA3/RDNA4 (HIP device property maxThreadsPerBlock).
MAX_BLOCK_THREADS = 1024

ALIASES = {"sm_90a": "sm_90", "sm90": "sm_90", "sm80": "sm_80", "sm89": "sm_89",
           "hopper": "sm_90", "h100": "sm_90", "h200": "sm_90", "a100": "sm_80",
           "ampere": "sm_80", "ada": "sm_89", "rdna3": "gfx1100", "rdna4": "gfx1201",
           "gfx11": "gfx1100", "gfx12": "gfx1201"}


def normalize(arch):
    """Canonical arch name, or a one-line error naming the valid ones."""
    if arch is None:
        return None
    a = str(arch).strip().lower()
    a = ALIASES.get(a, a)
    if a in ALL:
        return a
    raise LayoutsimError(f"unknown arch {arch!r}{suggest(a, ALL)}; valid: {', '.join(ALL)}")


def vendor(arch):
    return "amd" if arch in AMD else "nvidia"


def generation(arch):
    """'gfx11' / 'gfx12' for AMD targets, the arch itself for NVIDIA."""
    if arch in GFX11:
        return "gfx11"
    if arch in GFX12:
        return "gfx12"
    return arch


def nvidia_at_least(arch, minimum):
    return arch in NVIDIA and NVIDIA.index(arch) >= NVIDIA.index(minimum)
