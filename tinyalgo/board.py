"""An infinite 2-D board per lane, batched over B lanes (REFERENCE 1.1, 2.3).

Every task lives on an unbounded board ``A[x][y]``: x is the column
(left to right) and y the row, growing *downwards*; the head starts at
(1, 1).  A task defines a few cells (the input numbers, the markers); every
other cell follows the task's *fill rule*:

* ``"random"`` (copy, reverse, walk): a uniformly random digit.  The release
  draws these lazily on first read; here a cell's digit is looked up at
  (lane key, x, y) in a fixed random table, so the board is infinite, costs
  no memory, and reads the same digit every time it is visited;
* ``"e"`` (addition, 3-number addition): the empty symbol ``e``;
* ``"zero"`` (multiplication): the digit 0.

Arithmetic tasks also have a wall of ``q`` in column x = 3 on every row.
The defined cells of lane ``b`` sit in ``cells[b, y - 1, x - x0[b]]``; the
value ``UNDEFINED`` (-1) there means "use the fill rule".
"""
from __future__ import annotations

import numpy as np

from tinyalgo.symbols import Vocabulary

UNDEFINED = -1
FILLS = ("random", "e", "zero")
Q_COLUMN_X = 3

_TABLE_BITS = 20
# A fixed table of random values, uniform modulo every base 2..10 (2520 is
# lcm(2..10)); the same on every machine, so boards are reproducible.
_TABLE = np.random.default_rng(20160101).integers(0, 2520, size=2 ** _TABLE_BITS).astype(np.int64)
_MASK = 2 ** _TABLE_BITS - 1
_PX, _PY = 0x9E3779B1, 0x85EBCA77  # odd multipliers: x -> x * _PX is a bijection modulo 2**20


def random_digits(key, x, y, base: int) -> np.ndarray:
    """Digit in 0..base-1 at (x, y) of the random board with key ``key``.

    A lookup in a fixed random table at (key + x * PX + y * PY) mod 2**20:
    along any row or column the cells of a board differ for 2**20 positions,
    and each instance's random key puts it at its own place in the table.
    All arguments are broadcast integer arrays.
    """
    index = (np.asarray(key, dtype=np.int64) + np.asarray(x, dtype=np.int64) * _PX
             + np.asarray(y, dtype=np.int64) * _PY) & _MASK
    return _TABLE[index] % base


class Board:
    """The infinite boards of B lanes.

    Parameters
    ----------
    batch : int, number of lanes B.
    rows : int, rows with defined cells (y = 1..rows).
    vocab : Vocabulary.
    fill : one of FILLS, the value of undefined cells.
    q_column : bool, whether column x = 3 reads ``q`` on every row.
    """

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool):
        if fill not in FILLS:
            raise ValueError(f"fill must be one of {FILLS}; got {fill!r}")
        self.vocab, self.rows, self.fill, self.q_column = vocab, rows, fill, q_column
        self.cells = np.full((batch, rows, 8), UNDEFINED, dtype=np.int8)
        self.x0 = np.zeros(batch, dtype=np.int64)
        self.key = np.zeros(batch, dtype=np.int64)
        self._lanes = np.arange(batch)
        self._const = {"e": vocab.E, "zero": 0}.get(fill)
        self._flat_base = self._lanes * (rows * self.capacity)
        self.cells[:] = self.fit(self.cells, self.x0)      # an empty board follows its fill rule

    @property
    def capacity(self) -> int:
        """Columns of defined cells each lane can hold (grows on demand)."""
        return self.cells.shape[2]

    def fit(self, cells: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """``cells`` (k, rows, w) with origins x0 (k,) padded to the capacity,
        growing it if needed; on constant-fill boards the undefined cells are
        set to the fill rule's value (and the ``q`` column to ``q``)."""
        k, rows, w = cells.shape
        if w > self.capacity:                          # grow, never shrink
            grown = np.full((len(self.x0), self.rows, max(w, 2 * self.capacity)), UNDEFINED, dtype=np.int8)
            grown[:, :, :self.capacity] = self.cells
            self.cells = grown
        out = np.full((k, rows, self.capacity), UNDEFINED, dtype=np.int8)
        out[:, :, :w] = cells
        if self._const is not None:
            out[out == UNDEFINED] = self._const
            if self.q_column:
                col = Q_COLUMN_X - np.asarray(x0)
                ok = (col >= 0) & (col < self.capacity)
                out[np.flatnonzero(ok), :, col[ok]] = self.vocab.Q
        self._flat_base = self._lanes * (self.rows * self.capacity)
        return out

    def read(self, x: np.ndarray, y: np.ndarray, lanes: np.ndarray = None) -> np.ndarray:
        """Symbols under positions x, y (n,) of ``lanes`` (n,); all B lanes by default."""
        cap = self.capacity
        if lanes is None:
            x0, key, base = self.x0, self.key, self._flat_base
        else:
            x0, key, base = self.x0[lanes], self.key[lanes], lanes * (self.rows * cap)
        col, row = x - x0, y - 1
        # negative numbers viewed as unsigned are huge: one comparison per bound
        inside = (col.view(np.uint64) < cap) & (row.view(np.uint64) < self.rows)
        value = self.cells.reshape(-1).take(base + np.where(inside, row * cap + col, 0))
        if self._const is None:                        # random digits where undefined
            return np.where(inside & (value != UNDEFINED), value, random_digits(key, x, y, self.vocab.base))
        outside = np.where(x == Q_COLUMN_X, self.vocab.Q, self._const) if self.q_column else self._const
        return np.where(inside, value, outside)

    def window(self, lane: int, x_range, y_range) -> np.ndarray:
        """The symbols of one lane over a rectangle, shape (len(y_range), len(x_range))."""
        xs, ys = np.meshgrid(np.asarray(x_range, dtype=np.int64), np.asarray(y_range, dtype=np.int64))
        lanes = np.full(xs.size, lane)
        return self.read(xs.ravel(), ys.ravel(), lanes).reshape(xs.shape)
