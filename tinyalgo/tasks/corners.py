"""Corner instances: the boards that random instances almost never draw.

Random digits rarely make long carry chains, all-maximal columns or a
column of zeros with no carry in, yet a controller that generalises must
handle them at every length.  ``corner_instances`` asks the task
(``Task.corners``, built from explicit digits): for the tape tasks all maximal
digits and all zeros; for addition a carry chain 9...9 + 1, all maximal
digits and all zeros; for 3-number addition 9...9 + 1 + 0, all maximal and
all zeros; for multiplication 9...9 x 2, 9...9 x 9 and 0...0 x 9 (9 being
the base's largest digit).  Walk has none: its digits are the board's
random fill.
"""
from __future__ import annotations


from tinyalgo.tasks.instances import Instances, concatenate
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import make_task


def corner_instances(task_name: str, digits: int, base: int = 10) -> dict:
    """{name: Instances (one instance)} of ``digits`` digits for ``task_name``
    (each task's ``corners``); {} for walk."""
    if digits < 1:
        raise ValueError(f"corner instances need at least one digit; got {digits}")
    return make_task(task_name, base, extra_curriculum=False).corners(int(digits))


def corner_batch(task_name: str, digit_counts, base: int = 10) -> Instances | None:
    """Every corner instance of ``task_name`` at each number of digits in
    ``digit_counts``, as one batch; None where the task has none (walk)."""
    parts = [inst for L in digit_counts for inst in corner_instances(task_name, int(L), base).values()]
    return concatenate(parts, Vocabulary(base).NONE) if parts else None
