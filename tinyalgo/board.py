"""An infinite 2-D board per lane, batched over B lanes (docs/original-release.md#board).

Every task lives on an unbounded board ``A[x][y]``: x is the column
(left to right) and y the row, growing *downwards*; the head starts at
(1, 1).  A task defines a few cells (the input numbers, the markers); every
other cell follows the task's *fill rule*:

* ``"random"`` (copy, reverse, walk): a uniformly random digit, the same
  at every visit.  The release draws these lazily on first read; here the
  digit at (x, y) is ``random_digits(key, x, y, base)``, a function of the
  instance's random key and the position (a fixed random table, see
  ``tinyalgo.host.speed``), so the board is infinite and costs no memory;
* ``"e"`` (addition, 3-number addition): the empty symbol ``e``;
* ``"zero"`` (multiplication): the digit 0.

Arithmetic tasks also have a wall of ``q`` in column x = 3 on every row.

Storage: lane ``b`` keeps a rectangle of its board with a margin, so that a
read is one clipped lookup.  ``cells[b, r, c]`` is position
(x, y) = (xs[b] + c, r + 1 - top), with top = 1 on a grid (a margin row
above and below the defined rows) and 0 on a tape (heads stay on y = 1).
The first and last stored columns, and on a grid the margin rows, hold what
every position beyond them holds: the fill value (and ``q`` in column 3) on
constant-fill boards, ``UNDEFINED`` (-1, "use the fill rule") on random
boards.  Reading (x, y) reads the stored cell at the clipped (x, y).

The environment keeps the stored rectangles in its lanes' bytes and its
heads read them through an index (``tinyalgo.host.speed``: packed lanes, the
table index carried by the head); ``Board.read`` is the rule they follow.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.host.speed import random_digits
from tinyalgo.symbols import Vocabulary

UNDEFINED = -1
FILLS = ("random", "e", "zero")
Q_COLUMN_X = 3


class Board:
    """The infinite boards of B lanes.

    Parameters
    ----------
    batch : int, number of lanes B.
    rows : int, rows with defined cells (y = 1..rows).
    vocab : Vocabulary.
    fill : one of FILLS, the value of undefined cells.
    q_column : bool, whether column x = 3 reads ``q`` on every row.
    grid : bool, heads may leave row 1 (False for a tape: no margin rows).

    Attributes: ``cells`` int8 (B, rows + 2 * top, capacity), the stored
    rectangles (see the module doc); ``xs``, ``x0``, ``key`` int64 (B,), the
    board x of stored column 0, of the instance's column 0, the random key.
    The environment keeps ``cells`` inside its lanes' bytes (``tinyalgo.host.speed.Lanes``).
    """

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool, grid: bool = True):
        if fill not in FILLS:
            raise ValueError(f"fill must be one of {FILLS}; got {fill!r}")
        self.vocab, self.rows, self.fill, self.q_column = vocab, rows, fill, q_column
        self.top = 1 if grid else 0
        self._const = {"e": vocab.E, "zero": 0}.get(fill)
        self.blank = UNDEFINED if self._const is None else self._const     # beyond the defined cells
        self.x0 = np.zeros(batch, dtype=np.int64)
        self.key = np.zeros(batch, dtype=np.int64)
        self.cells, self.xs = self.layout(np.zeros((batch, rows, 0), dtype=np.int8), self.x0)

    @property
    def stored_rows(self) -> int:
        return self.rows + 2 * self.top

    @property
    def capacity(self) -> int:
        """Stored columns per lane (the environment grows it on demand)."""
        return self.cells.shape[2]

    def layout(self, cells: np.ndarray, x0: np.ndarray):
        """The stored form of k boards: ``cells`` int8 (k, rows, w) with origins
        x0 (k,) (defined cells, -1 = fill rule) -> (stored int8 (k,
        stored_rows, wc), xs int64 (k,)), with a blank column left and right
        (and ``q`` column 3 inside on a q-column board)."""
        k, rows, w = cells.shape
        x0 = np.asarray(x0, dtype=np.int64)
        xs = (np.minimum(x0, Q_COLUMN_X) if self.q_column else x0) - 1
        last = np.maximum(x0 + w, Q_COLUMN_X + 1) if self.q_column else x0 + w      # a blank column
        out = np.full((k, self.stored_rows, int((last - xs).max(initial=1)) + 1), self.blank, dtype=np.int8)
        offset = x0 - xs
        if k and (offset == offset[0]).all():
            out[:, self.top:self.top + rows, offset[0]:offset[0] + w] = cells
        elif k:
            out[np.arange(k)[:, None, None], np.arange(self.top, self.top + rows)[None, :, None],
                (offset[:, None] + np.arange(w))[:, None, :]] = cells
        if self._const is not None:
            out[out == UNDEFINED] = self._const
            if self.q_column:
                out[np.arange(k), :, Q_COLUMN_X - xs] = self.vocab.Q
        return out, xs

    def read(self, x: np.ndarray, y: np.ndarray = None, lanes: np.ndarray = None) -> np.ndarray:
        """Symbols (n,) at positions x, y (n,) of ``lanes`` (n,), all B
        lanes by default; y None: row 1 (a tape).  The stored cell at the
        clipped position, or the fill rule where that is undefined."""
        lanes = np.arange(len(self.xs)) if lanes is None else np.asarray(lanes)
        x = np.asarray(x, dtype=np.int64)
        if y is not None and not self.top:           # a tape board off row 1: only the fill rule there
            return np.where(y == 1, self.read(x, None, lanes), self._fill_rule(x, y, lanes))
        y = np.ones_like(x) if y is None else np.asarray(y, dtype=np.int64)
        column = np.clip(x - self.xs[lanes], 0, self.capacity - 1)     # the margins hold what lies beyond
        row = np.clip(y - 1 + self.top, 0, self.stored_rows - 1)
        value = self.cells[lanes, row, column]
        return np.where(value == UNDEFINED, self._fill_rule(x, y, lanes), value)

    def _fill_rule(self, x, y, lanes=None) -> np.ndarray:
        """What undefined positions x, y (n,) of ``lanes`` (n,; default all) hold."""
        if self._const is None:
            return random_digits(self.key if lanes is None else self.key[lanes], x, y, self.vocab.base)
        return np.where((x == Q_COLUMN_X) & self.q_column, self.vocab.Q, self._const)

    def window(self, lane: int, x_range, y_range) -> np.ndarray:
        """The symbols of one lane over a rectangle, shape (len(y_range), len(x_range))."""
        xs, ys = np.meshgrid(np.asarray(x_range, dtype=np.int64), np.asarray(y_range, dtype=np.int64))
        lanes = np.full(xs.size, lane)
        return self.read(xs.ravel(), ys.ravel(), lanes).reshape(xs.shape).astype(np.int64)
