"""The lanes: the state of B environments side by side, each running its own
stream of episodes (the environment's batch, paper section 2 run B times at
once).  It is kept in two arrays so that starting new instances in k lanes is
two assignments.

``ints`` int64 (F, B) holds every per-lane integer, one row per field
(``FIELDS``), lane b in column b; ``bytes`` int8 (B, W) holds, per lane, its
stored board (``board.py``: stored_rows x wc, with margins), its targets (wt,
padded with none) and its ground-truth actions (wa, padded with -1).  The
interfaces' arrays are views of these rows and bytes: the head's x, y, the
cell it reads and its hash (``interfaces.InputGrid``), the board's origins,
key and cells (``board.Board``), the output's index, n_outputs, last symbol
written and targets (``interfaces.OutputTape``).  The interfaces and the
environment update them through those views, one named array at a time.

A batch of instances is *packed* once (``fit``: its own bytes (k, W) and
initial fields (k, F), one row per instance); ``start`` then copies k of
them into k lanes.

Two groups of fields are adjacent on purpose, because they are read as one
array: the five fields of the observation (``obs``, environment.py), and the
head's stored column ``col`` and row ``y``, the cell (col, y) that
``Board.gather`` reads (only ``col`` on a tape).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyalgo.board import board_hash
from tinyalgo.tasks.instances import Instances
from tinyalgo.interfaces import InputGrid, OutputTape

OBS_FIELDS = ("read", "prev_written", "explored", "prev_move", "prev_write")
FIELDS = OBS_FIELDS + (
    "index",        # the output position the next write fills (OutputTape.index)
    "n_outputs",    # targets of the instance
    "time",         # steps taken in the episode
    "idle",         # steps since the last write, or since the start
    "x", "col", "y",   # the head: board column, stored column x - xs, row (col and y adjacent)
    "hash",         # board_hash(key, x, y) of the head's cell (random boards)
    "xs", "x0", "key",  # the board: x of stored column 0, x of the instance's column 0, random key
    "patience",     # complexity + 2: the episode times out after that many steps without a write
    "complexity",
    "clock",        # walk: the step from which the head reads q
)
F = {name: i for i, name in enumerate(FIELDS)}


POOL_BYTES = 2 ** 25        # a pool of drawn instances stays below about 32 MiB


def pool_size(k: int, batch: int, longest: int, rows: int) -> int:
    """How many instances to draw at once when ``k`` are needed (drawing many
    at once is vectorised): 64 batches' worth, at least 1024, of instances up
    to complexity 1000; one batch's worth of longer ones; never more than
    ``POOL_BYTES`` of board, targets and actions (about (rows + 5) x
    (longest + 8) bytes an instance), and never fewer than ``k``."""
    if longest > 1000:
        return max(k, batch)
    fits = POOL_BYTES // ((rows + 5) * (longest + 8))
    return max(k, min(max(64 * batch, 1024), max(fits, batch)))


class Lanes:
    """The state of B lanes reading through ``head`` (an InputTape or
    InputGrid) and writing to ``output``; their arrays become views of the
    lanes' (see the module doc).  ``fresh`` (4,) are the observation's
    "previous step" fields of a new episode (prev_written, explored,
    prev_move, prev_write).
    """

    def __init__(self, batch: int, head: InputGrid, output: OutputTape, fresh):
        self.batch, self.board, self.output = batch, head.board, output
        board = head.board
        self._fresh = np.asarray(fresh, dtype=np.int64)
        self.ints = np.zeros((len(FIELDS), batch), dtype=np.int64)
        self.ints[F["prev_written"]:F["prev_write"] + 1] = self._fresh[:, None]
        self.ints[F["x"]] = self.ints[F["y"]] = self.ints[F["n_outputs"]] = 1
        self.ints[F["xs"]] = board.xs
        self.ints[F["hash"]] = board_hash(board.key, 1, 1)
        for name in FIELDS:                            # one view per field: lanes.time, lanes.x, ...
            setattr(self, name, self.ints[F[name]])
        self.obs = self.ints[F["read"]:F["prev_write"] + 1]             # (5, B), the observation
        self._by_lane = self.ints.T                                     # (B, F): lane b's fields in row b
        cell = self.ints[F["col"]:F["col"] + 1 + board.top]            # (col, y) on a grid, (col,) on a tape
        head.use(self.x, self.y, cell, self.hash)
        board.xs, board.x0, board.key = self.xs, self.x0, self.key
        output.index, output.n_outputs, output.last_written = self.index, self.n_outputs, self.prev_written
        # capacities: stored board columns, targets (with a spare none), ground-truth actions
        self.wc, self.wt, self.wa = board.capacity, 1, 1
        self.capacities = self.wc, self.wt, self.wa
        self.bytes = self._pack(board.cells, np.full((batch, 1), output.vocab.NONE, np.int8),
                                 np.full((batch, 1), -1, np.int8))
        self._bind()

    # --------------------------------------------------------------- layout
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
        cells, targets, self.gt_actions = self._unpack(self.bytes, self.capacities)
        self.board.bind(flat, base, cells)
        self.output.bind(flat, base + cells[0].size, targets)
        self.flat, self.action_base = flat, base + W - self.wa

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
            self.capacities = self.wc, self.wt, self.wa
            self.bytes = self._pack(*old)
            self._bind()

    def fit(self, instances: Instances) -> Packed:
        """``instances`` packed at the current capacities, growing them if they need more."""
        cells, xs = self.board.layout(instances.cells, instances.x0)
        self._grow(cells.shape[2], instances.targets.shape[1], instances.actions.shape[1])
        init = np.zeros((len(instances), len(FIELDS)), dtype=np.int64)
        init[:, F["prev_written"]:F["prev_write"] + 1] = self._fresh
        patience = instances.complexity + 2            # the timeout rule (environment.py)
        for name, value in (("x", 1), ("y", 1), ("hash", board_hash(instances.key, 1, 1)),
                            ("xs", xs), ("x0", instances.x0), ("key", instances.key),
                            ("n_outputs", instances.n_outputs), ("patience", patience),
                            ("complexity", instances.complexity), ("clock", instances.clock)):
            init[:, F[name]] = value
        return Packed(self._pack(cells, instances.targets, instances.actions), init, self.capacities)

    def start(self, packed: Packed, sl, lanes: np.ndarray) -> None:
        """Start instances ``packed[sl]`` in ``lanes`` (k,)."""
        if packed.capacities != self.capacities:      # they grew since it was packed: pack it again
            packed.bytes, packed.capacities = (self._pack(*self._unpack(packed.bytes, packed.capacities)),
                                               self.capacities)
        self.bytes[lanes] = packed.bytes[sl]
        self._by_lane[lanes] = packed.init[sl]


@dataclass
class Packed:
    """k instances ready to start in lanes: ``bytes`` int8 (k, W) packed at
    ``capacities`` (wc, wt, wa), initial fields ``init`` int64 (k, F)."""

    bytes: np.ndarray
    init: np.ndarray
    capacities: tuple

    def __len__(self) -> int:
        return len(self.init)
