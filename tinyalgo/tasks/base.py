"""What every task is: ``Task``, the base class of the six (paper section 3),
and the moves of the joint actions."""
from __future__ import annotations

import numpy as np

from tinyalgo.tasks.instances import Instances, lengths_mask
from tinyalgo.symbols import Vocabulary, check_base

LEFT, RIGHT, DOWN, UP = 0, 1, 2, 3
MOVE_NAMES = ("left", "right", "down", "up")


class Task:
    """Base class; subclasses set the class attributes and ``sample``."""

    name = ""
    interface = "grid"       # "tape" (2 moves) or "grid" (4 moves)
    rows = 1                 # rows with defined cells
    fill = "random"          # board.FILLS
    q_column = False
    factor = 1               # the paper's conversion factor to complexity
    min_complexity = 1
    min_base = 2
    min_base_reason = ""     # why a smaller base does not work, for the error message
    has_extra_curriculum = False   # whether ``extra_curriculum`` changes what ``sample`` draws
    q_from_clock = False     # the task's own end rule: from each instance's ``clock`` step on, every cell reads q

    def __init__(self, base: int = 10, extra_curriculum: bool = True):
        """``extra_curriculum``: the release's extra curriculum of easy
        instances while training short ones, for a task that has one
        (``has_extra_curriculum``: 3-number addition); on for training, off
        at test.  Every task takes it, so that callers need not ask which."""
        base = check_base(base)
        if base < self.min_base:
            raise ValueError(f"task {self.name!r} needs a base of at least {self.min_base}; got base {base}"
                             + (f" ({self.min_base_reason})" if self.min_base_reason else ""))
        self.base = base
        self.extra_curriculum = bool(extra_curriculum) and self.has_extra_curriculum
        self.vocab = Vocabulary(base)
        self.n_moves = 2 if self.interface == "tape" else 4
        self.n_actions = 2 * self.n_moves

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base={self.base})"

    def action(self, move, write):
        """Joint action index of (move, write)."""
        return np.asarray(move) + self.n_moves * np.asarray(write)

    def check_complexities(self, complexities) -> np.ndarray:
        c = np.asarray(complexities)
        if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer):
            raise ValueError(f"complexities must be a 1-D integer array; got {c!r}")
        if c.size and c.min() < self.min_complexity:
            raise ValueError(f"complexity must be at least {self.min_complexity} for task {self.name!r};"
                             f" got {int(c.min())}")
        return c.astype(np.int64)

    def sample(self, rng: np.random.Generator, complexities, level=None, low_accuracy=False) -> Instances:
        """Draw one instance per requested complexity (k,) with ``rng``.

        ``level`` (the curriculum's current complexity) and ``low_accuracy``
        only matter for the 3-number addition extra curriculum.
        """
        raise NotImplementedError

    def _keys(self, rng, k):
        return rng.integers(0, 2 ** 40, size=k, dtype=np.int64)


def _pad_actions(seq_len: np.ndarray, width: int, table: np.ndarray) -> np.ndarray:
    """Mask ``table`` (k, width) of actions to -1 beyond each ``seq_len``."""
    return np.where(lengths_mask(seq_len, width), table, -1).astype(np.int64)
