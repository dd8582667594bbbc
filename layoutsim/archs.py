"""GPU architectures the catalog knows, in the order instructions appear on them."""
import re

from .errors import LayoutsimError, suggest

# NVIDIA compute capabilities, oldest first. "sm_90" is Hopper hardware (H100/H200); its
# arch-specific instructions (wgmma, setmaxnreg) are compiled with the target sm_90a.
NVIDIA = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120")

# Arch-specific compile targets ("a"): the features of that hardware only (sm_90: wgmma,
# setmaxnreg; sm_100: tcgen05 and tensor memory; sm_120: mma.sync .kind::mxf8f6f4/mxf4/mxf4nvf4
# .block_scale), which the plain target of the same arch does not have. PTX ISA 9.0, 1.3 and
# the .target directive; PTX ISA 9.x 9.7.16 'tcgen05' and 9.7.14 'mma' (target requirements:
# sm_100a / sm_120a).
ARCH_SPECIFIC = {"sm_90": "sm_90a", "sm_100": "sm_100a", "sm_120": "sm_120a"}

# AMD RDNA3 (gfx11) and RDNA4 (gfx12) targets that have WMMA.
GFX11 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153")
GFX12 = ("gfx1200", "gfx1201")
# AMD CDNA targets that have MFMA: MI100, MI200, MI300 (gfx940/gfx941 are early MI300 steppings
# of gfx942, LLVM AMDGPUUsage), MI350 (gfx950).
CDNA = ("gfx908", "gfx90a", "gfx942", "gfx950")
AMD = GFX11 + GFX12 + CDNA
ALL = NVIDIA + AMD

# Threads one block (workgroup) may have: 1024 on every NVIDIA compute capability (CUDA C++
# Programming Guide, "Technical Specifications per Compute Capability": maximum number of threads
# per block) and on RDNA3/RDNA4 (HIP device property maxThreadsPerBlock).
MAX_BLOCK_THREADS = 1024

# Shared memory, from the CUDA C++ Programming Guide, "Technical Specifications per Compute
# Capability" (and the Hopper / Blackwell tuning guides): (KiB per SM, KiB usable per block).
SMEM_KIB = {"sm_70": (96, 96), "sm_75": (64, 64), "sm_80": (164, 163), "sm_86": (100, 99),
            "sm_87": (164, 163), "sm_89": (100, 99), "sm_90": (228, 227), "sm_100": (228, 227),
            "sm_120": (128, 99)}
# AMD LDS per workgroup: 64 KiB on gfx11 and gfx12 (RDNA3 / RDNA4 ISA guides, "LDS"); CDNA from
# the ROCm GPU specifications tables (gfx950: MI355X/MI350X, banks/amd.py's _GFX950 note).
LDS_BYTES = 64 * 1024
CDNA_LDS_BYTES = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}


def shared_memory_limit(arch):
    """(bytes of shared memory (LDS) one block can address on `arch`, one-line description)."""
    if arch in AMD:
        size = CDNA_LDS_BYTES.get(arch, LDS_BYTES)
        return size, f"{arch}'s LDS: {size // 1024} KiB per workgroup"
    per_sm, per_block = SMEM_KIB[arch]
    return per_block * 1024, f"{arch}'s shared memory: {per_block} KiB usable per block ({per_sm} KiB per SM)"

ALIASES = {**{t: a for a, t in ARCH_SPECIFIC.items()}, "sm90": "sm_90", "sm80": "sm_80", "sm89": "sm_89",
           "hopper": "sm_90", "h100": "sm_90", "h200": "sm_90", "a100": "sm_80",
           "sm100": "sm_100", "sm120": "sm_120", "blackwell": "sm_100", "b200": "sm_100",
           "b100": "sm_100", "gb200": "sm_100", "rtx5090": "sm_120",
           "ampere": "sm_80", "ada": "sm_89", "rdna3": "gfx1100", "rdna4": "gfx1201",
           "gfx11": "gfx1100", "gfx12": "gfx1201", "gfx940": "gfx942", "gfx941": "gfx942",
           "cdna1": "gfx908", "cdna2": "gfx90a", "cdna3": "gfx942", "cdna4": "gfx950",
           "mi100": "gfx908", "mi200": "gfx90a", "mi250": "gfx90a", "mi300": "gfx942",
           "mi300x": "gfx942", "mi325x": "gfx942", "mi350": "gfx950", "mi355x": "gfx950"}


