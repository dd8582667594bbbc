"""packing's item path (8/16/32-bit elements gathered as whole items of the register words'
bytes) gives exactly what its general path (shift and mask per element) gives, for every
fragment of every catalog instruction that takes it: unpack of random words, and pack of the
matrices back (no vendor figure: the two paths of one function must agree bit for bit)."""
import numpy as np

from layoutsim import packing as P
from layoutsim.isa.registry import _built, all_entries


def _fragments():
    seen = set()
    for e in all_entries():
        try:
            ins = _built(e)
        except Exception:             # entries whose build needs an arch: their fragments recur elsewhere
            continue
        for k in "ABCD":
            try:
                frag = ins.operand(k).fragment
            except Exception:
                continue
            if frag is not None and id(frag) not in seen:
                seen.add(id(frag))
                yield e.name, k, frag


def test_item_path_equals_general_path():
    rng = np.random.default_rng(0)
    on_path = 0
    for name, k, frag in _fragments():
        p = P.fragment_index(frag)
        if not p.items:
            continue
        on_path += 1
        words = rng.integers(0, 1 << 32, (3, frag.lanes, P.words_per_lane(frag)), dtype=np.uint64).astype(np.uint32)
        try:
            fast, fast_mats = P.unpack(frag, words), None
            p.items = False
            slow = P.unpack(frag, words)
            slow_words = P.pack(frag, slow)
            p.items = True
            fast_mats = P.pack(frag, slow)
        finally:
            p.items = True
        assert fast.dtype == slow.dtype and np.array_equal(fast, slow), (name, k)
        assert fast_mats.dtype == slow_words.dtype and np.array_equal(fast_mats, slow_words), (name, k)
    assert on_path > 100
