"""Where a lane's instances come from: a fixed complexity or a curriculum
(``Course``), and each lane's stream of instances drawn from its own
generator, a chunk at a time (``LaneStream`` for one lane, ``LanePools`` for
B lanes side by side).

Drawing instances one at a time costs a few hundred microseconds of NumPy
calls each; drawing a chunk of k costs about the same as drawing one.  So
every lane draws ``Course.chunk`` instances at once from its generator,
packs them (``tinyalgo.host.speed.Lanes.fit``) and starts them one per episode.
The chunk size depends only on the sampler, so a lane of the vector
environment and a single environment with the same seed draw the same
chunks, hence the same instances.  A curriculum level that advances drops the
chunk's remaining instances (drawn at the old level); ``reset(options=
{"complexity": c})`` draws one instance of complexity c from the same
generator, outside the chunk.
"""
from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding

from tinyalgo.board import UNDEFINED, random_digits
from tinyalgo.curriculum import FixedComplexity, curriculum_sampler
from tinyalgo.environment import memory_bytes
from tinyalgo.host.memory import check_memory
from tinyalgo.host.speed import F, Lanes, Packed
from tinyalgo.tasks import ALIASES, TASKS, Task, make_task
from tinyalgo.tasks.instances import Instances

CHUNK_MAX = 1024           # instances drawn at once, at most
CHUNK_BYTES = 2 ** 18      # ... and about this many packed bytes per lane


class Course:
    """The complexities of a lane's instances: ``complexity`` (fixed) or the
    paper's curriculum (section 5): level C starts at ``start`` and gains
    ``increment`` after ``advance_after`` episodes in a row are solved;
    instances of complexity U{C - spread .. C} (clamped to the task's
    minimum)."""

    start, increment, spread, top = 6, 4, 4, None

    def __init__(self, task: Task, *, complexity=None, curriculum: bool = False, advance_after: int = 100):
        if curriculum not in (True, False):
            raise ValueError(f"curriculum must be True or False; got {curriculum!r}")
        if curriculum and complexity is not None:
            raise ValueError("give either complexity (fixed) or curriculum=True, not both")
        if isinstance(advance_after, bool) or not isinstance(advance_after, (int, np.integer)) or advance_after < 1:
            raise ValueError(f"advance_after must be an integer of at least 1; got {advance_after!r}")
        self.task, self.curriculum, self.advance_after = task, bool(curriculum), int(advance_after)
        self.fixed = None if curriculum else self.check(self.default if complexity is None else complexity,
                                                         self.what)
        self.level0 = max(self.start, task.min_complexity) if curriculum else self.fixed

    default, what = 6, "complexity"

    def check(self, value, what) -> int:
        """``value`` as an int of at least the task's minimum complexity whose
        instances fit in what this process can get, else ValueError."""
        minimum = self.task.min_complexity
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{what} must be an integer of at least {minimum} for task {self.task.name!r};"
                             f" got {value!r}")
        check_memory([(memory_bytes(1, int(value), self.task.rows), f"{what} {value}", "a lane's instances")])
        return int(value)

    def sampler(self, level: int):
        """The sampler of a lane at ``level`` (the fixed complexity without a curriculum)."""
        if not self.curriculum:
            return FixedComplexity(int(level), self.task.min_complexity)
        return curriculum_sampler(int(level), self.task.min_complexity, self.spread)

    def abandoned(self, n_correct, n_outputs):
        """Whether episodes abandoned by ``reset`` (or cut by ``max_episode_steps``) with
        ``n_correct`` of ``n_outputs`` targets written count as solved: never (they
        break the run of solved episodes)."""
        return np.zeros(np.shape(n_correct), dtype=bool)

    def next_levels(self, levels: np.ndarray) -> np.ndarray:
        """The levels after an advance (capped at ``top``, if any)."""
        up = levels + self.increment
        return up if self.top is None else np.minimum(up, self.top)

    def chunk(self, sampler) -> int:
        """How many instances a lane draws at once with ``sampler``."""
        hi = getattr(sampler, "hi", getattr(sampler, "c", 1))
        return int(max(1, min(CHUNK_MAX, CHUNK_BYTES // ((self.task.rows + 8) * (hi + 8)))))

    def draw(self, rng: np.random.Generator, level: int, complexity=None) -> Instances:
        """A chunk of instances at ``level``, or one of ``complexity``."""
        sampler = self.sampler(level) if complexity is None else FixedComplexity(complexity, 1)
        k = 1 if complexity is not None else self.chunk(sampler)
        return self.task.sample(rng, sampler.draw(rng, k), level=sampler.level)


def stack(parts, none: int) -> Instances:
    """One batch of the instances of ``parts``, as ``tasks.instances.concatenate``
    makes it, padding only the arrays narrower than the widest (the lanes'
    chunks at one complexity have one width: one ``np.concatenate`` a field)."""
    if len(parts) == 1:
        return parts[0]

    def joined(arrays, fill):
        width = max(a.shape[-1] for a in arrays)
        return np.concatenate([a if a.shape[-1] == width else
                               np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])], constant_values=fill)
                               for a in arrays])

    fields = {f: np.concatenate([getattr(p, f) for p in parts])
              for f in ("x0", "key", "n_outputs", "complexity", "n_steps", "clock")}
    return Instances(cells=joined([p.cells for p in parts], -1), targets=joined([p.targets for p in parts], none),
                     actions=joined([p.actions for p in parts], -1), **fields)


