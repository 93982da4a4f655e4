"""The walk task on the input grid (paper section 3, Figure 2)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from tinyalgo.board import random_digits
from tinyalgo.tasks.instances import Instances
from tinyalgo.tasks.base import DOWN, LEFT, RIGHT, UP, Task, _pad_actions


class Walk(Task):
    """Walk right to an arrow, turn, and copy the digits met (docs/original-release.md#walk)."""

    name, interface, fill, factor, min_complexity = "walk", "grid", "random", 1, 2
    complexity_rule = "walk's complexity counts the ground truth's c + 2 steps"
    q_from_clock = True      # from step c + 2 on every cell reads q (docs/original-release.md#walk)
    ARROW_MOVES: ClassVar[dict] = {"l": LEFT, "u": UP, "d": DOWN}
    ARROW_STEPS: ClassVar[dict] = {"l": (-1, 0), "u": (0, -1), "d": (0, 1)}     # (dx, dy) after the turn

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        c = self.check_complexities(complexities)
        arrows = np.array(["l", "u", "d"])[rng.integers(0, 3, size=len(c))]
        return self.build(c, arrows, self._keys(rng, len(c)))

    def length(self, instances):
        """The distance d (k,) from the start to the arrow."""
        return instances.x0 - 1

    def target_source(self, n, j, arrow=None):
        """The cell target j copies, d = n cells right of the start and j + 1 past the turn (None without the arrow)."""
        if arrow is None:
            return None
        dx, dy = self.ARROW_STEPS[arrow]
        return 1 + n + dx * (j + 1), 1 + dy * (j + 1)

    def random_of_length(self, rng, n, keys):
        """Complexity 2d or 2d + 1 for d = n, a uniform arrow."""
        k = len(keys)
        complexities = 2 * n + rng.integers(0, 2, size=k)
        return self.build(complexities, np.array(list(self.ARROW_MOVES))[rng.integers(0, 3, size=k)], keys)

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
        return Instances(cells=arrow_sym.reshape(k, 1, 1), x0=1 + d, key=keys, targets=targets, n_outputs=n_out,
                         complexity=steps.copy(), actions=_pad_actions(steps, s.shape[1], table),
                         n_steps=steps.copy(), clock=steps.copy())
