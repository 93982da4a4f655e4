"""An infinite 2-D board per lane, batched over B lanes (docs/original-release.md#board).

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

Storage: lane ``b`` keeps a rectangle of its board with a margin, so that a
read is one clipped gather.  ``cells[b, r, c]`` is position
(x, y) = (xs[b] + c, r + 1 - top), with top = 1 on a grid (a margin row
above and below the defined rows) and 0 on a tape (heads stay on y = 1).
The first and last stored columns, and on a grid the margin rows, hold what
every position beyond them holds: the fill value (and ``q`` in column 3) on
constant-fill boards, ``UNDEFINED`` (-1, "use the fill rule") on random
boards.  Reading (x, y) reads the stored cell at the clipped (x, y).
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
_MASK = np.int64(2 ** _TABLE_BITS - 1)
_PX, _PY = 0x9E3779B1, 0x85EBCA77  # odd multipliers: x -> x * _PX is a bijection modulo 2**20


def board_hash(key, x, y) -> np.ndarray:
    """key + x * PX + y * PY (broadcast int64): where (x, y) of the board with
    key ``key`` looks in the random table.  A move by (dx, dy) adds
    dx * PX + dy * PY (``HASH_STEP``), so a head carries it along
    (``interfaces.InputGrid.move``)."""
    return (np.asarray(key, dtype=np.int64) + np.asarray(x, dtype=np.int64) * _PX
            + np.asarray(y, dtype=np.int64) * _PY)


HASH_STEP = (_PX, _PY)    # the hash's change per unit of x and of y


_DIGITS = {}


def digit_table(base: int) -> np.ndarray:
    """``_TABLE % base`` as int8 (2**20,), made once per base (1 MiB)."""
    if base not in _DIGITS:
        table = _TABLE.astype(np.int16)                # small temporaries: values < 2520
        _DIGITS[base] = np.remainder(table, base, out=table).astype(np.int8)
    return _DIGITS[base]


def random_digits(key, x, y, base: int) -> np.ndarray:
    """Digit in 0..base-1 at (x, y) of the random board with key ``key``.

    A lookup in a fixed random table at (key + x * PX + y * PY) mod 2**20:
    along any row or column the cells of a board differ for 2**20 positions,
    and each instance's random key puts it at its own place in the table.
    All arguments are broadcast integer arrays.
    """
    return _TABLE[board_hash(key, x, y) & _MASK] % base


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
    The environment keeps ``cells`` inside its per-lane bytes (``bind``).
    """

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool, grid: bool = True):
        if fill not in FILLS:
            raise ValueError(f"fill must be one of {FILLS}; got {fill!r}")
        self.vocab, self.rows, self.fill, self.q_column = vocab, rows, fill, q_column
        self.top = 1 if grid else 0
        self._const = {"e": vocab.E, "zero": 0}.get(fill)
        self.blank = UNDEFINED if self._const is None else self._const     # beyond the defined cells
        self._digits = digit_table(vocab.base)                            # the random fill's digits
        self.x0 = np.zeros(batch, dtype=np.int64)
        self.key = np.zeros(batch, dtype=np.int64)
        cells, self.xs = self.layout(np.zeros((batch, rows, 0), dtype=np.int8), self.x0)
        self.bind(cells.reshape(-1), np.arange(batch) * cells[0].size, cells)

    @property
    def stored_rows(self) -> int:
        return self.rows + 2 * self.top

    @property
    def capacity(self) -> int:
        """Stored columns per lane (the environment grows it on demand)."""
        return self.cells.shape[2]

    def bind(self, flat: np.ndarray, base: np.ndarray, cells: np.ndarray) -> None:
        """Use ``cells`` (B, stored_rows, capacity), a view of the 1-D ``flat``
        in which lane b's ``cells[b, 0, 0]`` is at ``base[b]``."""
        self.cells, self._flat, self._base = cells, flat, base
        self._first = np.zeros((1 + self.top, len(base)), dtype=np.int64)      # clip bounds of (column, row)
        self._last = np.array([[self.capacity - 1], [self.stored_rows - 1]])[:1 + self.top].repeat(len(base), 1)
        # the row stride and the table mask for all lanes, as arrays (faster than Python scalars)
        self._width, self._mask = np.full(len(base), self.capacity), np.full(len(base), _MASK)
        self._undefined = np.full(len(base), UNDEFINED, dtype=np.int8)

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
        """Symbols (n,) under positions x, y (n,) of ``lanes`` (n,), all
        B lanes by default; y None: row 1 (a tape)."""
        if y is not None and not self.top:           # a tape board off row 1: only the fill rule there
            return np.where(y == 1, self.read(x, None, lanes), self._fill_rule(x, y, lanes))
        xs, key = (self.xs, self.key) if lanes is None else (self.xs[lanes], self.key[lanes])
        at = (x - xs)[None] if y is None else np.stack([x - xs, y])
        h = board_hash(key, x, 1 if y is None else y) if self._const is None else None
        return self.gather(at, h, lanes)

    def gather(self, at: np.ndarray, h: np.ndarray = None, lanes: np.ndarray = None) -> np.ndarray:
        """Symbols (n,) of ``lanes`` (n,; all B by default) at ``at`` int64
        (1 + top, n): stored column x - xs, and on a grid the row y; ``h``
        (n,) ``board_hash(key, x, y)`` there (random boards only).  Int8 (n,)."""
        if lanes is None:
            base, first, last, width, mask, undefined = (self._base, self._first, self._last, self._width, self._mask,
                                                         self._undefined)
        else:
            base, first, last, width, mask, undefined = (self._base[lanes], 0, self._last[:, :1], self.capacity, _MASK,
                                                         UNDEFINED)
        at = np.minimum(np.maximum(at, first), last)   # the margins hold what lies beyond them
        index = at[0] + base
        if self.top:
            index += at[1] * width
        value = self._flat.take(index)
        if self._const is None:                        # random digits where undefined
            return np.where(value == undefined, self._digits.take(h & mask), value)
        return value

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
