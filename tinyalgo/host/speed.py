"""The batched environment's speed devices: what each one is, and why.

The rules are in ``tinyalgo/environment.py``, ``interfaces.py``, ``board.py``
and ``tasks/``: a head over a tape or a grid moves and reads, the output tape
takes writes, a step rewards them and ends episodes.  On B = 20 lanes NumPy's
cost is its overhead per call (0.2-1 us on arrays of 20 elements), not the
work, so a step is fast when it makes few calls.  The devices below remove
calls; none changes an observation, a reward or an end (tests/test_interfaces.py,
tests/test_environment.py and tests/test_gym.py check them against the rules).

1. **Packed lanes** (``Lanes``, ``Packed``, ``pool_size``).  Every per-lane
   integer of the environment and its interfaces is one row of an int64
   array ``ints`` (F, B) (``FIELDS``), and each lane's bytes (its stored
   board, its targets, its ground-truth actions) one row of an int8 array
   ``bytes`` (B, W).  The heads' x and y, the board's origins and key, the
   output's index and targets, the step's counters are views of these.  Why:
   a lane that ends its episode starts a new instance with two assignments
   (its column of integers, its row of bytes) instead of one per array, and
   instances are drawn and packed a chunk at a time (``pool_size``), which
   vectorises drawing too.  A read is one ``take`` from the flat bytes at
   per-lane offsets.  Two groups of fields are adjacent because they are
   read as one array: the five fields of the observation (one copy makes it)
   and the head's stored column and row (one clip clips both).
2. **The random board's table index, carried by the head** (``board_hash``,
   ``HeadIndex``).  The digit of a random board at (x, y) is a fixed random
   table's entry at ``key + x * PX + y * PY`` (mod 2**20, ``random_digits``):
   the board is infinite, costs no memory and reads the same digit at every
   visit.  The index is linear in x and y, so a move by (dx, dy) adds
   ``dx * PX + dy * PY`` (``HASH_STEP``): the head carries it along instead
   of computing it at every read.
3. **Range checks on unsigned views** (``as_lane_ints``, ``count_outside``).  An int64 array
   viewed as uint64 maps every negative value to a huge one, so a single
   comparison ``>= high`` finds every value outside 0..high-1; an int64
   array of the right shape is checked without a copy.
4. **Constants as arrays** (``lane_constants``).  ``a += one`` with ``one``
   an array of B ones costs less than ``a += 1``, which converts the
   Python scalar at every call; the step's constants are made once.

This module imports nothing of the package: the rules' objects (a head, a
board, an output tape, a batch of instances) come in as arguments.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# ---------------------------------------------------------------- the random table (device 2)
TABLE_BITS = 20
# A fixed table of random values, uniform modulo every base 2..10 (2520 is
# lcm(2..10)); the same on every machine, so boards are reproducible.
_TABLE = np.random.default_rng(20160101).integers(0, 2520, size=2 ** TABLE_BITS).astype(np.int64)
TABLE_MASK = np.int64(2 ** TABLE_BITS - 1)
_PX, _PY = 0x9E3779B1, 0x85EBCA77  # odd multipliers: x -> x * _PX is a bijection modulo 2**20
HASH_STEP = (_PX, _PY)             # the index's change per unit of x and of y


def board_hash(key, x, y) -> np.ndarray:
    """key + x * PX + y * PY (broadcast int64): where (x, y) of the random
    board with key ``key`` looks in the table (modulo its size)."""
    return (np.asarray(key, dtype=np.int64) + np.asarray(x, dtype=np.int64) * _PX
            + np.asarray(y, dtype=np.int64) * _PY)


def random_digits(key, x, y, base: int) -> np.ndarray:
    """Digit in 0..base-1 at (x, y) of the random board with key ``key``
    (broadcast integer arrays): the table's entry at ``board_hash`` mod
    2**20, mod ``base``.  Along any row or column the cells of a board
    differ for 2**20 positions; each instance's random key puts it at its
    own place in the table."""
    return _TABLE[board_hash(key, x, y) & TABLE_MASK] % base


_DIGITS = {}


def digit_table(base: int) -> np.ndarray:
    """The table mod ``base`` as int8 (2**20,), made once per base (1 MiB)."""
    if base not in _DIGITS:
        table = _TABLE.astype(np.int16)                # small temporaries: values < 2520
        _DIGITS[base] = np.remainder(table, base, out=table).astype(np.int8)
    return _DIGITS[base]


class HeadIndex:
    """Where B heads read their board's storage (devices 1 and 2).

    ``cell`` int64 (1 + top, B): the stored column x - xs and, on a grid,
    the row y (the head's ``y`` is ``cell[1]``); ``hash`` (B,):
    ``board_hash(key, x, y)`` of the heads' positions, kept in step by
    ``moved``.  ``read`` returns what ``Board.read(x, y)`` returns, with one
    clip, one ``take`` from the flat bytes and, on a random board, one
    lookup in the table.  ``head`` is an ``InputTape`` or ``InputGrid``.
    """

    def __init__(self, head):
        board = head.board
        self.head, self.board, self.top = head, board, board.top
        self.random = board.fill == "random"      # only a random board reads the table
        cell = np.ones((1 + board.top, len(head.x)), dtype=np.int64)
        if board.top:
            head.y = cell[1]
        self.use(cell, board_hash(board.key, head.x, head.y))
        dx = np.array([m[0] for m in head.MOVES], dtype=np.int64)
        dy = np.array([m[1] for m in head.MOVES], dtype=np.int64)
        self._step = dx * _PX + dy * _PY           # a move by (dx, dy) changes the index by this
        self._digits = digit_table(board.vocab.base)
        cells = board.cells
        self.bind(cells.reshape(-1), np.arange(len(cells)) * cells[0].size)

    def use(self, cell: np.ndarray, hash_: np.ndarray) -> None:
        """Keep the read position in these arrays (views of the lanes' integers)."""
        self.cell, self.col, self.hash = cell, cell[0], hash_

    def bind(self, flat: np.ndarray, base: np.ndarray) -> None:
        """Read the board's ``cells`` (B, stored_rows, capacity) from the 1-D
        ``flat``, in which lane b's ``cells[b, 0, 0]`` is at ``base[b]``."""
        board, B = self.board, len(base)
        self._flat, self._base = flat, base
        self._first = np.zeros((1 + self.top, B), dtype=np.int64)        # clip bounds of (column, row)
        self._last = np.array([[board.capacity - 1], [board.stored_rows - 1]])[:1 + self.top].repeat(B, 1)
        # the row stride and the table mask for all lanes, as arrays (faster than Python scalars)
        self._width, self._mask = np.full(B, board.capacity), np.full(B, TABLE_MASK)
        self._undefined = np.full(B, -1, dtype=np.int8)                # UNDEFINED: the fill rule's cells

    def moved(self, moves: np.ndarray) -> None:
        """The heads moved by ``head.MOVES[moves]``: the index follows."""
        if self.random:
            self.hash += self._step.take(moves)

    def read(self) -> np.ndarray:
        """The symbols (B,) under the heads, int8."""
        np.subtract(self.head.x, self.board.xs, out=self.col)
        at = np.minimum(np.maximum(self.cell, self._first), self._last)   # the margins hold what lies beyond
        index = at[0] + self._base
        if self.top:
            index += at[1] * self._width
        value = self._flat.take(index)
        if self.random:                                                   # the table's digit where undefined
            return np.where(value == self._undefined, self._digits.take(self.hash & self._mask), value)
        return value


# ------------------------------------------------------------- range checks (device 3)
_INT64 = np.dtype(np.int64)
_LIMITS = {}


def as_lane_ints(name: str, value, shape: tuple, high: int) -> np.ndarray:
    """``value`` as int64 of ``shape`` with every entry in 0..high-1; a
    ValueError saying what was wrong otherwise."""
    a = value if type(value) is np.ndarray else np.asarray(value)
    if a.dtype is not _INT64 or a.shape != shape:                       # int64 of the shape: nothing to convert
        check_lane_array(name, a, "iu", shape)
        a = a.astype(np.int64)
    limit = _LIMITS.get((shape, high))
    if limit is None:
        limit = _LIMITS[(shape, high)] = np.full(shape, high, dtype=np.uint64)
    if count_outside(a, limit):
        raise ValueError(f"{name} must be in 0..{high - 1}; got values from {a.min()} to {a.max()}")
    return a


def count_outside(a: np.ndarray, limits) -> int:
    """How many entries of the int64 array ``a`` lie outside 0..limits-1
    (``limits`` broadcast against ``a``, unsigned): negatives viewed as
    unsigned are huge, so one comparison finds both ends."""
    return np.count_nonzero(a.view(np.uint64) >= limits)


def check_lane_array(name: str, a: np.ndarray, kinds: str, shape: tuple) -> np.ndarray:
    """``a`` if it has ``shape`` and a dtype of ``kinds`` ("iu": integers, "f": floats); a ValueError otherwise."""
    if a.shape != shape or a.dtype.kind not in kinds:
        raise ValueError(f"{name} must be an array of shape {shape} ({'integers' if 'i' in kinds else 'floats'});"
                         f" got shape {a.shape} of {a.dtype}")
    return a


# ------------------------------------------------------------ constants as arrays (device 4)
def lane_constants(batch: int, **values):
    """An object whose attribute ``name`` is an int64 array (batch,) full of ``values[name]``."""
    return _Constants({name: np.full(batch, value, dtype=np.int64) for name, value in values.items()})


class _Constants:
    def __init__(self, arrays: dict):
        self.__dict__.update(arrays)


# ------------------------------------------------------------------- packed lanes (device 1)
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
    "clock",        # the step from which the head reads q (a task whose end rule has a clock: walk)
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
    InputGrid, with its ``HeadIndex``) and writing to ``output`` (an
    OutputTape); their arrays become views of the lanes' two arrays (device
    1).  ``fresh`` (4,) are the observation's "previous step" fields of a new
    episode (prev_written, explored, prev_move, prev_write).
    """

    def __init__(self, batch: int, head, output, fresh):
        self.batch, self.head, self.board, self.output = batch, head, head.board, output
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
        head.x, head.y = self.x, self.y
        head.index.use(self.ints[F["col"]:F["col"] + 1 + board.top], self.hash)   # (col, y) on a grid, (col,) on a tape
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
        self.board.cells = cells
        self.head.index.bind(flat, base)
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

    def fit(self, instances) -> Packed:
        """``instances`` (``tasks.Instances``) packed at the current capacities, growing them if they need more."""
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

    def ground_truth(self) -> np.ndarray:
        """The ground-truth joint action (B,) at each lane's time; -1 past its actions."""
        inside = self.time < self.wa                   # past the capacity every lane is past its actions
        actions = self.flat.take(self.action_base + np.minimum(self.time, self.wa - 1)).astype(np.int64)
        return np.where(inside, actions, -1)


@dataclass
class Packed:
    """k instances ready to start in lanes: ``bytes`` int8 (k, W) packed at
    ``capacities`` (wc, wt, wa), initial fields ``init`` int64 (k, F)."""

    bytes: np.ndarray
    init: np.ndarray
    capacities: tuple

    def __len__(self) -> int:
        return len(self.init)
