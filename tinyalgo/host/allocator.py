"""Keep freed memory in the process between rollouts (Linux, glibc only).

A BPTT rollout keeps every step's cache alive until the backward pass, a few
MiB of small arrays, and frees them all at once.  By default glibc hands freed
memory at the top of the heap back to the operating system as soon as more
than 128 KiB is free, so the next rollout touches fresh pages again, and
each page touched for the first time is a page fault.

``keep_freed_memory()`` asks glibc (``mallopt``) to keep up to ``trim_mib``
of freed memory and to serve arrays below ``mmap_mib`` from the heap.  It
changes the process's allocator, so the library never calls it: ``tinyalgo
train`` and the benchmarks do.  It changes nothing but speed, and it does
nothing where glibc is absent (macOS, Windows, musl).
"""
from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3   # glibc's malloc.h
_done = False


def keep_freed_memory(trim_mib: int = 256, mmap_mib: int = 32, pad_mib: int = 16) -> bool:
    """Tune glibc's allocator once per process; True if it was applied."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mib = 2 ** 20
    ok = all(mallopt(option, value * mib) == 1 for option, value in
             ((M_TRIM_THRESHOLD, trim_mib), (M_MMAP_THRESHOLD, mmap_mib), (M_TOP_PAD, pad_mib)))
    _done = ok
    return ok
