"""The six tasks of the paper (section 3 and Figure 2; docs/original-release.md#tasks).

Each task is a small class that says how to lay out an instance, what its
targets are, and which ground-truth actions solve it; ``sample`` draws a
batch of instances, ``build`` makes them from explicit digits (for canned
instances and tests).  Every task takes a ``base`` in 2..10 (Appendix B).

Invalid task/base pairs: single-digit multiplication and 3-number addition in
base 2 (no multiplier digit >= 2; a final carry of 2 is not a binary digit).

Joint actions (docs/original-release.md#interfaces): ``action = move + n_moves * write`` with moves
0 left, 1 right (tape) and also 2 down, 3 up (grid); write 0 no, 1 yes.

=================  ===========  ======  ====================================
task               interface    factor  complexity of one instance
=================  ===========  ======  ====================================
copy               tape         1       c (c digits)
reverse            tape         2       2n + 1 (n = c // 2 digits)
walk               grid         1       c + 2
addition           grid         2       2L (two L-digit numbers)
addition3          grid         3       3L (three L-digit numbers; see Addition3)
multiplication     grid         1       L + 2 (an L-digit number times m)
=================  ===========  ======  ====================================
"""
from __future__ import annotations

from tinyalgo.tasks.arithmetic import Addition, Addition3, Multiplication
from tinyalgo.tasks.base import DOWN, LEFT, MOVE_NAMES, RIGHT, UP, Task
from tinyalgo.tasks.tape import Copy, Reverse
from tinyalgo.tasks.walk import Walk

__all__ = ["TASKS", "ALIASES", "make_task", "Task", "MOVE_NAMES", "LEFT", "RIGHT", "DOWN", "UP", "Copy", "Reverse",
           "Walk", "Addition", "Addition3", "Multiplication"]

TASKS = {t.name: t for t in (Copy, Reverse, Walk, Addition, Addition3, Multiplication)}
ALIASES = {"3-number-addition": "addition3", "add3": "addition3", "single_mul": "multiplication",
           "mul": "multiplication", "add": "addition"}


def make_task(name: str, base: int = 10, **options) -> Task:
    """The task called ``name`` in base ``base`` (ValueError if unknown or invalid)."""
    cls = TASKS.get(ALIASES.get(name, name)) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown task {name!r}; allowed: {', '.join(TASKS)}")
    return cls(base, **options)
