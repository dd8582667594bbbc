"""Work split over Python threads, for compiled (numba, nogil) functions that release the GIL.

numba's parallel=True would compile a parfor driver per kernel on top of the chunk function
(measured: 4.6 s of a 16 s first layoutsim.mma call, 2-3 s of the bank engine's), so both the
tensor-core arithmetic and the bank engine split a batch here instead.
"""
from concurrent.futures import ThreadPoolExecutor

_POOLS = {}


def in_chunks(n, fn, threads, name="layoutsim"):
    """fn(lo, hi) over items 0..n-1 on `threads` threads: 8 chunks per thread, which this thread
    and threads - 1 pool threads take in turn (one task per thread: a future per chunk cost 13 us
    and a GIL hand-over each). One call on this thread when threads <= 1."""
    if threads <= 1 or n <= 1:
        fn(0, n)
        return
    pool = _POOLS.get(threads)
    if pool is None:
        pool = _POOLS[threads] = ThreadPoolExecutor(threads - 1, thread_name_prefix=name)
    chunks = min(n, 8 * threads)
    taken = iter(range(chunks))              # next() on it is atomic under the GIL

    def work():
        for c in taken:
            fn(c * n // chunks, (c + 1) * n // chunks)
    others = [pool.submit(work) for _ in range(threads - 1)]
    try:
        work()
    finally:
        for f in others:
            f.result()
