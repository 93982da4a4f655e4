"""The interfaces the controller acts through (paper section 2 and Figure 1;
section 3 says which task uses which).

* ``InputTape``: a head over one row of the board, moves left or right;
* ``InputGrid``: a head over the 2-D board, moves left, right, down or up;
* ``OutputTape``: write or do not write; the symbol written comes from the
  controller's symbol head, and each write fills the next output position.

As in the original release (docs/original-release.md#interfaces) the input
head moves on every step (there is no "stay") and one joint action chooses
(move, write): 4 actions on a tape, 8 on a grid.  Each class holds the
state of B lanes in arrays, and its methods act on all lanes at once with a
few NumPy operations, no loop over lanes.  These methods are what the
environment's step runs (``environment.Environment.step``: ``input.move``,
``output.write``; ``observe``: ``input.read``); there the arrays are views
of the environment's per-lane storage (``lanes.py``).
"""
from __future__ import annotations

import numpy as np

from tinyalgo.board import HASH_STEP, Board, board_hash
from tinyalgo.symbols import Vocabulary


class InputGrid:
    """Heads of B lanes over infinite 2-D boards.  Moves: 0 left, 1 right,
    2 down (y + 1), 3 up (y - 1); docs/original-release.md#interfaces.

    Arrays (B,): ``x``, ``y``, the head's position on the board (it starts
    at (1, 1)); ``hash``, ``board_hash(key, x, y)`` of that position, where a
    random board looks up its digit (``board.py``).  ``cell`` int64 (2, B):
    where the board's storage is read, the stored column x - xs and the row
    y (``cell[1]`` is ``y``).  Move the heads with ``move``, which keeps
    ``hash`` in step with x and y.
    """

    MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))
    MOVE_NAMES = ("left", "right", "down", "up")

    GRID = True    # heads may leave row 1

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool = False):
        self.board = Board(batch, rows, vocab, fill, q_column, grid=self.GRID)
        cell = np.ones((1 + self.board.top, batch), dtype=np.int64)
        y = cell[1] if self.GRID else np.ones(batch, dtype=np.int64)
        x = np.ones(batch, dtype=np.int64)
        self.use(x, y, cell, board_hash(self.board.key, x, y))
        self._dx = np.array([m[0] for m in self.MOVES], dtype=np.int64)
        self._dy = np.array([m[1] for m in self.MOVES], dtype=np.int64)
        # a move by (dx, dy) changes board_hash(key, x, y) by dx * PX + dy * PY
        self._hash_step = self._dx * HASH_STEP[0] + self._dy * HASH_STEP[1]
        self._random = fill == "random"           # only a random board reads the hash

    def use(self, x: np.ndarray, y: np.ndarray, cell: np.ndarray, hash_: np.ndarray) -> None:
        """Keep the heads in these arrays (the environment passes views of
        its lane storage): x, y, hash (B,); ``cell`` (1 + top, B) whose row 1
        on a grid is ``y``."""
        self.x, self.y, self.cell, self.hash = x, y, cell, hash_
        self.col = cell[0]

    @property
    def n_moves(self) -> int:
        return len(self.MOVES)

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell; ``moves`` int (B,) in 0..n_moves-1.

        On a random board the digit at (x, y) is the fixed random table's
        entry at ``board_hash(key, x, y) = key + x * PX + y * PY`` (modulo
        the table's size, ``board.random_digits``).  That is linear in x and
        y, so a move by (dx, dy) adds dx * PX + dy * PY to it: the head
        carries the hash along instead of computing it at every read.
        """
        self.x += self._dx.take(moves)
        self.y += self._dy.take(moves)
        if self._random:
            self.hash += self._hash_step.take(moves)

    def read(self) -> np.ndarray:
        """The symbol (B,) under every head, int8.

        The board keeps lane b's rectangle from column xs[b] on: the head's
        stored column is x - xs; ``Board.gather`` reads there (clipped to
        the margins, which hold what lies beyond) and, on a random board,
        replaces an undefined cell by the table's digit at ``hash``."""
        np.subtract(self.x, self.board.xs, out=self.col)
        return self.board.gather(self.cell, self.hash)


class InputTape(InputGrid):
    """Heads of B lanes over infinite tapes (row y = 1).  Moves: 0 left, 1 right.

    As ``InputGrid``, except that y stays 1 and ``cell`` (1, B) is the stored
    column alone."""

    MOVES = ((-1, 0), (1, 0))
    MOVE_NAMES = ("left", "right")
    GRID = False

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell along the tape; ``moves`` int (B,) in 0..1
        (the hash follows x, see ``InputGrid.move``)."""
        self.x += self._dx.take(moves)
        if self._random:
            self.hash += self._hash_step.take(moves)


class OutputTape:
    """What B lanes write, and the targets they must write.

    ``targets`` int8 (B, n) padded with none; ``index`` (B,) is the position
    the next write fills (the release's ``target_idx``,
    docs/original-release.md#writing); ``n_outputs`` (B,) the number of targets;
    ``last_written`` (B,) the symbol each lane wrote at the last ``write``
    (none where it did not write: the observation's second field);
    ``written`` (B, n) what each lane has written so far, kept when
    ``write`` is asked to ``record``.
    """

    def __init__(self, batch: int, vocab: Vocabulary):
        self.vocab = vocab
        self.targets = np.full((batch, 1), vocab.NONE, dtype=np.int8)
        self.written = np.full((batch, 1), vocab.NONE, dtype=np.int8)
        self.n_outputs = np.ones(batch, dtype=np.int64)
        self.index = np.zeros(batch, dtype=np.int64)
        self.last_written = np.full(batch, vocab.NONE, dtype=np.int64)
        self._lanes = np.arange(batch)

    @property
    def targets(self) -> np.ndarray:
        return self._targets

    @targets.setter
    def targets(self, targets: np.ndarray) -> None:
        targets = np.ascontiguousarray(targets, dtype=np.int8)
        self.bind(targets.reshape(-1), np.arange(len(targets)) * targets.shape[1], targets)

    def bind(self, flat: np.ndarray, base: np.ndarray, targets: np.ndarray) -> None:
        """Use ``targets`` (B, n), a view of the 1-D ``flat`` in which lane b's
        ``targets[b, 0]`` is at ``base[b]`` (the environment's lane bytes)."""
        self._targets, self._flat, self._base = targets, flat, base

    def fit(self, targets: np.ndarray) -> np.ndarray:
        """``targets`` (k, n) padded with none to the capacity, growing it if needed."""
        n, cap = targets.shape[1], self.targets.shape[1]
        if n >= cap:                                   # keep one spare column of none
            pad = ((0, 0), (0, max(n + 1, 2 * cap) - cap))
            self.targets = np.pad(self.targets, pad, constant_values=self.vocab.NONE)
            self.written = np.pad(self.written, pad, constant_values=self.vocab.NONE)
        return np.pad(targets, ((0, 0), (0, self.targets.shape[1] - n)), constant_values=self.vocab.NONE)

    @property
    def next_target(self) -> np.ndarray:
        """The symbol (B,) each lane must write next, int8 (none once all are
        written: the capacity keeps a spare column of none)."""
        return self._flat.take(self._base + self.index)

    @property
    def remaining(self) -> np.ndarray:
        """Outputs still to produce (B,), counting the next one: the paper's V-hat."""
        return self.n_outputs - self.index

    def write(self, mask: np.ndarray, symbols: np.ndarray, target: np.ndarray = None,
              record: bool = True) -> np.ndarray:
        """Write ``symbols`` (B,) on the lanes where ``mask`` bool (B,) is True.

        ``target`` (B,) is ``next_target`` (pass it if you have it).  Returns
        the bool array (B,) of correct writes.  Every write, right or wrong,
        advances its lane's ``index``, and ``last_written`` becomes the
        symbol written (none where ``mask`` is False).  ``record=False``
        skips keeping the symbols in ``written``: the environment ends an
        episode at its first wrong write, so what a live episode has written
        is always ``targets[:index]``.
        """
        if target is None:
            target = self.next_target
        correct = (symbols == target) & mask
        if record:      # position ``index`` is still empty (none): lanes that do not write leave it so
            self.written[self._lanes, self.index] = np.where(mask, symbols, self.vocab.NONE)
        self.index += mask
        self.last_written.fill(self.vocab.NONE)
        np.copyto(self.last_written, symbols, where=mask)
        return correct