def first_reads(board, packed: Packed) -> None:
    """Put each packed instance's first observed symbol (the head at (1, 1),
    ``Board.read``'s rule) in its initial ``read`` field, so that the
    observation of a lane just started is its fields, with no board read."""
    wc = packed.capacities[0]
    xs = packed.init[:, F["xs"]]
    col = np.clip(1 - xs, 0, wc - 1)
    value = packed.bytes[np.arange(len(xs)), board.top * wc + col].astype(np.int64)
    undefined = value == UNDEFINED
    if undefined.any():
        value[undefined] = random_digits(packed.init[undefined, F["key"]], 1, 1, board.vocab.base)
    packed.init[:, F["read"]] = value


def paper_course(task, *, base, complexity, curriculum, reward, advance_after, extra_curriculum) -> Course:
    """The ``Course`` of one of the paper's six tasks, from the environments'
    options (each checked: ValueError before any work)."""
    name = ALIASES.get(task, task) if isinstance(task, str) else task
    if name not in TASKS:
        raise ValueError(f"unknown task {task!r}; allowed: {', '.join(TASKS)}")
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or not 2 <= base <= 10:
        raise ValueError(f"base must be an integer in 2..10; got {base!r}")
    if reward != "binary":
        raise ValueError(f"reward must be 'binary' in a Gymnasium environment; got {reward!r} (the"
                         " 'discretized' and 'continuous' rewards score the symbol probabilities,"
                         " which a Gymnasium action does not carry: use tinyalgo.environment.Environment)")
    if curriculum not in (True, False):
        raise ValueError(f"curriculum must be True or False; got {curriculum!r}")
    extra = bool(curriculum) if extra_curriculum is None else extra_curriculum
    t = make_task(name, base, extra_curriculum=bool(extra))
    return Course(t, complexity=complexity, curriculum=curriculum, advance_after=advance_after)


def new_generator(seed=None) -> np.random.Generator:
    """A lane's generator, made as Gymnasium makes ``Env.np_random``."""
    return seeding.np_random(None if seed is None else int(seed))[0]


class LaneStream:
    """One lane's instances: its generator, its curriculum level and run of
    solved episodes, and the chunk it is starting instances from (``Packed``
    by ``lanes``, and as Python lists for the scalar single environment)."""

    def __init__(self, course: Course, lanes: Lanes):
        self.course, self.lanes = course, lanes
        self.rng = None
        self.level, self.run = course.level0, 0
        self.clear()

    def clear(self) -> None:
        self.packed, self.rows, self.inits, self.pos = None, [], [], 0

    def seed(self, seed) -> None:
        self.rng = new_generator(seed)
        self.clear()

    def next(self, complexity=None):
        """(packed, i, bytes, fields, capacities): the next instance, row i of
        ``packed``, its bytes and initial fields as lists and the capacities
        (wc, wt, wa) the bytes are laid out with; ``complexity``: one drawn
        at that complexity."""
        if self.rng is None:
            self.rng = new_generator()
        if complexity is not None:
            packed = self.lanes.fit(self.course.draw(self.rng, self.level, complexity))
            return packed, 0, packed.bytes[0].tolist(), packed.init[0].tolist(), packed.capacities
        if self.pos >= len(self.rows):
            self.packed = self.lanes.fit(self.course.draw(self.rng, self.level))
            self.rows, self.inits, self.pos = self.packed.bytes.tolist(), self.packed.init.tolist(), 0
            self.caps = self.packed.capacities
        i = self.pos
        self.pos += 1
        return self.packed, i, self.rows[i], self.inits[i], self.caps

    def abandon(self, n_correct: int, n_outputs: int) -> bool:
        """Count an episode abandoned with ``n_correct`` of ``n_outputs`` targets written
        (``Course.abandoned``); True if the level advanced."""
        return self.record(bool(self.course.abandoned(n_correct, n_outputs)))

    def record(self, solved: bool) -> bool:
        """Count an episode that ended; True if the level advanced."""
        if not self.course.curriculum:
            return False
        self.run = self.run + 1 if solved else 0
        if self.run >= self.course.advance_after:
            self.run = 0
            level = int(self.course.next_levels(np.array([self.level]))[0])
            if level != self.level:
                self.level = level
                self.clear()
                return True
        return False


