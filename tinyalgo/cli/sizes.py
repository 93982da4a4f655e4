"""Memory estimates of the commands, checked before any work starts: a
request that would exhaust the machine's memory (complexity 10^12, 10^9
instances, 10^7 units) is refused with its estimate instead of ending in a
MemoryError or the kernel's OOM killer.

The estimates are upper bounds of the largest allocations, not exact counts:

- an environment draws its instances ahead into a pool (``Environment``:
  64 x batch, at least 1024, of complexity up to 1000; batch of longer ones)
  and needs about ``ENV_BYTES_PER_CELL`` bytes per complexity unit of each
  pooled instance while it draws them;
- a controller holds its parameters, their gradients and a copy (the best or
  boundary model), and per lane-step of a rollout the caches of every layer
  (``CACHE_ARRAYS`` arrays of ``units`` numbers per layer).
"""
from __future__ import annotations

import os

from tinyalgo.lanes import pool_size

ENV_BYTES_PER_CELL = 100          # measured peak: 40-70 bytes per complexity unit of a drawn instance
LANE_BYTES = 256                  # per lane: positions, clocks, targets' bookkeeping
CACHE_ARRAYS = {"ff": 0, "gru": 12, "lstm": 16}
PARAM_COPIES = 4                  # parameters, gradients, a boundary copy and the best model's


def machine_memory() -> int:
    """The machine's physical memory in bytes (0 if unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def human(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f}"


def environment_bytes(batch: int, complexity: int) -> int:
    """An environment of ``batch`` lanes drawing instances of ``complexity``."""
    pool = pool_size(batch, batch, complexity, rows=3)
    return pool * complexity * ENV_BYTES_PER_CELL + batch * LANE_BYTES


def controller_bytes(units: int, layers: int, core: str, batch: int, steps: int, itemsize: int = 4) -> int:
    """A controller's parameters (x ``PARAM_COPIES``) and a rollout's caches of ``batch`` lanes x ``steps``."""
    per_layer = {"ff": 0, "gru": 3, "lstm": 4}[core] * 2 * units * units
    params = (per_layer * layers + units * units + 64 * units) * itemsize
    caches = batch * steps * units * (CACHE_ARRAYS[core] * max(layers, 1) + 6) * itemsize
    return PARAM_COPIES * params + caches


def check_memory(parts, total: int = None) -> None:
    """``parts``: [(bytes, what, why)]; a ValueError naming the largest part
    (``what``: the option and its value) if their sum exceeds the machine's
    memory."""
    total = machine_memory() if total is None else total
    need = sum(b for b, _, _ in parts)
    if total and need > total:
        size, what, why = max(parts, key=lambda p: p[0])
        raise ValueError(f"{what} needs about {human(need)} of memory ({why}: {human(size)}),"
                         f" more than this machine's {human(total)}; choose a smaller value")
