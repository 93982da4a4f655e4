"""The allocator tuning (tinyalgo.fast.memory): where glibc is present, memory freed
after a rollout is reused by the next one instead of being faulted back in."""
import platform
import resource

import numpy as np
import pytest

from tinyalgo.fast.memory import keep_freed_memory


def churn():
    """What a rollout does to the heap: many step-sized arrays, all freed at once."""
    keep = [np.ones(10_000) for _ in range(200)]       # 200 x 80 KB = 16 MB
    del keep


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's; elsewhere keep_freed_memory() is a documented no-op")
def test_freed_memory_is_reused_without_page_faults():
    assert keep_freed_memory() is True
    assert keep_freed_memory() is True                  # idempotent
    churn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        churn()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 1000, f"{faults} page faults re-allocating 16 MB five times (untuned glibc: ~19,000)"
