"""The input-tape tasks: copy and reverse (paper section 3, Figure 2)."""
from __future__ import annotations

import numpy as np

from tinyalgo.tasks.instances import NO_CLOCK, Instances
from tinyalgo.tasks.base import LEFT, RIGHT, Task, _pad_actions


class _Tape(Task):
    """A tape task: one number of n digits at x = 1..n of row 1, on a random fill."""

    number_rows = (1,)

    def length(self, instances):
        return instances.n_outputs.copy()

    def digit_cell(self, n, row, j):
        return 1 + j, 1

    def of_digits(self, digits, n, multipliers=None, keys=None):
        k = len(digits)
        return self.build(np.asarray(digits)[:, 0], np.full(k, n), np.zeros(k, np.int64) if keys is None else keys)

    def layout_span(self, n: int) -> tuple:
        """The first and last x of the cells an instance of length n defines."""
        raise NotImplementedError

    def corners(self, n):
        """All maximal digits, all zeros."""
        top = self.base - 1
        return {"all maximal": self.of_digits(np.full((1, 1, n), top), n),
                "all zeros": self.of_digits(np.zeros((1, 1, n), dtype=np.int64), n)}


class Copy(_Tape):
    """Copy the c digits of the input tape (paper section 3, Figure 2; a tape:
    docs/original-release.md#bug-copy-tape)."""

    name, interface, fill, factor, min_complexity = "copy", "tape", "random", 1, 1
    complexity_rule = "copy draws c digits: complexity c"

    def layout_span(self, n):
        return 1, n + 1                              # the digits, the q

    def target_source(self, n, j, arrow=None):
        return 1 + j, 1

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
        return Instances(cells=cells[:, None, :], x0=np.ones(k, np.int64), key=keys, targets=targets,
                         n_outputs=n.copy(), complexity=n.copy(), actions=actions, n_steps=n.copy(),
                         clock=np.full(k, NO_CLOCK))


class Reverse(_Tape):
    """Reverse the n = c // 2 digits left of the marker ``p`` (docs/original-release.md#reverse)."""

    name, interface, fill, factor, min_complexity = "reverse", "tape", "random", 2, 2
    complexity_rule = "reverse draws n = c // 2 digits, solved in 2n + 1 steps: complexity 2n + 1"

    def layout_span(self, n):
        return 0, n + 2                              # the q, the digits, the two p

    def target_source(self, n, j, arrow=None):
        return n - j, 1

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
        return Instances(cells=cells[:, None, :], x0=np.zeros(k, np.int64), key=keys, targets=targets,
                         n_outputs=n.copy(), complexity=steps.copy(), actions=_pad_actions(steps, 2 * nmax + 1, table),
                         n_steps=steps.copy(), clock=np.full(k, NO_CLOCK))
