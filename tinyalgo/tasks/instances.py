"""A batch of task instances: the defined board cells, the targets, and the
ground-truth actions that solve each instance (docs/original-release.md#ground-truth).

All arrays are padded to the longest instance of the batch; ``n_outputs``
and ``n_steps`` give each instance's own lengths.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass
class Instances:
    """k instances of one task.

    cells : int8 (k, rows, w)
        defined cells, -1 = "use the fill rule"; cell
        ``cells[i, y - 1, x - x0[i]]`` is at board position (x, y).
    x0 : int64 (k,)
        board x of column 0 of ``cells``.
    key : int64 (k,)
        key of the random fill (see ``board.random_digits``).
    targets : int8 (k, n)
        the symbols to write, in order; padded with none.
    n_outputs : int64 (k,)
        number of targets of each instance.
    complexity : int64 (k,)
        the paper's complexity (steps of the reference solution, paper
        section 5; the timeout and the curriculum use it).
    actions : int8 (k, s)
        ground-truth joint actions, padded with -1.
    n_steps : int64 (k,)
        length of each ground-truth action sequence.
    clock : int64 (k,)
        from this episode step on every cell reads ``q`` (the walk task's end
        rule, docs/original-release.md#walk); a huge value otherwise.
    """

    cells: np.ndarray
    x0: np.ndarray
    key: np.ndarray
    targets: np.ndarray
    n_outputs: np.ndarray
    complexity: np.ndarray
    actions: np.ndarray
    n_steps: np.ndarray
    clock: np.ndarray

    def __post_init__(self):
        # symbols and actions are small: int8 keeps 50 instances of 20,000 steps to a few MB
        self.cells = np.asarray(self.cells).astype(np.int8, copy=False)
        self.targets = np.asarray(self.targets).astype(np.int8, copy=False)
        self.actions = np.asarray(self.actions).astype(np.int8, copy=False)

    def __len__(self) -> int:
        return len(self.x0)

    def take(self, index) -> Instances:
        """The sub-batch at ``index`` (an int array or slice)."""
        return Instances(**{f.name: getattr(self, f.name)[index] for f in fields(self)})


def concatenate(parts, none: int) -> Instances:
    """One batch of the instances of ``parts`` (padded to the widest; targets
    with the vocabulary's ``none``)."""
    def pad(arrays, value):
        width = max(a.shape[-1] for a in arrays)
        return np.concatenate([np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])],
                                      constant_values=value) for a in arrays])
    same = {f: np.concatenate([getattr(p, f) for p in parts])
            for f in ("x0", "key", "n_outputs", "complexity", "n_steps", "clock")}
    return Instances(cells=pad([p.cells for p in parts], -1), targets=pad([p.targets for p in parts], none),
                     actions=pad([p.actions for p in parts], -1), **same)


NO_CLOCK = np.iinfo(np.int64).max // 4


def lengths_mask(lengths: np.ndarray, width: int) -> np.ndarray:
    """Bool (k, width): True at column j < lengths[i]."""
    return np.arange(width)[None, :] < np.asarray(lengths)[:, None]


def digits_to_int(digits_lsd_first, base: int) -> int:
    """Python integer of a digit sequence given least significant digit first."""
    value = 0
    for d in reversed([int(v) for v in digits_lsd_first]):
        value = value * base + d
    return value


def add_digits(rows_lsd: np.ndarray, base: int) -> np.ndarray:
    """Digits (k, L+1), least significant first, of the column-wise sum of
    ``rows_lsd`` (k, r, L) given least significant digit first (zero padded)."""
    k, _, length = rows_lsd.shape
    out = np.zeros((k, length + 1), dtype=np.int64)
    carry = np.zeros(k, dtype=np.int64)
    column_sums = rows_lsd.sum(axis=1)
    for j in range(length):
        s = column_sums[:, j] + carry
        out[:, j], carry = s % base, s // base
    out[:, length] = carry
    return out


def multiply_digits(number_lsd: np.ndarray, m: np.ndarray, base: int) -> np.ndarray:
    """Digits (k, L+1), least significant first, of m (k,) times the number
    ``number_lsd`` (k, L) given least significant digit first."""
    k, length = number_lsd.shape
    out = np.zeros((k, length + 1), dtype=np.int64)
    carry = np.zeros(k, dtype=np.int64)
    for j in range(length):
        s = number_lsd[:, j] * m + carry
        out[:, j], carry = s % base, s // base
    out[:, length] = carry
    return out