# The NVIDIA GPU whose measurements the shared-memory bank and global coalescing models follow
# (the corpora gpu-check's banks and coalescing groups record): on every other NVIDIA arch what
# those measurements decided is carried over, not measured.
MEASURED_GPU = "NVIDIA H200"
MEASURED_ARCH = ALIASES["h200"]


def extrapolated(arch, rules, documented=""):
    """One line saying that `rules` on `arch` are extrapolated from the MEASURED_GPU (and what,
    `documented`, the vendor's documents say holds there); None on MEASURED_ARCH and AMD archs."""
    if arch not in NVIDIA or arch == MEASURED_ARCH:
        return None
    return (f"{arch}: {rules} are extrapolated from the {MEASURED_GPU} ({MEASURED_ARCH}) measurements, not "
            f"measured on {arch}" + (f"; {documented}" if documented else ""))


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


def of_op(name, op_vendor, arch, kinds, other_ops):
    """The canonical arch an op of `op_vendor` runs on, given `arch` (not None): a one-line error
    when the arch is another vendor's. kinds: {"amd": ..., "nvidia": ...}, what the op is called
    ("AMD LDS op"); other_ops: the ops of the other vendor, named when an NVIDIA op meets an AMD arch."""
    a = normalize(arch)
    if vendor(a) != op_vendor:
        if op_vendor == "amd":
            raise LayoutsimError(f"{name} is an {kinds['amd']}, not available on {a}; "
                                 f"give an AMD arch ({', '.join(AMD)})")
        raise LayoutsimError(f"{name} is an {kinds['nvidia']}, not available on {a}; {other_ops}")
    return a


def nvidia_only(arch, what):
    """The canonical NVIDIA arch for `what` (a tool that executes PTX, which is NVIDIA's): a
    one-line error saying so and naming the NVIDIA archs when `arch` is another vendor's."""
    a = normalize(arch)
    if a is None or vendor(a) != "nvidia":
        named = f"arch {arch!r}" + (f" ({a})" if a and a != arch else "")
        raise LayoutsimError(f"{named} is {'an AMD arch' if a else 'not given'}: {what} is NVIDIA-only "
                             f"(it executes PTX); give an NVIDIA arch: {', '.join(NVIDIA)}")
    return a


def generation(arch):
    """'gfx11' / 'gfx12' for RDNA targets, the arch itself for CDNA and NVIDIA."""
    if arch in GFX11:
        return "gfx11"
    if arch in GFX12:
        return "gfx12"
    return arch


def nvidia_at_least(arch, minimum):
    return arch in NVIDIA and NVIDIA.index(arch) >= NVIDIA.index(minimum)


# ---- compile targets --------------------------------------------------------------------
# AMD code objects are built for one target per generation; gfx11 and gfx12 entries run on every
# target of their generation. Each CDNA arch is its own generation and target.
OFFLOAD_ARCH = {"gfx11": "gfx1100", "gfx12": "gfx1201", **{a: a for a in CDNA}}
# The target the compile check builds a CDNA MFMA for (it runs nowhere here): the first of these
# the instruction exists on. gfx942 first, as it has the most MFMA forms; then gfx950 for the
# forms CDNA4 added, gfx90a for the ones CDNA3 dropped.
MFMA_CHECK_ORDER = ("gfx942", "gfx950", "gfx90a", "gfx908")


def compile_target(arch, arch_specific=False):
    """The compiler's target for an arch: "sm_90", or "sm_90a" for instructions that exist only
    on the arch-specific target (wgmma); for AMD, the generation's offload arch."""
    if arch in AMD:
        return OFFLOAD_ARCH[generation(arch)]
    if arch_specific:
        if arch not in ARCH_SPECIFIC:
            raise LayoutsimError(f"{arch} has no arch-specific target; {', '.join(ARCH_SPECIFIC)} do")
        return ARCH_SPECIFIC[arch]
    return arch


def check_target(archs):
    """The compile target the compile check builds an instruction of `archs` for: the generation's
    offload arch (WMMA), or the first of MFMA_CHECK_ORDER the instruction exists on (MFMA)."""
    for a in MFMA_CHECK_ORDER:
        if a in archs:
            return a
    return compile_target(archs[0])


