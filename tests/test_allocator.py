"""The allocator tuning (tinyalgo.host.allocator): keep_freed_memory() asks glibc's
mallopt to keep freed memory and to serve large arrays from the heap, once per
process, and does nothing (returns False) where the C library has no mallopt."""
import ctypes
import os
import platform
import subprocess
import sys

import pytest

from tinyalgo.host import allocator as memory
from tinyalgo.host.allocator import keep_freed_memory

MIB = 2 ** 20
GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


class FakeLibc:
    """A C library whose mallopt records its calls and answers ``answer``."""

    def __init__(self, answer=1):
        self.calls, self.answer = [], answer

    def mallopt(self, option, value):
        self.calls.append((option, value))
        return self.answer


@pytest.fixture
def fresh(monkeypatch):
    """A process in which keep_freed_memory() has not yet succeeded."""
    monkeypatch.setattr(memory, "_done", False)
    return monkeypatch


def use_libc(monkeypatch, libc):
    monkeypatch.setattr(ctypes, "CDLL", lambda name, *args, **kwargs: libc)


def test_the_three_settings_are_asked_for_in_bytes(fresh):
    libc = FakeLibc()
    use_libc(fresh, libc)
    assert keep_freed_memory(trim_mib=100, mmap_mib=20, pad_mib=5) is True
    # glibc's malloc.h: M_TRIM_THRESHOLD -1, M_TOP_PAD -2, M_MMAP_THRESHOLD -3
    assert sorted(libc.calls) == sorted([(-1, 100 * MIB), (-3, 20 * MIB), (-2, 5 * MIB)])
    assert dict(libc.calls)[memory.M_TRIM_THRESHOLD] == 100 * MIB


def test_the_defaults_keep_256_mib_and_serve_arrays_below_32_mib_from_the_heap(fresh):
    libc = FakeLibc()
    use_libc(fresh, libc)
    assert keep_freed_memory() is True
    assert dict(libc.calls) == {-1: 256 * MIB, -3: 32 * MIB, -2: 16 * MIB}


def test_once_applied_later_calls_change_nothing(fresh):
    libc = FakeLibc()
    use_libc(fresh, libc)
    assert keep_freed_memory() is True
    assert keep_freed_memory(trim_mib=1) is True and len(libc.calls) == 3


def test_a_refused_setting_returns_false_and_the_next_call_tries_again(fresh):
    libc = FakeLibc(answer=0)                  # mallopt returns 0 on error
    use_libc(fresh, libc)
    assert keep_freed_memory() is False
    libc.answer = 1
    assert keep_freed_memory() is True and len(libc.calls) >= 4


class NoMallopt:
    """A C library without mallopt (musl, macOS's libSystem)."""


def test_a_libc_without_mallopt_is_a_no_op(fresh):
    use_libc(fresh, NoMallopt())
    assert keep_freed_memory() is False
    assert memory._done is False


def test_no_c_library_at_all_is_a_no_op(fresh):
    def missing(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")
    fresh.setattr(ctypes, "CDLL", missing)
    assert keep_freed_memory() is False


# A fresh process (this one may already have raised glibc's dynamic mmap
# threshold): optionally tune, then allocate and free an 8 MiB array; print
# whether it was mmapped, whether the heap shrank when it was freed.
PROBE = """
import ctypes, sys
import numpy as np
from tinyalgo.host.allocator import keep_freed_memory

class MallInfo2(ctypes.Structure):      # glibc's struct mallinfo2 (glibc >= 2.33)
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc = ctypes.CDLL("libc.so.6")
if not hasattr(libc, "mallinfo2"):
    print("no mallinfo2")
    sys.exit()
libc.mallinfo2.restype = MallInfo2
applied = keep_freed_memory() if sys.argv[1] == "tune" else None
before = libc.mallinfo2()
array = np.ones(2 ** 20)                # 8 MiB
during = libc.mallinfo2()
del array
after = libc.mallinfo2()
print(applied, during.hblkhd - before.hblkhd, after.arena - during.arena)
"""


def probe(mode):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, check=True)
    if done.stdout.startswith("no mallinfo2"):
        pytest.skip("glibc older than 2.33: no mallinfo2")
    applied, mmapped, shrunk = done.stdout.split()
    return applied, int(mmapped), int(shrunk)


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's; elsewhere keep_freed_memory() is a documented no-op")
def test_glibc_applies_them():
    """Untuned, glibc gives an 8 MiB array its own mmap and unmaps it when
    freed; after keep_freed_memory() it comes from the heap, which keeps it."""
    applied, mmapped, shrunk = probe("default")
    assert applied == "None" and mmapped >= 8 * MIB and shrunk == 0     # unmapped when freed: the heap never had it
    applied, mmapped, shrunk = probe("tune")
    assert applied == "True"
    assert mmapped == 0, "the array was mmapped: M_MMAP_THRESHOLD not applied"
    assert shrunk == 0, "the heap was trimmed: M_TRIM_THRESHOLD not applied"
