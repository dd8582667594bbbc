"""GPU architectures the catalog knows, in the order instructions appear on them."""
from .errors import LayoutsimError, suggest

# NVIDIA compute capabilities, oldest first. "sm_90" is Hopper hardware (H100/H200); its
# arch-specific instructions (wgmma, setmaxnreg) are compiled with the target sm_90a.
NVIDIA = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120")

# AMD RDNA3 (gfx11) and RDNA4 (gfx12) targets that have WMMA.
GFX11 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
GFX12 = ("gfx1200", "gfx1201")
# AMD CDNA targets that have MFMA: MI100, MI200, MI300 (gfx940/gfx941 are early MI300 steppings
# of gfx942, LLVM AMDGPUUsage), MI350 (gfx950).
CDNA = ("gfx908", "gfx90a", "gfx942", "gfx950")
AMD = GFX11 + GFX12 + CDNA
ALL = NVIDIA + AMD

ALIASES = {"sm_90a": "sm_90", "sm90": "sm_90", "sm80": "sm_80", "sm89": "sm_89",
           "hopper": "sm_90", "h100": "sm_90", "h200": "sm_90", "a100": "sm_80",
           "ampere": "sm_80", "ada": "sm_89", "rdna3": "gfx1100", "rdna4": "gfx1201",
           "gfx11": "gfx1100", "gfx12": "gfx1201", "gfx940": "gfx942", "gfx941": "gfx942",
           "cdna1": "gfx908", "cdna2": "gfx90a", "cdna3": "gfx942", "cdna4": "gfx950",
           "mi100": "gfx908", "mi200": "gfx90a", "mi250": "gfx90a", "mi300": "gfx942",
           "mi300x": "gfx942", "mi325x": "gfx942", "mi350": "gfx950", "mi355x": "gfx950"}


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
    """'gfx11' / 'gfx12' for RDNA targets, the arch itself for CDNA and NVIDIA."""
    if arch in GFX11:
        return "gfx11"
    if arch in GFX12:
        return "gfx12"
    return arch


def nvidia_at_least(arch, minimum):
    return arch in NVIDIA and NVIDIA.index(arch) >= NVIDIA.index(minimum)