def nvidia_targets(minimum="sm_80"):
    """Every NVIDIA compile target from `minimum` on: each arch, then its arch-specific target."""
    out = []
    for a in NVIDIA:
        if nvidia_at_least(a, minimum):
            out.append(a)
            if a in ARCH_SPECIFIC:
                out.append(ARCH_SPECIFIC[a])
    return tuple(out)


def target_arch(target):
    """The arch a compile target runs on ("sm_90a" -> "sm_90")."""
    return {t: a for a, t in ARCH_SPECIFIC.items()}.get(target, target)


def is_arch_specific(target):
    return target in ARCH_SPECIFIC.values()


def target_runs(target, archs, arch_specific=False):
    """Whether code built for `target` may contain an instruction of `archs` (arch-specific
    instructions only on an arch-specific target)."""
    return target_arch(target) in archs and (is_arch_specific(target) or not arch_specific)


def target_of_device(arch):
    """What to build for a GPU of `arch`: its arch-specific target where one exists (it runs
    everything the plain target runs, and more)."""
    return ARCH_SPECIFIC.get(arch, arch)


# ---- per-arch limits (besides shared_memory_limit above) ------------------------------------
# CUDA C++ Programming Guide, "Technical Specifications per Compute Capability", every compute
# capability from 5.0 on: a block's z-dimension at most 64; a grid's
# x-dimension at most 2**31 - 1, y and z at most 65535; at most 255 registers per thread (what
# nvcc's -maxrregcount accepts).
MAX_BLOCK_Z = 64
GRID_LIMITS = ((1 << 31) - 1, 65535, 65535)
MAX_THREAD_REGISTERS = 255
# SMs of one GPU of each arch (what %nsmid reads; %smid spreads the CTAs over them): A100 108, the
# full GA102 (A40) 84, RTX 4090 128, H100/H200 SXM 132 (the product pages' SM counts).
SM_COUNT = {"sm_80": 108, "sm_86": 84, "sm_89": 128, "sm_90": 132, "sm_100": 148}   # B200: 148
# Shared memory a kernel may use without opting in (cuFuncSetAttribute
# MAX_DYNAMIC_SHARED_SIZE_BYTES): 48 KiB on every compute capability (CUDA C++ Programming Guide,
# "Shared Memory": more than 48 KB per block needs dynamic shared memory and the explicit opt-in).
SMEM_WITHOUT_OPT_IN = 48 * 1024
# What the driver allocates a CTA's shared memory in, and what it reserves for the system per block
# (CUDA 13.0's cuda_occupancy.h: cudaOccSMemAllocationGranularity, 256 bytes for compute capability
# 3.x-7.x and 128 from 8.x; cudaDeviceProp::reservedSharedMemPerBlock, 1 KiB from 8.x). On an H100
# %total_smem_size read 384 for 100 static + 256 dynamic bytes (the unit's rounding, the reserved
# KiB not counted) and %reserved_smem_offset_cap 1024 (tests/data/constructs/constructs.json).
def smem_allocation_unit(arch):
    return 128 if nvidia_at_least(arch, "sm_80") else 256


def reserved_smem_per_block(arch):
    return 1024 if nvidia_at_least(arch, "sm_80") else 0


# Where a CTA's own shared memory begins in its shared window. On sm_90 the system's reserved
# KiB comes first: ptxas 13.0 (-arch=sm_90) addresses a kernel's first static __shared__ array as
# 0x400 plus the CTA's cluster rank shifted to bit 24 (`MOV R5, 0x400` / `LEA R7, R9(SR_CgaCtaId),
# R5, 0x18` in gpu_check/constructs/smem_probe.cu's k_addr), and reads %reserved_smem_offset_begin
# and _cap as the constants 0 and 0x400 (the same base for -arch=sm_100a and sm_120a). For sm_80/86/89 the same ptxas addresses that array as 0
# and puts the reserved bytes at the window's end: `mov.u32 %r, %reserved_smem_offset_*` compiles to
# no immediate there (-arch=sm_80, sm_86 and sm_89 alike): _cap is `S2R SR_SMEMSZ` (the window's
# size), _begin and _0 `IADD3 SR_SMEMSZ - c[0x0][0x114]`, _end `c[0x0][0x120]` and _1
# `c[0x0][0x124]`, words the driver writes at launch, so the executor refuses these registers there
# (operands.py; cuda-samples' cooperative-groups reduce reads _0/_1); other targets: not looked at,
# taken as sm_80's.
def user_smem_base(arch):
    return reserved_smem_per_block(arch) if nvidia_at_least(arch, "sm_90") else 0


