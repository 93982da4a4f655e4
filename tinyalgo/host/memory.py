"""The memory this process can still allocate, and the one check every size
goes through before any work starts.

A request is compared with the least of three limits: the memory the system
has available (``MemAvailable`` of /proc/meminfo, or the physical memory
where that is unknown), the address space ``RLIMIT_AS`` leaves this process
(its limit minus what it has mapped), and the cgroup's limit minus its usage
(cgroup v2 ``memory.max``, or v1 ``memory.limit_in_bytes``).  Estimates are
upper bounds of the largest allocations (the callers say how they count).
"""
from __future__ import annotations

import os

try:
    import resource
except ImportError:                     # not on Windows: no address-space limit to read
    resource = None


class MemoryRequestError(ValueError):
    """A size that would need more memory than this process can get."""


def human(n: float) -> str:
    """``n`` bytes in the largest unit below 1024 of it (bytes, KiB, ..., EiB)."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f}"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _meminfo(field: str) -> int:
    """A field of /proc/meminfo in bytes, 0 if unknown."""
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _system_available() -> int:
    available = _meminfo("MemAvailable")
    if available:
        return available
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def _address_space_left() -> int:
    """RLIMIT_AS minus this process's mapped memory (VmSize); 0 if unlimited or unknown."""
    if resource is None:
        return 0
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return 0
    mapped = 0
    for line in _read("/proc/self/status").splitlines():
        if line.startswith("VmSize:"):
            mapped = int(line.split()[1]) * 1024
    return max(soft - mapped, 1)


def _cgroup_left() -> int:
    """The cgroup's memory limit minus its usage (v2, then v1); 0 if unlimited or unknown."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit = _read(limit_file).strip()
        if limit and limit != "max" and limit.isdigit() and int(limit) < 2 ** 60:
            usage = _read(usage_file).strip()
            return max(int(limit) - (int(usage) if usage.isdigit() else 0), 1)
    return 0


def available() -> tuple:
    """(bytes this process can still allocate, what limits it): the least of
    the limits of the module doc; (0, "unknown") if none can be read."""
    limits = [(n, why) for n, why in ((_system_available(), "the memory available on this machine"),
                                       (_address_space_left(), "the address space RLIMIT_AS leaves this process"),
                                       (_cgroup_left(), "the memory its cgroup leaves it")) if n]
    return min(limits) if limits else (0, "unknown")


def check_memory(parts, limit: tuple | None = None) -> None:
    """``parts``: [(bytes, what, why)], the estimated allocations of one
    request (``what``: the option or argument and its value).  A
    MemoryRequestError naming the largest part if their sum exceeds what this
    process can get (``limit``: (bytes, reason), default ``available()``)."""
    total, reason = available() if limit is None else limit
    need = sum(b for b, _, _ in parts)
    if total and need > total:
        size, what, why = max(parts, key=lambda p: p[0])
        raise MemoryRequestError(f"{what} needs about {human(need)} of memory ({why}: {human(size)}),"
                                 f" more than {reason} ({human(total)}); choose a smaller value")
