"""The environment's per-lane state, in two arrays so that starting new
instances in k lanes is two assignments.

``ints`` int64 (R, B) holds every per-lane integer, one row each (``ROWS``);
``bytes`` int8 (B, W) holds, per lane, its stored board (``board.py``:
stored_rows x wc, with margins), its targets (wt, padded with none) and its
ground-truth actions (wa, padded with -1).  The interfaces' arrays (head x
and y, board origins and cells, output index and targets) are views of
these.  A batch of instances is *fitted* once (``fit``: its own bytes (k, W)
and initial rows (R, k)); ``start`` then copies k of them into k lanes.

The rows are ordered so that a step updates several with one operation:

* 0-4, ``OBS``: the observation (environment.py): the symbol read, the
  symbol written at the previous step, explored, previous move, previous
  write (the write flag of the step just taken, so also ``write``);
* 4-7, ``INCREMENT``: write, 1, correct, 1, added to
* 8-11, ``COUNTERS``: index (next output position), time (steps of the
  episode), n_correct, idle (steps since the last write or the start);
* 12-15, ``HEAD``: x, hash (``board.board_hash`` of the head's cell), col
  (x - xs: the head's stored column), y; (col, y) is where ``Board.gather``
  reads;
* then the board's stored origin xs, the instance's x0 and key, n_outputs,
  patience (= complexity + 2: the timeout, REFERENCE 2.6), complexity, and
  clock (the walk task's end, REFERENCE 1.5).
"""
from __future__ import annotations

import numpy as np

from tinyalgo.board import Board, board_hash
from tinyalgo.instances import Instances
from tinyalgo.interfaces import OutputTape

ROWS = ("read", "prev_written", "explored", "prev_move", "write", "one", "correct", "one_",
        "index", "time", "n_correct", "idle", "x", "hash", "col", "y", "xs", "x0", "key", "n_outputs", "patience",
        "complexity", "clock")
R = {name: i for i, name in enumerate(ROWS)}
OBS, INCREMENT, COUNTERS, HEAD = slice(0, 5), slice(4, 8), slice(8, 12), slice(12, 16)


class Lanes:
    """The state of B lanes over ``board`` and ``output`` (their arrays become views).

    ``fresh`` (4,) are the observation's "previous step" fields of a new
    episode (prev_written, explored, prev_move, prev_write).
    """

    def __init__(self, batch: int, board: Board, output: OutputTape, fresh):
        self.batch, self.board, self.output = batch, board, output
        self.ints = np.zeros((len(ROWS), batch), dtype=np.int64)
        self.ints[R["one"]] = self.ints[R["one_"]] = 1
        self.ints[OBS][1:] = np.asarray(fresh)[:, None]
        self.ints[R["x"]] = self.ints[R["y"]] = 1
        self.ints[R["col"]] = 1 - board.xs
        self.ints[R["n_outputs"]] = 1
        self._fresh = np.asarray(fresh)
        for name, row in zip(ROWS, self.ints):         # one view per row: lanes.time, lanes.x, ...
            setattr(self, name, row)
        self.obs, self.increment, self.counters, self.head = (self.ints[b] for b in (OBS, INCREMENT, COUNTERS, HEAD))
        self.at = self.ints[R["col"]:R["y"] + 1][:1 + board.top]      # where the board is read: (col, y) or (col,)
        # capacities: stored board columns, targets (with a spare none), ground-truth actions
        self.wc, self.wt, self.wa = board.capacity, 1, 1
        self._bytes = self._pack(board.cells, np.full((batch, 1), output.vocab.NONE, np.int8),
                                 np.full((batch, 1), -1, np.int8))
        self._bind()

    # --------------------------------------------------------------- layout
    @property
    def capacities(self):
        return self.wc, self.wt, self.wa

    def _pack(self, cells, targets, actions) -> np.ndarray:
        """Bytes (k, W) of stored boards (k, rows, <= wc), targets (k, <= wt),
        actions (k, <= wa), each padded to the capacity."""
        k, rows, c = cells.shape
        out = np.empty((k, rows * self.wc + self.wt + self.wa), dtype=np.int8)
        board_part = out[:, :rows * self.wc].reshape(k, rows, self.wc)
        board_part[:, :, :c] = cells
        board_part[:, :, c:] = self.board.blank
        for part, data, pad in ((self.targets_of(out), targets, self.output.vocab.NONE), (self.actions_of(out), actions, -1)):
            part[:, :data.shape[1]] = data
            part[:, data.shape[1]:] = pad
        return out

    def targets_of(self, packed: np.ndarray) -> np.ndarray:
        """The targets (k, wt), a view of packed bytes (k, W)."""
        start = self.board.stored_rows * self.wc
        return packed[:, start:start + self.wt]

    def actions_of(self, packed: np.ndarray) -> np.ndarray:
        """The ground-truth actions (k, wa), a view of packed bytes (k, W)."""
        return packed[:, packed.shape[1] - self.wa:]

    def _bind(self) -> None:
        """Point the board's cells, the output's targets and the flat offsets at the bytes."""
        B, W = self._bytes.shape
        flat, base = self._bytes.reshape(-1), np.arange(B) * W
        rows = self.board.stored_rows
        self.board.bind(flat, base, self._bytes[:, :rows * self.wc].reshape(B, rows, self.wc))
        self.output.targets = self.targets_of(self._bytes)
        self.gt_actions = self.actions_of(self._bytes)
        self.flat, self.target_base, self.action_base = flat, base + rows * self.wc, base + W - self.wa

    def _grow(self, wc: int, n_targets: int, n_actions: int) -> None:
        """Make room for stored boards wc wide, n_targets targets and n_actions actions."""
        old = self.board.cells, self.output.targets, self.gt_actions
        grew = False
        if wc > self.wc:
            self.wc, grew = max(wc, 2 * self.wc), True
        if n_targets >= self.wt:                       # keep one spare column of none
            self.wt, grew = max(n_targets + 1, 2 * self.wt), True
        if n_actions > self.wa:
            self.wa, grew = max(n_actions, 2 * self.wa), True
        if grew:
            self._bytes = self._pack(*old)
            self._bind()

    def fit(self, pool: Instances) -> None:
        """Give ``pool`` its packed bytes (k, W) and initial rows (R, k) at the
        current capacities, growing them if it needs more."""
        cells, xs = self.board.layout(pool.cells, pool.x0)
        self._grow(cells.shape[2], pool.targets.shape[1], pool.actions.shape[1])
        pool.lane_bytes = self._pack(cells, pool.targets, pool.actions)
        init = np.zeros((len(ROWS), len(pool)), dtype=np.int64)
        init[OBS][1:] = self._fresh[:, None]
        patience = pool.complexity + 2                 # the timeout rule, REFERENCE 2.6
        for name, value in (("one", 1), ("one_", 1), ("x", 1), ("y", 1), ("hash", board_hash(pool.key, 1, 1)), ("col", 1 - xs),
                            ("xs", xs), ("x0", pool.x0), ("key", pool.key), ("n_outputs", pool.n_outputs),
                            ("patience", patience), ("complexity", pool.complexity), ("clock", pool.clock)):
            init[R[name]] = value
        pool.lane_init, pool.capacities = init, self.capacities

    def start(self, pool: Instances, sl, lanes: np.ndarray) -> None:
        """Start instances ``pool[sl]`` in ``lanes`` (k,)."""
        if pool.capacities != self.capacities:
            self.fit(pool)                             # a capacity grew since the pool was fitted
        self._bytes[lanes] = pool.lane_bytes[sl]
        self.ints[:, lanes] = pool.lane_init[:, sl]
