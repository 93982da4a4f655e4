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

import numpy as np

from tinyalgo.board import random_digits
from tinyalgo.instances import NO_CLOCK, Instances, add_digits, lengths_mask, multiply_digits
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

    def __init__(self, base: int = 10):
        base = check_base(base)
        if base < self.min_base:
            why = {"multiplication": "there is no multiplier digit >= 2 in base 2",
                   "addition3": "the last carry of three numbers can be 2, not a digit in base 2"}.get(self.name, "")
            raise ValueError(f"task {self.name!r} needs a base of at least {self.min_base}; got base {base}"
                             + (f" ({why})" if why else ""))
        self.base = base
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


class Copy(Task):
    """Copy the c digits of the input tape (paper section 3, Figure 2; a tape: docs/original-release.md#bug-copy-tape)."""

    name, interface, fill, factor, min_complexity = "copy", "tape", "random", 1, 1

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        c = self.check_complexities(complexities)
        digits = rng.integers(0, self.base, size=(len(c), max(c.max(initial=0), 1)))
        return self.build(digits, c, self._keys(rng, len(c)))

    def build(self, digits, lengths, keys):
        """digits (k, n) left to right, lengths (k,), keys (k,)."""
        digits, n = np.asarray(digits, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        k, width = len(n), int(n.max()) + 1
        digits = np.pad(digits, ((0, 0), (0, width - digits.shape[1])))[:, :width]
        col = np.arange(width)[None, :]
        cells = np.where(col < n[:, None], digits, np.where(col == n[:, None], self.vocab.Q, -1))
        targets = np.where(col[:, :-1] < n[:, None], digits[:, :-1], self.vocab.NONE)
        actions = _pad_actions(n, width - 1, np.full((k, width - 1), self.action(RIGHT, 1)))
        return Instances(cells[:, None, :], np.ones(k, np.int64), keys, targets, n.copy(),
                         n.copy(), actions, n.copy(), np.full(k, NO_CLOCK))


class Reverse(Task):
    """Reverse the n = c // 2 digits left of the marker ``p`` (docs/original-release.md#reverse)."""

    name, interface, fill, factor, min_complexity = "reverse", "tape", "random", 2, 2

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        n = self.check_complexities(complexities) // 2
        digits = rng.integers(0, self.base, size=(len(n), n.max(initial=1)))
        return self.build(digits, n, self._keys(rng, len(n)))

    def build(self, digits, lengths, keys):
        """digits (k, n) left to right (x = 1..n), lengths n (k,), keys (k,)."""
        digits, n = np.asarray(digits, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        k, nmax, v = len(n), int(n.max()), self.vocab
        digits = np.pad(digits, ((0, 0), (0, nmax - digits.shape[1])))[:, :nmax]
        col = np.arange(nmax + 3)[None, :]           # x = col, from x0 = 0
        inner = np.pad(digits, ((0, 0), (1, 2)))
        cells = np.where(col == 0, v.Q, np.where(col <= n[:, None], inner,
                         np.where(col <= n[:, None] + 2, v.P, -1)))
        j = np.arange(nmax)[None, :]
        rev_idx = np.clip(n[:, None] - 1 - j, 0, nmax - 1)
        targets = np.where(j < n[:, None], np.take_along_axis(digits, rev_idx, 1), v.NONE)
        s = np.arange(2 * nmax + 1)[None, :]
        table = np.where(s < n[:, None], self.action(RIGHT, 0),
                         np.where(s == n[:, None], self.action(LEFT, 0), self.action(LEFT, 1)))
        steps = 2 * n + 1
        return Instances(cells[:, None, :], np.zeros(k, np.int64), keys, targets, n.copy(),
                         steps.copy(), _pad_actions(steps, 2 * nmax + 1, table), steps.copy(), np.full(k, NO_CLOCK))


class Walk(Task):
    """Walk right to an arrow, turn, and copy the digits met (docs/original-release.md#walk)."""

    name, interface, fill, factor, min_complexity = "walk", "grid", "random", 1, 2
    ARROW_MOVES = {"l": LEFT, "u": UP, "d": DOWN}

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        c = self.check_complexities(complexities)
        arrows = np.array(["l", "u", "d"])[rng.integers(0, 3, size=len(c))]
        return self.build(c, arrows, self._keys(rng, len(c)))

    def build(self, complexities, arrows, keys):
        """complexities c (k,), arrows (k,) of 'l' 'u' 'd', keys (k,)."""
        c, keys = np.asarray(complexities, dtype=np.int64), np.asarray(keys, dtype=np.int64)
        k, v = len(c), self.vocab
        d = (c - 2) // 2 + 1                          # distance to the arrow
        names = np.asarray(arrows)
        which = names.reshape(-1, 1) == np.array(list(self.ARROW_MOVES))           # (k, 3): one True a row
        if not which.any(axis=1).all():
            raise KeyError(str(names[~which.any(axis=1)][0]))
        arrow = which.argmax(axis=1)                  # vectorised: a pool holds about a thousand instances
        arrow_sym = np.array([v.L, v.U, v.D])[arrow]
        move = np.array(list(self.ARROW_MOVES.values()))[arrow]
        n_out = c + 1 - d
        j = np.arange(1, int(n_out.max()) + 1)[None, :]
        dx = np.where(move == LEFT, -1, 0)[:, None]
        dy = np.where(move == UP, -1, np.where(move == DOWN, 1, 0))[:, None]
        xs, ys = 1 + d[:, None] + dx * j, 1 + dy * j
        targets = np.where(j <= n_out[:, None], random_digits(keys[:, None], xs, ys, self.base), v.NONE)
        steps = c + 2
        s = np.arange(int(steps.max()))[None, :]
        table = np.where(s < d[:, None], self.action(RIGHT, 0),
                         np.where(s == d[:, None], self.action(move[:, None], 0), self.action(move[:, None], 1)))
        return Instances(arrow_sym.reshape(k, 1, 1), 1 + d, keys, targets, n_out,
                         steps.copy(), _pad_actions(steps, s.shape[1], table), steps.copy(), steps.copy())


class _ColumnArithmetic(Task):
    """Numbers right-aligned at x = 1 on rows 1..r, read column by column from
    the least significant digit, one output digit per column plus the final
    carry (docs/original-release.md#tasks)."""

    q_column = True

    def _zigzag(self, lengths: np.ndarray, reads: int) -> np.ndarray:
        """Ground truth: per column ``reads - 1`` vertical moves (down on even
        columns, up on odd ones), then (left, write); then one final (left,
        write) for the last carry.  (k, reads * Lmax + 1)."""
        lmax = int(lengths.max())
        s = np.arange(reads * lmax + 1)[None, :]
        column, phase = s // reads, s % reads
        vertical = np.where(column % 2 == 0, self.action(DOWN, 0), self.action(UP, 0))
        table = np.where((phase == reads - 1) | (s == reads * lengths[:, None]), self.action(LEFT, 1), vertical)
        return _pad_actions(reads * lengths + 1, s.shape[1], table)

    def _sum_instances(self, rows_lsd, lengths):
        """Instances adding the ``rows`` numbers of rows_lsd (k, rows, L),
        least significant digit first: complexity rows * L, and the zig-zag
        ground truth of rows * L + 1 steps."""
        rows_lsd, n = np.asarray(rows_lsd, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        rows_lsd = np.where(lengths_mask(n, rows_lsd.shape[2])[:, None, :], rows_lsd, 0)
        r = self.rows
        return self._instances(rows_lsd, n, add_digits(rows_lsd, self.base), r * n, self._zigzag(n, r), r * n + 1)

    def _instances(self, rows_lsd, lengths, result_lsd, complexity, actions, steps, first_row=None):
        """Right-align the rows (given least significant first) at x = 1."""
        k, r, lmax = rows_lsd.shape
        n = np.asarray(lengths, dtype=np.int64)
        # column j from the right (j = 0 is x = 1) sits at array column lmax - 1 - j
        cells = np.where(lengths_mask(n, lmax)[:, None, :], rows_lsd, -1)[:, :, ::-1]
        if first_row is not None:
            cells = np.concatenate([first_row, cells], axis=1)
        targets = np.where(lengths_mask(n + 1, lmax + 1), result_lsd, self.vocab.NONE)
        x0 = np.full(k, 2 - lmax, dtype=np.int64)
        return Instances(np.ascontiguousarray(cells), x0, np.zeros(k, np.int64), targets,
                         n + 1, complexity, actions, steps, np.full(k, NO_CLOCK))


class Addition(_ColumnArithmetic):
    """Add two L-digit numbers, L = max(c // 2, U{1,2,3}) (docs/original-release.md#addition)."""

    name, rows, fill, factor, min_complexity = "addition", 2, "e", 2, 2

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        c = self.check_complexities(complexities)
        n = np.maximum(c // 2, rng.integers(1, 4, size=len(c)))
        digits = rng.integers(0, self.base, size=(len(c), 2, int(n.max())))
        return self.build(digits, n)

    def build(self, rows_lsd, lengths):
        """rows_lsd (k, 2, L) digits least significant first; lengths L (k,)."""
        return self._sum_instances(rows_lsd, lengths)


class Addition3(_ColumnArithmetic):
    """Add three L-digit numbers, L = max(c // 3, U{2,3,4}) (docs/original-release.md#addition3),
    with complexity 3L (docs/original-release.md#bug-addition3-complexity) and the optional extra curriculum."""

    name, rows, fill, factor, min_complexity = "addition3", 3, "e", 3, 3
    # In base 2 the last carry of three numbers can be 2, which is not a digit:
    # L + 1 output digits cannot hold the sum (the paper's App. B never solved it).
    min_base = 3

    def __init__(self, base: int = 10, extra_curriculum: bool = True):
        super().__init__(base)
        self.extra_curriculum = extra_curriculum

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        c = self.check_complexities(complexities)
        k = len(c)
        n = np.maximum(c // 3, rng.integers(2, 5, size=k))
        digits = rng.integers(0, self.base, size=(k, 3, int(n.max())))
        if self.extra_curriculum:
            digits = self._extra_curriculum(rng, digits, c, n, c.max() if level is None else level, low_accuracy)
        return self.build(digits, n)

    def _extra_curriculum(self, rng, digits, c, n, level, low_accuracy):
        """The release's 'extra curriculum' (docs/original-release.md#extra-curriculum): while training
        short instances, draw many digits non-zero and force small digits in
        the four lowest columns so that carries are rare."""
        b, k = self.base, len(c)
        digits = digits.copy()
        nonzero = rng.integers(1, b, size=digits.shape)
        if low_accuracy:
            small = rng.integers(1, min(4, b - 1) + 1, size=digits.shape)
            nonzero = np.where(rng.random(digits.shape) < 0.5, small, nonzero)
        coin = (rng.random(digits.shape) < 0.5) & (c <= 16)[:, None, None]
        digits = np.where(coin, nonzero, digits)
        forced = (level <= 12) | ((level <= 16) & (rng.random(k) < 0.5))       # per instance

        def simple(size):
            low = rng.integers(0, min(3, b - 1) + 1, size=size)
            if level <= 8:
                return low
            pick = rng.integers(0, 3, size=size)
            return np.where(pick == 0, 0, np.where(pick == 1, low, rng.integers(0, b, size=size)))

        both = rng.random(k) < 2 / 3
        one = rng.integers(0, 2, size=k)
        for row in (0, 1):                        # the least significant column
            chosen = forced & (both | (one == row))
            digits[:, row, 0] = np.where(chosen, simple(k), digits[:, row, 0])
        for offset, rows in ((1, (2, 1)), (2, (0, 1)), (3, (2, 1))):
            if digits.shape[2] > offset:
                for row in rows:
                    chosen = forced & (n > offset)
                    digits[:, row, offset] = np.where(chosen, simple(k), digits[:, row, offset])
        return digits

    def build(self, rows_lsd, lengths):
        """rows_lsd (k, 3, L) digits least significant first; lengths L (k,)."""
        return self._sum_instances(rows_lsd, lengths)


class Multiplication(_ColumnArithmetic):
    """Multiply an L = c digit number by a single digit m ~ U{2..base-1}
    written above its last digit (docs/original-release.md#multiplication).  Needs base >= 3."""

    name, rows, fill, factor, min_complexity, min_base = "multiplication", 2, "zero", 1, 1, 3

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        n = self.check_complexities(complexities)
        m = rng.integers(2, self.base, size=len(n))
        digits = rng.integers(0, self.base, size=(len(n), int(n.max())))
        return self.build(digits, m, n)

    def build(self, number_lsd, multipliers, lengths):
        """number_lsd (k, L) least significant first, multipliers (k,), lengths (k,)."""
        number, n = np.asarray(number_lsd, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        m = np.asarray(multipliers, dtype=np.int64)
        k, lmax = number.shape
        number = np.where(lengths_mask(n, lmax), number, 0)
        first_row = np.full((k, 1, lmax), -1, dtype=np.int64)
        first_row[:, 0, -1] = m                          # m at (1, 1)
        table = np.where(np.arange(lmax + 2)[None, :] == 0, self.action(DOWN, 0), self.action(LEFT, 1))
        steps = n + 2
        return self._instances(number[:, None, :], n, multiply_digits(number, m, self.base), steps,
                               _pad_actions(steps, lmax + 2, table), steps, first_row=first_row)


TASKS = {t.name: t for t in (Copy, Reverse, Walk, Addition, Addition3, Multiplication)}
ALIASES = {"3-number-addition": "addition3", "add3": "addition3", "single_mul": "multiplication",
           "mul": "multiplication", "add": "addition"}


def make_task(name: str, base: int = 10, **options) -> Task:
    """The task called ``name`` in base ``base`` (ValueError if unknown or invalid)."""
    cls = TASKS.get(ALIASES.get(name, name)) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown task {name!r}; allowed: {', '.join(TASKS)}")
    return cls(base, **options)
