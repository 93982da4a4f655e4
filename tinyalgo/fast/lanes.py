"""The environment's per-lane state, in two arrays so that starting new
instances in k lanes is two assignments.

``ints`` int64 (R, B) holds every per-lane integer, one row each (``ROWS``);
``bytes`` int8 (B, W) holds, per lane, its stored board (``board.py``:
stored_rows x wc, with margins), its targets (wt, padded with none) and its
ground-truth actions (wa, padded with -1).  The interfaces' arrays (head x
and y, board origins and cells, output index and targets) are views of
these.  A batch of instances is *packed* once (``fit``: its own bytes (k, W)
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

from dataclasses import dataclass

import numpy as np

from tinyalgo.board import board_hash
from tinyalgo.instances import Instances
from tinyalgo.interfaces import InputGrid, OutputTape

ROWS = ("read", "prev_written", "explored", "prev_move", "write", "one", "correct", "one_",
        "index", "time", "n_correct", "idle", "x", "hash", "col", "y", "xs", "x0", "key", "n_outputs", "patience",
        "complexity", "clock")
R = {name: i for i, name in enumerate(ROWS)}
OBS, INCREMENT, COUNTERS, HEAD = slice(0, 5), slice(4, 8), slice(8, 12), slice(12, 16)


class Lanes:
    """The state of B lanes reading through ``head`` (an InputTape or
    InputGrid) and writing to ``output``: their arrays become views of the
    lanes' (head x, y; board cells, origins, keys; output targets, index,
    n_outputs).  ``fresh`` (4,) are the observation's "previous step" fields
    of a new episode (prev_written, explored, prev_move, prev_write).
    """

    def __init__(self, batch: int, head: InputGrid, output: OutputTape, fresh):
        self.batch, self.board, self.output = batch, head.board, output
        board = head.board
        self.ints = np.zeros((len(ROWS), batch), dtype=np.int64)
        self.ints[R["one"]] = self.ints[R["one_"]] = 1
        self.ints[OBS][1:] = np.asarray(fresh)[:, None]
        self.ints[R["x"]] = self.ints[R["y"]] = 1
        self.ints[R["col"]], self.ints[R["xs"]] = 1 - board.xs, board.xs
        self.ints[R["n_outputs"]] = 1
        self._fresh = np.asarray(fresh)
        for name, row in zip(ROWS, self.ints):         # one view per row: lanes.time, lanes.x, ...
            setattr(self, name, row)
        self.obs, self.increment, self.counters, self.head = (self.ints[b] for b in (OBS, INCREMENT, COUNTERS, HEAD))
        self.at = self.ints[R["col"]:R["y"] + 1][:1 + board.top]      # where the board is read: (col, y) or (col,)
        head.x, head.y, board.xs, board.x0, board.key = self.x, self.y, self.xs, self.x0, self.key
        output.index, output.n_outputs = self.index, self.n_outputs
        # capacities: stored board columns, targets (with a spare none), ground-truth actions
        self.wc, self.wt, self.wa = board.capacity, 1, 1
        self.bytes = self._pack(board.cells, np.full((batch, 1), output.vocab.NONE, np.int8),
                                 np.full((batch, 1), -1, np.int8))
        self._bind()

    # --------------------------------------------------------------- layout
    @property
    def capacities(self):
        return self.wc, self.wt, self.wa

    def _pack(self, cells, targets, actions) -> np.ndarray:
        """Bytes (k, W) of stored boards (k, rows, <= wc), targets (k, <= wt),
        actions (k, <= wa), each padded to the current capacities."""
        out = np.empty((len(cells), self.board.stored_rows * self.wc + self.wt + self.wa), dtype=np.int8)
        for part, data, pad in zip(self._unpack(out, self.capacities), (cells, targets, actions),
                                   (self.board.blank, self.output.vocab.NONE, -1)):
            part[..., :data.shape[-1]] = data
            part[..., data.shape[-1]:] = pad
        return out

    def _unpack(self, packed: np.ndarray, capacities):
        """Views (stored boards (k, rows, wc), targets (k, wt), actions (k, wa))
        of bytes (k, W) packed at ``capacities`` (wc, wt, wa)."""
        (wc, wt, _), k, rows = capacities, len(packed), self.board.stored_rows         # the actions take the rest
        return (packed[:, :rows * wc].reshape(k, rows, wc), packed[:, rows * wc:rows * wc + wt],
                packed[:, rows * wc + wt:])

    def _bind(self) -> None:
        """Point the board's cells, the output's targets and the flat offsets at the bytes."""
        B, W = self.bytes.shape
        flat, base = self.bytes.reshape(-1), np.arange(B) * W
        cells, self.output.targets, self.gt_actions = self._unpack(self.bytes, self.capacities)
        self.board.bind(flat, base, cells)
        self.flat, self.target_base, self.action_base = flat, base + cells[0].size, base + W - self.wa

    def _grow(self, wc: int, n_targets: int, n_actions: int) -> None:
        """Make room for stored boards wc wide, n_targets targets and n_actions actions."""
        old = self._unpack(self.bytes, self.capacities)
        grew = False
        if wc > self.wc:
            self.wc, grew = max(wc, 2 * self.wc), True
        if n_targets >= self.wt:                       # keep one spare column of none
            self.wt, grew = max(n_targets + 1, 2 * self.wt), True
        if n_actions > self.wa:
            self.wa, grew = max(n_actions, 2 * self.wa), True
        if grew:
            self.bytes = self._pack(*old)
            self._bind()

    def fit(self, instances: Instances) -> "Packed":
        """``instances`` packed at the current capacities, growing them if they need more."""
        cells, xs = self.board.layout(instances.cells, instances.x0)
        self._grow(cells.shape[2], instances.targets.shape[1], instances.actions.shape[1])
        init = np.zeros((len(ROWS), len(instances)), dtype=np.int64)
        init[OBS][1:] = self._fresh[:, None]
        patience = instances.complexity + 2            # the timeout rule, REFERENCE 2.6
        for name, value in (("one", 1), ("one_", 1), ("x", 1), ("y", 1), ("hash", board_hash(instances.key, 1, 1)),
                            ("xs", xs), ("col", 1 - xs), ("x0", instances.x0), ("key", instances.key),
                            ("n_outputs", instances.n_outputs), ("patience", patience),
                            ("complexity", instances.complexity), ("clock", instances.clock)):
            init[R[name]] = value
        return Packed(self._pack(cells, instances.targets, instances.actions), init, self.capacities)

    def start(self, packed: "Packed", sl, lanes: np.ndarray) -> None:
        """Start instances ``packed[sl]`` in ``lanes`` (k,)."""
        if packed.capacities != self.capacities:      # they grew since it was packed: pack it again
            packed.bytes, packed.capacities = self._pack(*self._unpack(packed.bytes, packed.capacities)), self.capacities
        self.bytes[lanes] = packed.bytes[sl]
        self.ints[:, lanes] = packed.init[:, sl]


@dataclass
class Packed:
    """k instances ready to start in lanes: ``bytes`` int8 (k, W) packed at
    ``capacities`` (wc, wt, wa), initial rows ``init`` int64 (R, k)."""

    bytes: np.ndarray
    init: np.ndarray
    capacities: tuple

    def __len__(self) -> int:
        return self.init.shape[1]