class LanePools:
    """B lanes' streams side by side: the instances every lane has drawn and
    not yet started, in one ``Packed`` of B x R rows (lane b's at rows
    b R .. b R + count[b] - 1), so that starting new instances in any set of
    lanes is one ``Lanes.start``.  A lane draws its next chunk, with its own
    generator, when it has started all of its current one."""

    def __init__(self, course: Course, lanes: Lanes, batch: int):
        self.course, self.lanes, self.batch = course, lanes, batch
        self.rngs = [None] * batch
        self.levels = np.full(batch, course.level0, dtype=np.int64)
        self.runs = np.zeros(batch, dtype=np.int64)
        self.count = np.zeros(batch, dtype=np.int64)
        self.pos = np.zeros(batch, dtype=np.int64)
        self.R = 0
        self.pool = None

    def seed(self, lanes, seeds) -> None:
        for lane, s in zip(lanes, seeds):
            self.rngs[lane] = new_generator(s)
        self.count[lanes] = 0

    def start(self, lanes: np.ndarray, complexity=None) -> None:
        """Start each lane's next instance (one of ``complexity``, if given) in ``lanes`` (k,)."""
        if complexity is not None:                       # a reset's option: not the hot path
            parts = [self.course.draw(self._rng(b), self.levels[b], complexity) for b in lanes]
            self.lanes.start(self.lanes.fit(stack(parts, self.course.task.vocab.NONE)), slice(None), lanes)
            return
        pos = self.pos[lanes]
        if np.count_nonzero(pos >= self.count[lanes]):
            self._refill(lanes[pos >= self.count[lanes]])
            pos = self.pos[lanes]
        self.lanes.start(self.pool, lanes * self.R + pos, lanes)
        self.pos[lanes] = pos + 1

    def _rng(self, lane):
        if self.rngs[lane] is None:
            self.rngs[lane] = new_generator()
        return self.rngs[lane]

    def _refill(self, lanes: np.ndarray) -> None:
        """Each of ``lanes`` draws its next chunk (a loop over lanes, once per chunk of each lane's episodes)."""
        parts = [self.course.draw(self._rng(b), self.levels[b]) for b in lanes]
        ks = np.array([len(p) for p in parts])
        packed = self.lanes.fit(stack(parts, self.course.task.vocab.NONE))
        R = max(self.R, int(ks.max()))
        if self.pool is None or R > self.R:
            grown = np.zeros((self.batch, R, packed.bytes.shape[1]), dtype=np.int8)
            init = np.zeros((self.batch, R, packed.init.shape[1]), dtype=np.int64)
            if self.pool is not None:
                self._match(packed.capacities)
                grown[:, :self.R] = self.pool.bytes.reshape(self.batch, self.R, -1)
                init[:, :self.R] = self.pool.init.reshape(self.batch, self.R, -1)
            self.pool, self.R = Packed(grown.reshape(self.batch * R, -1), init.reshape(self.batch * R, -1),
                                       packed.capacities), R
        self._match(packed.capacities)
        first_reads(self.lanes.board, packed)
        rows = np.concatenate([b * R + np.arange(k) for b, k in zip(lanes, ks)])
        self.pool.bytes[rows] = packed.bytes
        self.pool.init[rows] = packed.init
        self.count[lanes], self.pos[lanes] = ks, 0

    def _match(self, capacities) -> None:
        """Bring the pool to ``capacities`` (the lanes' storage grew): ``Lanes.start`` repacks
        a ``Packed`` of other capacities, here with nothing to start."""
        if self.pool.capacities != capacities:
            self.lanes.start(self.pool, slice(0, 0), np.zeros(0, dtype=np.int64))

    def record(self, lanes: np.ndarray, solved: np.ndarray) -> None:
        """Count the episodes that ended in ``lanes``; advance the levels of
        lanes with ``advance_after`` solved episodes in a row."""
        if not self.course.curriculum or not len(lanes):
            return
        runs = np.where(solved, self.runs[lanes] + 1, 0)
        self.runs[lanes] = runs
        up = lanes[runs >= self.course.advance_after]
        if len(up):
            self.runs[up] = 0
            new = self.course.next_levels(self.levels[up])
            moved = up[new != self.levels[up]]
            self.levels[up] = new
            self.count[moved] = 0                     # the chunk was drawn at the old level