# Tensor memory (sm_100 and its arch-/family-specific targets; sm_120 has none): 128 lanes
# (rows) x 512 columns of 32-bit cells per CTA, PTX ISA 9.x 9.7.16.2.2 'Tensor Memory' (and
# the tcgen05 'Tensor Memory' figure); tcgen05.alloc takes a power of two of at least 32
# columns (9.7.16.7.1 'tcgen05.alloc': nCols); warp w of a warpgroup reaches lanes
# 32*(w%4) .. 32*(w%4)+31 only (9.7.16.2.2 'Access restrictions'). A TMEM address holds the
# lane in bits 31-16 and the column in bits 15-0 (9.7.16.2.2.1 'Tensor Memory Addressing').
TMEM = {"sm_100": {"lanes": 128, "columns": 512, "cell_bits": 32, "alloc_min_columns": 32,
                   "lanes_per_warp": 32}}
TMEM_SOURCE = ("PTX ISA 9.x 9.7.16.2.2 'Tensor Memory' (128 lanes x 512 columns of 32 bits per CTA; "
               "address: lane << 16 | column) and 9.7.16.7.1 'tcgen05.alloc' (nCols a power of 2, "
               ">= 32, <= 512)")


def tmem(arch):
    """The tensor memory of `arch` (TMEM: lanes, columns, cell_bits, alloc_min_columns,
    lanes_per_warp), or a one-line error on an arch without it."""
    if arch not in TMEM:
        raise LayoutsimError(f"{arch} has no tensor memory (tcgen05); {', '.join(TMEM)} has "
                             f"(compile for {', '.join(ARCH_SPECIFIC[a] for a in TMEM)})")
    return TMEM[arch]


def sm_count(arch):
    """The SMs of a GPU of `arch` (SM_COUNT; an H200's 132 where the table has none)."""
    return SM_COUNT.get(arch, SM_COUNT[MEASURED_ARCH])


# ---- which PTX .target loads where ------------------------------------------------------------
# PTX ISA, "PTX Module Directives: .target" and "Target ISA notes": PTX for sm_N follows the onion
# model (the driver compiles it for sm_N and every later arch); a target with suffix "a"
# (sm_90a) has the arch-accelerated features of sm_N only and runs on sm_N only; a suffix "f"
# (sm_100f) has the family-specific features and runs on sm_N and the later archs of its family
# (the same major compute capability).
ARCH_SUFFIX, FAMILY_SUFFIX = "a", "f"
_PTX_TARGET = re.compile(rf"sm_(\d+)([{ARCH_SUFFIX}{FAMILY_SUFFIX}]?)$")


def ptx_target(target):
    """The first sm_N[a|f] of a .target directive's list ("sm_90a, debug" -> "sm_90a"), or None."""
    return next((x.strip() for x in (target or "").split(",") if _PTX_TARGET.match(x.strip())), None)


def check_ptx_target(target, arch):
    """Refuse what the CUDA driver refuses to load: PTX of `.target target` on a GPU of `arch`."""
    t = ptx_target(target)
    if t is None:
        return
    n, suffix = _PTX_TARGET.match(t).groups()
    n, have = int(n), int(arch.split("_")[1])
    base = f"sm_{n}"
    if suffix == ARCH_SUFFIX and have != n:
        raise LayoutsimError(f"PTX .target {t} cannot be loaded on {arch}: arch-specific PTX runs on "
                             f"{base} only (give arch {base})")
    if suffix == FAMILY_SUFFIX and (have < n or have // 10 != n // 10):
        raise LayoutsimError(f"PTX .target {t} cannot be loaded on {arch}: family-specific PTX runs on "
                             f"{base} and later archs of its family only")
    if have < n:
        raise LayoutsimError(f"PTX .target {t} cannot be loaded on {arch}: the CUDA driver refuses PTX for "
                             f"a newer arch (give arch {base} or later)")


def ptxas_arch(target, arch):
    """ptxas's -arch for PTX of `.target target` run on `arch`: the PTX's own target when it is that
    arch's arch- or family-specific one (ptxas refuses to build sm_90a PTX for plain sm_90), else arch."""
    t = (target or "").split(",")[0].strip()
    return t if t[:-1] == arch and t[-1:] in (ARCH_SUFFIX, FAMILY_SUFFIX) else arch
