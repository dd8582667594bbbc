"""AMD RDNA3 (gfx11) / RDNA4 (gfx12) global and buffer accesses of a wave32, from documents.

NOT VERIFIED ON HARDWARE: no AMD GPU was available to this project, and AMD documents no
per-instruction request counter the way Nsight Compute does. What the documents say:
  * Vector memory instructions go through a per-CU vector L0 cache (GL0, counters TCP_*), then
    the shader array's GL1 and the GL2 (LLVM AMDGPUUsage, "Memory Model GFX10-GFX11" and
    "GFX12"); the RDNA caches use 128-byte lines (AMD "RDNA Architecture" whitepaper, 2019,
    "cache line size of 128 bytes").
  * GL0 misses go to GL1 as read requests of 64 bytes or of 128 bytes (rocprofiler-compute,
    RDNA "GL0 (TCP)" counters TCP_GL1_REQ_READ and its subset TCP_GL1_REQ_READ_128B).
The model therefore counts, for the active lanes: requests = distinct 128-byte lines (one tag
per line), sectors = distinct 64-byte halves of those lines (the smaller request size), ideal =
the 64-byte units the requested bytes would fill. Which request size the hardware picks for a
partly used line is not documented: this is an assumption, and says so wherever it is printed.
"""
SECTOR = 64
LINE = 128
UNVERIFIED = "unverified on hardware: from AMD documents only, no AMD GPU has been used"
SOURCE = ("AMD RDNA whitepaper (128-byte cache lines); rocprofiler-compute RDNA GL0/TCP counters "
          "(64- and 128-byte GL1 requests); LLVM AMDGPUUsage memory model GFX10-GFX12")
RULE = ("requests = distinct 128-B lines touched; sectors = distinct 64-B halves (the smaller GL1 "
        "request); ideal = ceil(active lanes x width / 64)")
