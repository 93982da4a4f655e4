"""A helper thread for the fast BPTT (``Controller.set_threads(2)``): work
that the backward recursion does not wait for runs beside it on a second
core, NumPy releasing the GIL inside BLAS."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

_helper = (None, None)          # (the process that made it, the pool): a forked child makes its own


class Now:
    """The result of a call made at once (what a helper thread's future gives later)."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def submitter(threads: int):
    """submit(f, *args) -> an object with .result(): on the helper thread if
    threads > 1, else computed at once."""
    global _helper
    if threads == 1:
        return lambda f, *args: Now(f(*args))
    if _helper[0] != os.getpid():
        _helper = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="tinyalgo-bptt"))
    return _helper[1].submit
