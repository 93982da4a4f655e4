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
    complexity_rule = ""     # how a requested complexity c becomes an instance (why its complexity can differ)
    min_base = 2
    min_base_reason = ""     # why a smaller base does not work, for the error message
    has_extra_curriculum = False   # whether ``extra_curriculum`` changes what ``sample`` draws
    q_from_clock = False     # the task's own end rule: from each instance's ``clock`` step on, every cell reads q
    number_rows = ()         # rows y holding the instance's numbers of n digits; none: its digits are the fill (walk)

    def __init__(self, base: int = 10, *, extra_curriculum: bool = True):
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

    # ------------------------------------------------ instances by length
    # The length of an instance is the number of digits of its numbers (walk:
    # the distance d from the start to the arrow).  Exhaustive checks and
    # counterexamples (tinyalgo/automata) ask for instances of one length.

    def length(self, instances: Instances) -> np.ndarray:
        """The length (k,) of each instance."""
        raise NotImplementedError

    def length_from_end(self, x: int) -> int:
        """The length of an instance whose input ends at column ``x`` (the
        first cell past its digits in reading order: copy's ``q``,
        reverse's ``p``, walk's arrow, all at x = 1 + n)."""
        return x - 1

    def digit_cell(self, n: int, row: int, j: int) -> tuple:
        """The position (x, y) of digit j (in reading order) of the number on ``row``, at length n."""
        raise NotImplementedError

    def target_source(self, n: int, j: int, arrow=None):
        """Where target j comes from at length n: the cell (x, y) it copies,
        (x, None) for a column that makes it, None if unknown."""
        raise NotImplementedError

    @property
    def n_multipliers(self) -> int:
        """How many choices of parameters an instance has besides its numbers (multiplication: m)."""
        return 1

    def count_of_length(self, n: int):
        """How many instances of length n there are: base^(rows x n) boards
        times ``n_multipliers``; None where the digits are the fill (walk)."""
        if not self.number_rows:
            return None
        return self.base ** (len(self.number_rows) * n) * self.n_multipliers

    def of_digits(self, digits, n: int, multipliers=None, keys=None) -> Instances:
        """Instances of length n from ``digits`` (k, len(number_rows), n), each row's
        number in reading order; ``multipliers`` (k,) where the task has
        them, ``keys`` (k,) of the random fill (default 0)."""
        raise NotImplementedError

    def numbered(self, n: int, numbers) -> Instances:
        """The instances of length n numbered ``numbers`` (k,), each below
        ``count_of_length(n)``: a number's base-``base`` digits, and its
        choice of parameters ``number // base^(rows x n)`` (``n_multipliers``)."""
        numbers = np.asarray(numbers, dtype=np.int64)
        rows, k = len(self.number_rows), len(numbers)
        boards = self.base ** (rows * n)
        grid = np.stack(np.unravel_index(numbers % boards, (self.base,) * (rows * n)), axis=1)     # (k, rows * n)
        return self.of_digits(grid.reshape(k, rows, n), n, multipliers=self._multipliers(numbers // boards),
                              keys=np.zeros(k, dtype=np.int64))

    def random_of_length(self, rng: np.random.Generator, n: int, keys) -> Instances:
        """len(keys) random instances of length n, with random keys ``keys``."""
        k = len(keys)
        digits = rng.integers(0, self.base, size=(k, len(self.number_rows), n))
        return self.of_digits(digits, n, multipliers=self._random_multipliers(rng, k), keys=keys)

    def _multipliers(self, choices):
        """The parameters (k,) numbered ``choices`` (k,) in 0..n_multipliers-1; None without parameters."""
        return None

    def _random_multipliers(self, rng, k):
        return None

    def corners(self, n: int) -> dict:
        """{name: Instances (one)} of the boards of length n that random
        instances almost never draw (``tasks.corners``); none by default."""
        return {}


def _pad_actions(seq_len: np.ndarray, width: int, table: np.ndarray) -> np.ndarray:
    """Mask ``table`` (k, width) of actions to -1 beyond each ``seq_len``."""
    return np.where(lengths_mask(seq_len, width), table, -1).astype(np.int64)
