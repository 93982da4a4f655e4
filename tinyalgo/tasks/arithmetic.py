"""The arithmetic tasks on the input grid: addition, 3-number addition and
single-digit multiplication (paper section 3, Figure 2), column by column."""
from __future__ import annotations

import numpy as np

from tinyalgo.tasks.instances import NO_CLOCK, Instances, add_digits, lengths_mask, multiply_digits
from tinyalgo.tasks.base import DOWN, LEFT, UP, Task, _pad_actions


class _ColumnArithmetic(Task):
    """Numbers right-aligned at x = 1 on rows 1..r, read column by column from
    the least significant digit, one output digit per column plus the final
    carry (docs/original-release.md#tasks)."""

    q_column = True

    def length(self, instances):
        return instances.n_outputs - 1               # one output digit per column, and the final carry

    def length_from_end(self, x):
        return 1 - x                                 # the numbers end at x = 2 - n: the empty column x = 1 - n

    def digit_cell(self, n, row, j):
        return 1 - j, row                            # least significant digit first, from x = 1 leftwards

    def target_source(self, n, j, arrow=None):
        return 1 - j, None                           # the column x = 1 - j makes target j

    def of_digits(self, digits, n, multipliers=None, keys=None):
        return self.build(np.asarray(digits), np.full(len(digits), n))

    def corners(self, n):
        """A carry chain top...top + 1 (+ 0), all maximal digits, all zeros (top = base - 1)."""
        top, r = self.base - 1, len(self.number_rows)
        one = np.zeros(n, dtype=np.int64)
        one[0] = 1
        nines, zeros = np.full(n, top), np.zeros(n, dtype=np.int64)
        chain = np.stack([nines, one] + [zeros] * (r - 2))[None]
        return {f"carry chain {top}...{top} + 1" + " + 0" * (r - 2): self.of_digits(chain, n),
                "all maximal": self.of_digits(np.stack([nines] * r)[None], n),
                "all zeros": self.of_digits(np.stack([zeros] * r)[None], n)}

    def _zigzag(self, lengths: np.ndarray, reads: int) -> np.ndarray:
        """Ground truth: per column ``reads - 1`` vertical moves (down on even
        columns, up on odd ones), then (left, write); then one final (left,
        write) for the last carry.  (k, reads * Lmax + 1)."""
        ### BEGIN SOLUTION
        lmax = int(lengths.max())
        s = np.arange(reads * lmax + 1)[None, :]
        column, phase = s // reads, s % reads
        vertical = np.where(column % 2 == 0, self.action(DOWN, 0), self.action(UP, 0))
        table = np.where((phase == reads - 1) | (s == reads * lengths[:, None]), self.action(LEFT, 1), vertical)
        return _pad_actions(reads * lengths + 1, s.shape[1], table)
        ### END SOLUTION

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
        return Instances(cells=np.ascontiguousarray(cells), x0=x0, key=np.zeros(k, np.int64), targets=targets,
                         n_outputs=n + 1, complexity=complexity, actions=actions, n_steps=steps,
                         clock=np.full(k, NO_CLOCK))


class Addition(_ColumnArithmetic):
    """Add two L-digit numbers, L = max(c // 2, U{1,2,3}) (docs/original-release.md#addition)."""

    name, rows, fill, factor, min_complexity = "addition", 2, "e", 2, 2
    complexity_rule = "addition draws two numbers of L = max(c // 2, a random 1..3) digits: complexity 2L"
    number_rows = (1, 2)

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
    complexity_rule = "3-number addition draws three numbers of L = max(c // 3, a random 2..4) digits: complexity 3L"
    number_rows = (1, 2, 3)
    # In base 2 the last carry of three numbers can be 2, which is not a digit:
    # L + 1 output digits cannot hold the sum (the paper's App. B never solved it).
    min_base = 3
    min_base_reason = "the last carry of three numbers can be 2, not a digit in base 2"
    has_extra_curriculum = True

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
    complexity_rule = "multiplication draws an L = c digit number, solved in L + 2 steps: complexity L + 2"
    min_base_reason = "there is no multiplier digit >= 2 in base 2"
    number_rows = (2,)                               # m sits on row 1

    @property
    def n_multipliers(self):
        return self.base - 2                         # m in 2..base-1

    def of_digits(self, digits, n, multipliers=None, keys=None):
        k = len(digits)
        return self.build(np.asarray(digits)[:, 0], np.full(k, 2) if multipliers is None else multipliers,
                          np.full(k, n))

    def _multipliers(self, choices):
        return 2 + choices

    def _random_multipliers(self, rng, k):
        return rng.integers(2, self.base, size=k)

    def corners(self, n):
        """top...top x 2 (a carry chain), top...top x top, 0...0 x top (top = base - 1)."""
        top = self.base - 1
        nines, zeros = np.full((1, 1, n), top), np.zeros((1, 1, n), dtype=np.int64)
        return {f"carry chain {top}...{top} x 2": self.of_digits(nines, n, [2]),
                f"all maximal ({top}...{top} x {top})": self.of_digits(nines, n, [top]),
                f"all zeros x {top}": self.of_digits(zeros, n, [top])}

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
