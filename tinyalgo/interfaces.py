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
``output.write``; ``observe``: ``input.read``).  How the environment makes
them fast (its arrays are views of one storage per lane, the heads carry
their place in the random table) is in ``tinyalgo.host.speed``.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.board import Board
from tinyalgo.host.speed import HeadIndex
from tinyalgo.symbols import Vocabulary


class InputGrid:
    """Heads of B lanes over infinite 2-D boards.  Moves: 0 left, 1 right,
    2 down (y + 1), 3 up (y - 1); docs/original-release.md#interfaces.

    Arrays (B,): ``x``, ``y``, the head's position on the board (it starts
    at (1, 1)).  ``move`` moves every head one cell, ``read`` returns the
    symbol under every head.  ``index`` is where the heads read the board's
    storage (``tinyalgo.host.speed.HeadIndex``, with ``hash``, the heads'
    place in the random board's table).
    """

    MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))
    MOVE_NAMES = ("left", "right", "down", "up")

    GRID = True    # heads may leave row 1

    def __init__(self, batch: int, rows: int, vocab: Vocabulary, fill: str, q_column: bool = False):
        self.board = Board(batch, rows=rows, vocab=vocab, fill=fill, q_column=q_column, grid=self.GRID)
        self.x = np.ones(batch, dtype=np.int64)
        self.y = np.ones(batch, dtype=np.int64)
        self._dx = np.array([m[0] for m in self.MOVES], dtype=np.int64)
        self._dy = np.array([m[1] for m in self.MOVES], dtype=np.int64)
        self.index = HeadIndex(self)      # where the heads read the board's storage (it keeps y there, host.speed)

    @property
    def n_moves(self) -> int:
        return len(self.MOVES)

    @property
    def hash(self) -> np.ndarray:
        """(B,) where each head's position looks in the random board's table (``host.speed.board_hash``)."""
        return self.index.hash

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell: (x, y) += MOVES[moves], ``moves`` int (B,) in 0..n_moves-1."""
        self.x += self._dx.take(moves)
        self.y += self._dy.take(moves)
        self.index.moved(moves)

    def read(self) -> np.ndarray:
        """The symbol (B,) under every head, int8: ``board.read(x, y)``."""
        return self.index.read()


class InputTape(InputGrid):
    """Heads of B lanes over infinite tapes (row y = 1).  Moves: 0 left, 1 right.

    As ``InputGrid``, except that y stays 1."""

    MOVES = ((-1, 0), (1, 0))
    MOVE_NAMES = ("left", "right")
    GRID = False

    def move(self, moves: np.ndarray) -> None:
        """Move every head one cell along the tape: x += MOVES[moves][0], ``moves`` int (B,) in 0..1."""
        self.x += self._dx.take(moves)
        self.index.moved(moves)


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
        """Keep the targets (B, n) in ``targets``, a view of the 1-D ``flat``
        in which lane b's ``targets[b, 0]`` is at ``base[b]`` (the
        environment keeps them in its lanes' bytes, ``tinyalgo.host.speed``);
        ``next_target`` is one ``take`` there."""
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
