"""The batched environment: B lanes, each solving a stream of task instances.

The lanes act through the interfaces of paper section 2 (tinyalgo/interfaces.py):
a step writes on the output tape (``OutputTape.write``) and moves the input
heads (``InputTape.move`` / ``InputGrid.move``); the observation reads the
symbol under the heads (``read``).  The state of the B lanes (the
interfaces' arrays, the episode's counters ``lanes.time``, ``lanes.idle``,
..., the observation's fields ``lanes.obs``) is one ``Lanes`` object; how a
step stays fast on B lanes (one storage for every lane's arrays, the heads'
place in the random table, range checks on unsigned views, constants as
arrays) is in ``tinyalgo.host.speed``.

Observation (docs/original-release.md#observation), an int array (B, 5), one
column per field:

=====  ====================================  ==============================
field  meaning                               values (``obs_sizes``)
=====  ====================================  ==============================
0      symbol under the input head           0..V-1 (vocabulary)
1      symbol written at the previous step   0..V-1 (none if no write)
2      explored earlier in this episode      0 no, 1 yes
3      previous move                         0..n_moves-1, n_moves = none
4      previous write flag                   0 no, 1 yes, 2 = none
=====  ====================================  ==============================

A step takes joint actions (``move + n_moves * write``) and the symbols
written; it returns rewards and which lanes ended and why (docs/original-release.md#timeout):
``ALL_WRITTEN``, ``WRONG_WRITE`` or ``TIMEOUT`` (time since the last write,
or the start, reaches complexity + 2).  A task may add its own end rule
(``Task.q_from_clock``: walk's cells all read ``q`` from the instance's
clock on).  A lane whose episode ended starts a
new instance at once, drawn with the environment's complexity sampler, so the
observation returned is already that of the new episode's first step (unless
``restart`` is False: then the lane stays at its episode's last step until
``load`` gives it an instance).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo.curriculum import FixedComplexity
from tinyalgo.host.memory import check_memory
from tinyalgo.host.speed import Lanes, Packed, as_lane_ints, check_lane_array, lane_constants, pool_size
from tinyalgo.interfaces import InputGrid, InputTape, OutputTape
from tinyalgo.rewards import REWARDS, write_rewards
from tinyalgo.tasks import Task, make_task
from tinyalgo.tasks.instances import Instances, concatenate

RUNNING, ALL_WRITTEN, WRONG_WRITE, TIMEOUT = 0, 1, 2, 3
BYTES_PER_CELL = 100          # drawing instances: 40-70 bytes per complexity unit of a pooled instance (measured)
LANE_BYTES = 256              # per lane: its fields (host.speed.Lanes), the step's temporaries
END_REASONS = ("running", "all written", "wrong write", "timeout")


def memory_bytes(batch: int, complexity: int, rows: int = 3) -> int:
    """An upper bound of the memory of ``batch`` lanes drawing instances of up
    to ``complexity``: the pool of drawn instances (``host.speed.pool_size``) at
    ``BYTES_PER_CELL`` per complexity unit, and ``LANE_BYTES`` per lane."""
    return pool_size(batch, batch, complexity, rows) * complexity * BYTES_PER_CELL + batch * LANE_BYTES


def check_seed(seed):
    """``seed`` if it is None or an integer >= 0 (what ``numpy.random.default_rng`` takes); a ValueError otherwise."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be None or an integer of at least 0; got {seed!r}")
    return seed


class StepResult(NamedTuple):
    """What ``Environment.step`` returns; every array has shape (B,).

    obs (B, 5) is the observation of the next step (of a new episode where
    ``done``); ``n_correct`` counts the correct outputs of the episode so far
    (of the episode that just ended, where ``done``).
    """

    obs: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    reason: np.ndarray
    n_correct: np.ndarray


