"""The device heap of in-kernel malloc/free (CUDA C++ Programming Guide, 'Dynamic Global Memory
Allocation and Operations'): a launch whose kernel calls malloc gets one global buffer of
HEAP_BYTES, the default of cudaLimitMallocHeapSize (8 MiB: the Guide's 'Heap Memory Allocation'),
from which malloc hands out blocks aligned to 16 bytes (the Guide: 'guaranteed to be aligned to a
16-byte boundary'), returns NULL when no free range is large enough, and free returns a block to
the heap (free(NULL) does nothing).

The block placement is first fit in address order, with no bookkeeping inside the heap: the
driver's allocator places blocks elsewhere and keeps headers, so a kernel that nearly fills the
heap may get NULL a little earlier on the GPU. Blocks live until freed or the launch ends; an
access past a block but inside the heap is not a fault (as on the GPU without compute-sanitizer).
"""
import bisect

HEAP_BYTES = 8 << 20        # cudaLimitMallocHeapSize default
ALIGN = 16                  # every block starts on a 16-byte boundary


class DeviceHeap:
    """First-fit allocator over [base, base + size) (generic addresses)."""

    def __init__(self, base, size=HEAP_BYTES):
        self.base, self.size = int(base), int(size)
        self.free_list = [(self.base, self.size)]   # (start, bytes), sorted by start, coalesced
        self.blocks = {}                            # start -> bytes of every live block

    def malloc(self, n):
        """The address of a new block of at least n bytes, or 0 (NULL) when none fits."""
        need = max(ALIGN, -(-int(n) // ALIGN) * ALIGN)
        for i, (start, size) in enumerate(self.free_list):
            if size >= need:
                if size == need:
                    del self.free_list[i]
                else:
                    self.free_list[i] = (start + need, size - need)
                self.blocks[start] = need
                return start
        return 0

    def free(self, p):
        """Release the block at p; False when p is no live block's start (the caller faults)."""
        p = int(p)
        if p == 0:
            return True
        size = self.blocks.pop(p, None)
        if size is None:
            return False
        i = bisect.bisect(self.free_list, (p, 0))
        self.free_list.insert(i, (p, size))
        if i + 1 < len(self.free_list) and p + size == self.free_list[i + 1][0]:      # join the next range
            self.free_list[i] = (p, size + self.free_list.pop(i + 1)[1])
        if i > 0 and sum(self.free_list[i - 1]) == p:                                # join the previous one
            prev = self.free_list[i - 1]
            self.free_list[i - 1] = (prev[0], prev[1] + self.free_list.pop(i)[1])
        return True
