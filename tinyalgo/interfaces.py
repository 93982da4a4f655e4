"""The interfaces the controller acts through (paper section 2, Figure 1).

* ``InputTape``: a head over one row of the board, moves left or right;
* ``InputGrid``: a head over the 2-D board, moves left, right, down or up;
* ``OutputTape``: write or do not write; the symbol written comes from the
  controller's symbol head, and each write fills the next output position.

As in the release (docs/original-release.md#interfaces) the input head moves on every step (there is
no "stay") and one joint action chooses (move, write): 4 actions on a tape,
8 on a grid.  Every interface holds the state of B lanes in arrays, and a
step for all lanes is a handful of NumPy operations, with no loop over lanes.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.board import Board
from tinyalgo.symbols import Vocabulary


class InputGrid:
    """Heads of B lanes over infinite 2-D boards.  Moves: 0 left, 1 right,
    2 down (y + 1), 3 up (y - 1); docs/original-release.md#interfaces."""

    MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))
    MOVE_NAMES = ("left", "right", "down", "up")

    GRID = True    # heads may leave row 1

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool = False):
        self.board = Board(batch, rows, vocab, fill, q_column, grid=self.GRID)
        self.x = np.ones(batch, dtype=np.int64)
        self.y = np.ones(batch, dtype=np.int64)
        self._dx = np.array([m[0] for m in self.MOVES], dtype=np.int64)
        self._dy = np.array([m[1] for m in self.MOVES], dtype=np.int64)

    @property
    def n_moves(self) -> int:
        return len(self.MOVES)

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell; ``moves`` (B,) in 0..n_moves-1."""
        self.x += self._dx[moves]
        self.y += self._dy[moves]

    def read(self) -> np.ndarray:
        """The symbol (B,) under every head."""
        return self.board.read(self.x, self.y if self.GRID else None)


class InputTape(InputGrid):
    """Heads of B lanes over infinite tapes (row y = 1).  Moves: 0 left, 1 right."""

    MOVES = ((-1, 0), (1, 0))
    MOVE_NAMES = ("left", "right")
    GRID = False

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell along the tape; ``moves`` (B,) in 0..1."""
        self.x += self._dx[moves]


class OutputTape:
    """What B lanes have written so far, and the targets they must write.

    ``targets`` (B, n) padded with none; ``index`` (B,) is the position the
    next write fills (the release's ``target_idx``, docs/original-release.md#writing).  In the
    environment ``targets``, ``n_outputs`` and ``index`` are views of its lane
    arrays (lanes.py) and the step checks writes itself: ``written`` is not
    kept there (what a live episode has written is ``targets[:index]``).
    """

    def __init__(self, batch: int, vocab: Vocabulary):
        self.vocab = vocab
        self.targets = np.full((batch, 1), vocab.NONE, dtype=np.int8)
        self.written = np.full((batch, 1), vocab.NONE, dtype=np.int8)
        self.n_outputs = np.ones(batch, dtype=np.int64)
        self.index = np.zeros(batch, dtype=np.int64)
        self._lanes = np.arange(batch)

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
        """The symbol (B,) each lane must write next (none once all are written)."""
        return self.targets[self._lanes, self.index].astype(np.int64)   # capacity > n_outputs: in range

    @property
    def remaining(self) -> np.ndarray:
        """Outputs still to produce (B,), counting the next one: the paper's V-hat."""
        return self.n_outputs - self.index

    def write(self, mask: np.ndarray, symbols: np.ndarray, target: np.ndarray = None,
              record: bool = True) -> np.ndarray:
        """Write ``symbols`` (B,) on the lanes where ``mask`` (B,) is True.

        Returns the bool array (B,) of correct writes; every write, right or
        wrong, advances its lane's ``index`` (docs/original-release.md#writing).  ``record=False``
        skips keeping the symbols in ``written``: the environment ends an
        episode at its first wrong write, so what a live episode has written
        is always ``targets[:index]``.
        """
        correct = mask & (symbols == (self.next_target if target is None else target))
        if record:      # position ``index`` is still empty (none): lanes that do not write leave it so
            self.written[self._lanes, self.index] = np.where(mask, symbols, self.vocab.NONE)
        self.index += mask
        return correct