class Environment:
    """B lanes of one task.

    Parameters
    ----------
    task
        a task name (see ``tasks.TASKS``) or a ``Task``.
    batch_size
        number of lanes B >= 1.
    base
        2..10 (ignored if ``task`` is a Task).
    complexity
        an int (every instance has that complexity) or a sampler
        (``complexity.UniformComplexity``, ...); default the task's minimum.
    reward
        "binary" (0/1, default), "discretized" or "continuous" (App. C).
    seed
        seed of the environment's ``numpy.random.Generator``.
    extra_curriculum
        the release's extra curriculum, for a task that has one
        (``Task.has_extra_curriculum``: 3-number addition); on by default for
        training, off at test.
    """

    def __init__(self, task, batch_size: int = 20, *, base: int = 10, complexity=None, reward: str = "binary",
                 seed=None, extra_curriculum: bool = True):
        if not isinstance(task, Task):
            task = make_task(task, base, extra_curriculum=extra_curriculum)
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer of at least 1; got {batch_size!r}")
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; allowed: {', '.join(REWARDS)}")
        check_seed(seed)
        check_memory([(memory_bytes(int(batch_size), 1, task.rows), f"batch_size {batch_size}", "its lanes")])
        self.task, self.vocab, self.reward_kind = task, task.vocab, reward
        self.batch = B = int(batch_size)
        interface = InputTape if task.interface == "tape" else InputGrid
        self.input = interface(B, rows=task.rows, vocab=self.vocab, fill=task.fill, q_column=task.q_column)
        self.output = OutputTape(B, self.vocab)
        self.n_moves, self.n_actions = task.n_moves, task.n_actions
        self.obs_sizes = (self.vocab.size, self.vocab.size, 2, self.n_moves + 1, 3)
        self.rng = np.random.default_rng(seed)
        self.sampler = None
        self.set_complexity(task.min_complexity if complexity is None else complexity)
        # the lanes' state: the interfaces' arrays and the step's counters (host.speed.Lanes)
        fresh = (self.vocab.NONE, 0, self.n_moves, 2)      # the "previous step" fields of a new episode
        self.lanes = lanes = Lanes(B, self.input, self.output, fresh)
        self.time, self.clock, self.complexity, self.patience = (lanes.time, lanes.clock, lanes.complexity,
                                                                 lanes.patience)
        # a joint action is move + n_moves * write
        a = np.arange(self.n_actions)
        self._moves, self._writes = a % self.n_moves, a >= self.n_moves
        self._const = lane_constants(B, zero=0, one=1, none=self.vocab.NONE, q=self.vocab.Q, all_written=ALL_WRITTEN,
                                    wrong_write=WRONG_WRITE, timeout=TIMEOUT)
        self._all = np.arange(B)
        self.episodes_started = 0
        # False: a lane whose episode ends keeps its last state (its observation is
        # the episode's last) until ``load`` starts a new instance there; the
        # Gymnasium layer (tinyalgo/gym) starts its lanes' instances itself
        self.restart = True
        self.reset()

    # ----------------------------------------------------------------- setup
    def set_complexity(self, complexity) -> None:
        """Draw future instances with ``complexity`` (an int or a sampler)."""
        if isinstance(complexity, (int, np.integer)) and not isinstance(complexity, bool):
            complexity = FixedComplexity(complexity, self.task.min_complexity)
        elif not hasattr(complexity, "draw"):
            raise ValueError(f"complexity must be an integer of at least {self.task.min_complexity}"
                             f" or a sampler with draw(rng, k); got {complexity!r}")
        longest = int(getattr(complexity, "c", getattr(complexity, "hi", 0)))
        check_memory([(memory_bytes(self.batch, longest, self.task.rows), f"complexity {longest}",
                       f"drawing instances for {self.batch} lanes")])
        self.sampler = complexity
        self._pool, self._pool_pos, self._pool_size = None, 0, 0

    def reset(self, seed=None) -> np.ndarray:
        """New instances in every lane; returns the first observation (B, 5)."""
        if seed is not None:
            self.rng = np.random.default_rng(check_seed(seed))
            self._pool, self._pool_pos, self._pool_size = None, 0, 0
        self._start(*self._draw(self.batch), self._all)
        return self.observe()

    def _draw(self, k: int):
        """k fresh instances as (pool, slice): drawn a chunk at a time (vectorised)."""
        if self._pool_pos + k > self._pool_size:
            longest = getattr(self.sampler, "c", getattr(self.sampler, "hi", 0))
            big = longest > 1000
            chunk = pool_size(k, self.batch, longest, self.task.rows)
            c = self.sampler.draw(self.rng, chunk)
            kw = dict(level=getattr(self.sampler, "level", None),
                      low_accuracy=getattr(self.sampler, "low_accuracy", False))
            step = 4 if big else chunk            # long instances a few at a time: small temporaries
            parts = [self.task.sample(self.rng, c[i:i + step], **kw) for i in range(0, chunk, step)]
            drawn = parts[0] if len(parts) == 1 else concatenate(parts, self.vocab.NONE)
            del parts                             # long instances: keep one copy of them while packing
            self._pool, self._pool_pos = self.lanes.fit(drawn), 0
            self._pool_size = len(self._pool)
        sl = slice(self._pool_pos, self._pool_pos + k)
        self._pool_pos += k
        return self._pool, sl

    def load(self, instances: Instances, lanes=None) -> np.ndarray:
        """Start ``instances`` (k of them) in ``lanes`` (k,; default all) and
        return the observation; use it to give the environment canned boards."""
        lanes = self._all[:len(instances)] if lanes is None else np.asarray(lanes)
        if len(lanes) != len(instances):
            raise ValueError(f"{len(instances)} instances for {len(lanes)} lanes")
        self._start(self.lanes.fit(instances), slice(None), lanes)
        return self.observe()

    def _start(self, pool: Packed, sl: slice, lanes: np.ndarray) -> None:
        """Start instances ``pool[sl]`` in ``lanes``."""
        self.lanes.start(pool, sl, lanes)
        self.episodes_started += len(lanes)

    # ------------------------------------------------------------ observing
    def observe(self) -> np.ndarray:
        """The observation (B, 5) of the current step (see the module doc)."""
        lanes = self.lanes
        lanes.read[:] = self.input.read()
        if self.task.q_from_clock:           # the task's end rule: every cell reads q from the clock on (walk)
            np.copyto(lanes.read, self._const.q, where=lanes.time >= lanes.clock)
        return lanes.obs.T.copy()

    @property
    def v_hat(self) -> np.ndarray:
        """Outputs still to produce (B,), counting the one that may be written
        now: the paper's V-hat (section 6.1; docs/original-release.md#v-hat), >= 1 in an episode."""
        return self.output.remaining

    @property
    def target_index(self) -> np.ndarray:
        """Index (B,) of the next target to write (0-based)."""
        return self.output.index

    @property
    def next_target(self) -> np.ndarray:
        """The symbol (B,) that a write at this step must produce."""
        return self.output.next_target.astype(np.int64)

    @property
    def n_outputs(self) -> np.ndarray:
        return self.output.n_outputs

    @property
    def gt_actions(self) -> np.ndarray:
        """The ground-truth actions (B, capacity) of every lane, padded with -1."""
        return self.lanes.gt_actions

    def ground_truth(self) -> np.ndarray:
        """The ground-truth joint action (B,) of this step (docs/original-release.md#ground-truth);
        -1 once a lane has left the reference path's length."""
        return self.lanes.ground_truth()

    # --------------------------------------------------------------- acting
    def _check_explored(self, explored) -> np.ndarray:
        """``explored`` as bool (B,): bools, or integers 0 and 1.  ValueError if not."""
        a = explored if type(explored) is np.ndarray else np.asarray(explored)
        if a.shape != (self.batch,) or a.dtype.kind not in "biu":
            raise ValueError(f"explored must be a bool array of shape ({self.batch},), one flag per lane;"
                             f" got shape {a.shape} of {a.dtype}")
        if a.dtype.kind != "b":
            if np.count_nonzero((a != 0) & (a != 1)):
                raise ValueError(f"explored must hold True/False (or 0/1); got values from {a.min()} to {a.max()}")
            a = a.astype(bool)
        return a

    def step(self, actions, symbols=None, probs=None, explored=None) -> StepResult:
        """Apply one joint action per lane.

        actions : int (B,)
            in 0..n_actions-1 (``move + n_moves * write``).
        symbols : int (B,)
            in 0..V-1, the symbol written (read where writing).
        probs : float (B, V)
            the symbol head's probabilities; needed by the "discretized" and
            "continuous" rewards.
        explored : bool (B,)
            this step's action was exploratory (non-greedy); sets the observed
            explored flag from the next step on.

        The observation returned is a copy: the environment keeps its own.
        """
        B, lanes, output = self.batch, self.lanes, self.output
        actions = as_lane_ints("actions", actions, (B,), self.n_actions)
        if explored is not None:
            explored = self._check_explored(explored)
        write = self._writes.take(actions)                               # bool (B,)
        if symbols is None:
            if np.count_nonzero(write):
                raise ValueError("symbols (B,) are required when an action writes")
            symbols = self._const.none
        else:
            symbols = as_lane_ints("symbols", symbols, (B,), self.vocab.size)
        if self.reward_kind != "binary" and np.count_nonzero(write):
            probs = check_lane_array("probs", np.asarray(probs), "f", (B, self.vocab.size))
        # the interfaces act: the output tape takes the writes, the input heads move
        target = output.next_target                                        # int8 (B,): what a write must produce
        correct = output.write(write, symbols, target, record=False)       # bool (B,); index += write
        reward = write_rewards(self.reward_kind, write, correct, target, probs, self.vocab.base)
        moves = self._moves.take(actions)
        self.input.move(moves)
        # the episode's clocks
        c = self._const
        lanes.time += c.one
        lanes.idle += c.one
        np.copyto(lanes.idle, c.zero, where=write)                         # steps since the last write
        # why lanes end (docs/original-release.md#timeout), in order of precedence:
        # a wrong write, all targets written, the timeout (complexity + 2 steps without a write)
        wrong = write > correct
        reason = (lanes.idle >= lanes.patience) * c.timeout
        np.copyto(reason, c.all_written, where=output.index >= output.n_outputs)
        np.copyto(reason, c.wrong_write, where=wrong)
        done = reason.astype(bool)
        n_correct = output.index - wrong             # every write before the first wrong one was right
        # the observation's "previous step" fields (prev_written is the output's last_written)
        lanes.prev_move[:] = moves
        lanes.prev_write[:] = write
        if explored is not None:
            lanes.explored |= explored
        ended = done.nonzero()[0]
        if len(ended) and self.restart:
            self._start(*self._draw(len(ended)), ended)
        return StepResult(self.observe(), reward, done, reason, n_correct)

    # views on the observation memory, for readers and the renderer
    prev_written = property(lambda self: self.lanes.prev_written)
    explored = property(lambda self: self.lanes.explored)
    prev_move = property(lambda self: self.lanes.prev_move)
    prev_write = property(lambda self: self.lanes.prev_write)
