"""The allocator tuning is safe to call repeatedly and never changes results."""
import numpy as np

from tinyalgo.memory import keep_freed_memory


def test_keep_freed_memory_is_idempotent_and_harmless():
    first = keep_freed_memory()
    assert keep_freed_memory() == first          # applied once; a second call changes nothing
    a = np.arange(10 ** 6, dtype=np.float64)    # allocations still work and give the same numbers
    assert a.sum() == (10 ** 6 - 1) * 10 ** 6 / 2
