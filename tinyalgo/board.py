"""An infinite 2-D board per lane, batched over B lanes (REFERENCE 1.1, 2.3).

Every task lives on an unbounded board ``A[x][y]``: x is the column
(left to right) and y the row, growing *downwards*; the head starts at
(1, 1).  A task defines a few cells (the input numbers, the markers); every
other cell follows the task's *fill rule*:

* ``"random"`` (copy, reverse, walk): a uniformly random digit.  The release
  draws these lazily on first read; here a cell's digit is a hash of
  (lane key, x, y), so the board is infinite, costs no memory, and reads the
  same digit every time it is visited;
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

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
_M3 = np.uint64(0xBF58476D1CE4E5B9)
_M4 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


def random_digits(key, x, y, base: int) -> np.ndarray:
    """Digit in 0..base-1 at (x, y) of the random board with key ``key``.

    A splitmix64 hash of (key, x, y); all arguments are broadcast arrays.
    """
    z = (np.asarray(key, dtype=np.uint64)
         + np.asarray(x).astype(np.uint64) * _M1
         + np.asarray(y).astype(np.uint64) * _M2)
    z = (z ^ (z >> _S30)) * _M3
    z = (z ^ (z >> _S27)) * _M4
    z = z ^ (z >> _S31)
    return (z % np.uint64(base)).astype(np.int64)


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
        self.cells = np.full((batch, rows, 8), UNDEFINED, dtype=np.int16)
        self.x0 = np.zeros(batch, dtype=np.int64)
        self.key = np.zeros(batch, dtype=np.uint64)
        self._lanes = np.arange(batch)
        self._const = {"e": vocab.E, "zero": 0}.get(fill)

    @property
    def batch(self) -> int:
        return self.cells.shape[0]

    def load(self, lanes: np.ndarray, cells: np.ndarray, x0: np.ndarray, key: np.ndarray) -> None:
        """Place new defined cells (k, rows, w) with origins x0 (k,) in ``lanes`` (k,)."""
        w = cells.shape[2]
        if w > self.cells.shape[2]:  # grow the storage, never shrink
            cap = max(w, 2 * self.cells.shape[2])
            grown = np.full((self.batch, self.rows, cap), UNDEFINED, dtype=np.int16)
            grown[:, :, :self.cells.shape[2]] = self.cells
            self.cells = grown
        self.cells[lanes] = UNDEFINED
        self.cells[lanes, :, :w] = cells
        self.x0[lanes] = x0
        self.key[lanes] = key

    def read(self, x: np.ndarray, y: np.ndarray, lanes: np.ndarray = None) -> np.ndarray:
        """Symbols under positions x, y (n,) of ``lanes`` (n,); all B lanes by default."""
        lanes = self._lanes if lanes is None else lanes
        cap = self.cells.shape[2]
        col = x - self.x0[lanes]
        inside = (col >= 0) & (col < cap) & (y >= 1) & (y <= self.rows)
        value = self.cells[lanes, np.clip(y - 1, 0, self.rows - 1), np.clip(col, 0, cap - 1)]
        undefined = ~inside | (value == UNDEFINED)
        if self._const is None:
            fill = random_digits(self.key[lanes], x, y, self.vocab.base)
        else:
            fill = self._const
        out = np.where(undefined, fill, value).astype(np.int64)
        if self.q_column:
            out[undefined & (x == Q_COLUMN_X)] = self.vocab.Q
        return out

    def window(self, lane: int, x_range, y_range) -> np.ndarray:
        """The symbols of one lane over a rectangle, shape (len(y_range), len(x_range))."""
        xs, ys = np.meshgrid(np.asarray(x_range, dtype=np.int64), np.asarray(y_range, dtype=np.int64))
        lanes = np.full(xs.size, lane)
        return self.read(xs.ravel(), ys.ravel(), lanes).reshape(xs.shape)
