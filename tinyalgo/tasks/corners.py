"""Corner instances: the boards that random instances almost never draw.

Random digits rarely make long carry chains, all-maximal columns or a
column of zeros with no carry in, yet a controller that generalises must
handle them at every length.  ``corner_instances`` builds them from
explicit digits (each task's ``build``): for the tape tasks all maximal
digits and all zeros; for addition a carry chain 9...9 + 1, all maximal
digits and all zeros; for 3-number addition 9...9 + 1 + 0, all maximal and
all zeros; for multiplication 9...9 x 2, 9...9 x 9 and 0...0 x 9 (9 being
the base's largest digit).  Walk has none: its digits are the board's
random fill.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.tasks.instances import Instances, concatenate
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import make_task


def corner_instances(task_name: str, digits: int, base: int = 10) -> dict:
    """{name: Instances (one instance)} of ``digits`` digits for ``task_name``; {} for walk."""
    if digits < 1:
        raise ValueError(f"corner instances need at least one digit; got {digits}")
    task, top, L = make_task(task_name, base, extra_curriculum=False), base - 1, int(digits)
    one = np.zeros(L, dtype=np.int64)
    one[0] = 1
    nines, zeros = np.full(L, top), np.zeros(L, dtype=np.int64)
    name = task.name
    if name in ("copy", "reverse"):
        n = np.array([L])
        return {"all maximal": task.build(nines[None], n, np.zeros(1, np.int64)),
                "all zeros": task.build(zeros[None], n, np.zeros(1, np.int64))}
    if name == "addition":
        return {f"carry chain {top}...{top} + 1": task.build(np.stack([nines, one])[None], [L]),
                "all maximal": task.build(np.stack([nines, nines])[None], [L]),
                "all zeros": task.build(np.stack([zeros, zeros])[None], [L])}
    if name == "addition3":
        return {f"carry chain {top}...{top} + 1 + 0": task.build(np.stack([nines, one, zeros])[None], [L]),
                "all maximal": task.build(np.stack([nines, nines, nines])[None], [L]),
                "all zeros": task.build(np.stack([zeros, zeros, zeros])[None], [L])}
    if name == "multiplication":
        return {f"carry chain {top}...{top} x 2": task.build(nines[None], [2], [L]),
                f"all maximal ({top}...{top} x {top})": task.build(nines[None], [top], [L]),
                f"all zeros x {top}": task.build(zeros[None], [top], [L])}
    return {}


def corner_batch(task_name: str, digit_counts, base: int = 10) -> Instances | None:
    """Every corner instance of ``task_name`` at each number of digits in
    ``digit_counts``, as one batch; None where the task has none (walk)."""
    parts = [inst for L in digit_counts for inst in corner_instances(task_name, int(L), base).values()]
    return concatenate(parts, Vocabulary(base).NONE) if parts else None
