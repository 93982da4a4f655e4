"""The memory estimates of the commands, checked before any work starts: a
request that would exhaust what this process can get (complexity 10^12,
10^9 instances, 10^7 units) is refused with its estimate instead of ending in
a MemoryError or the kernel's OOM killer.  The estimates live where the
memory is allocated (``tinyalgo.environment.memory_bytes``,
``tinyalgo.controller.memory_bytes``); the check and the limits are
``tinyalgo.host.memory``'s."""
from __future__ import annotations

from tinyalgo.controller import memory_bytes as controller_bytes  # noqa: F401  (the commands' names for them)
from tinyalgo.environment import memory_bytes as environment_bytes  # noqa: F401
from tinyalgo.host.memory import check_memory, human  # noqa: F401
