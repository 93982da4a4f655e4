"""The batched environment: B lanes, each solving a stream of task instances.

Observation (REFERENCE 2.2), an int array (B, 5), one column per field:

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
written; it returns rewards and which lanes ended and why (REFERENCE 2.6):
``ALL_WRITTEN``, ``WRONG_WRITE`` or ``TIMEOUT`` (time since the last write,
or the start, reaches complexity + 2).  A lane whose episode ended starts a
new instance at once, drawn with the environment's complexity sampler, so the
observation returned is already that of the new episode's first step.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo.complexity import FixedComplexity
from tinyalgo.instances import Instances, concatenate
from tinyalgo.interfaces import InputGrid, InputTape, OutputTape
from tinyalgo.rewards import REWARDS, write_rewards
from tinyalgo.tasks import Task, make_task

RUNNING, ALL_WRITTEN, WRONG_WRITE, TIMEOUT = 0, 1, 2, 3
LANE_ROWS = ("x0", "key", "x", "y", "n_outputs", "index", "complexity", "clock", "time", "deadline", "patience",
             "n_correct")
END_REASONS = ("running", "all written", "wrong write", "timeout")


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
    task : a task name (see ``tasks.TASKS``) or a ``Task``.
    batch_size : number of lanes B >= 1.
    base : 2..10 (ignored if ``task`` is a Task).
    complexity : an int (every instance has that complexity) or a sampler
        (``complexity.UniformComplexity``, ...); default the task's minimum.
    reward : "binary" (0/1, default), "discretized" or "continuous" (App. C).
    seed : seed of the environment's ``numpy.random.Generator``.
    extra_curriculum : 3-number addition only: the release's extra
        curriculum (on by default for training; turn it off at test).
    """

    def __init__(self, task, batch_size: int = 20, base: int = 10, complexity=None, reward: str = "binary",
                 seed=None, extra_curriculum: bool = True):
        if not isinstance(task, Task):
            task = make_task(task, base, **({"extra_curriculum": extra_curriculum}
                                            if task in ("addition3", "3-number-addition", "add3") else {}))
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer of at least 1; got {batch_size!r}")
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; allowed: {', '.join(REWARDS)}")
        self.task, self.vocab, self.reward_kind = task, task.vocab, reward
        self.batch = B = int(batch_size)
        interface = InputTape if task.interface == "tape" else InputGrid
        self.input = interface(B, task.rows, self.vocab, task.fill, task.q_column)
        self.output = OutputTape(B, self.vocab)
        self.n_moves, self.n_actions = task.n_moves, task.n_actions
        self.obs_sizes = (self.vocab.size, self.vocab.size, 2, self.n_moves + 1, 3)
        self.rng = np.random.default_rng(seed)
        self.sampler = None
        self.set_complexity(task.min_complexity if complexity is None else complexity)
        self._lanes = np.arange(B)
        # Every per-lane integer lives in one array, a row each; the interfaces'
        # attributes are views of their rows, so starting new instances in k
        # lanes is one assignment.  time: steps taken in this episode;
        # deadline: the step at which it times out (complexity + 2 steps after
        # the last write or the start, REFERENCE 2.6), patience = complexity + 2;
        # n_correct: right outputs.
        board = self.input.board
        owners = {"x0": board, "key": board, "x": self.input, "y": self.input,
                  "n_outputs": self.output, "index": self.output}
        self._lane = np.zeros((len(LANE_ROWS), B), dtype=np.int64)
        for row, name in enumerate(LANE_ROWS):
            owner = owners.get(name, self)
            if hasattr(owner, name):
                self._lane[row] = getattr(owner, name)
            setattr(owner, name, self._lane[row])
        # the "previous step" fields of the observation (columns 1-4)
        self._fresh = np.array([self.vocab.NONE, 0, self.n_moves, 2], dtype=np.int64)
        self._memory = np.tile(self._fresh, (B, 1))
        self.gt_actions = np.full((B, 1), -1, dtype=np.int8)
        self._has_clock = task.name == "walk"
        self.episodes_started = 0
        self.reset()

    # ----------------------------------------------------------------- setup
    def set_complexity(self, complexity) -> None:
        """Draw future instances with ``complexity`` (an int or a sampler)."""
        if isinstance(complexity, (int, np.integer)) and not isinstance(complexity, bool):
            complexity = FixedComplexity(complexity, self.task.min_complexity)
        elif not hasattr(complexity, "draw"):
            raise ValueError(f"complexity must be an integer of at least {self.task.min_complexity}"
                             f" or a sampler with draw(rng, k); got {complexity!r}")
        self.sampler = complexity
        self._pool, self._pool_pos = None, 0

    def reset(self, seed=None) -> np.ndarray:
        """New instances in every lane; returns the first observation (B, 5)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self._pool, self._pool_pos = None, 0
        self._start(*self._draw(self.batch), self._lanes)
        return self.observe()

    def _draw(self, k: int):
        """k fresh instances as (pool, slice): drawn a chunk at a time (vectorised)."""
        if self._pool is None or self._pool_pos + k > len(self._pool):
            big = getattr(self.sampler, "c", getattr(self.sampler, "hi", 0)) > 1000
            chunk = max(k, self.batch if big else 64 * self.batch, 1 if big else 1024)   # ~0.3 us an instance
            c = self.sampler.draw(self.rng, chunk)
            kw = dict(level=getattr(self.sampler, "level", None), low_accuracy=getattr(self.sampler, "low_accuracy", False))
            step = 4 if big else chunk            # long instances a few at a time: small temporaries
            parts = [self.task.sample(self.rng, c[i:i + step], **kw) for i in range(0, chunk, step)]
            self._pool = parts[0] if len(parts) == 1 else concatenate(parts, self.vocab.NONE)
            self._pool_pos = 0
            self._fit(self._pool)
        sl = slice(self._pool_pos, self._pool_pos + k)
        self._pool_pos += k
        return self._pool, sl

    def _fit(self, pool: Instances) -> None:
        """Pad a pool's arrays to the lanes' capacities (growing them if
        needed), so that starting an instance is one assignment per array."""
        pool.cells = self.input.board.fit(pool.cells, pool.x0)
        pool.targets = self.output.fit(pool.targets)
        s, cap = pool.actions.shape[1], self.gt_actions.shape[1]
        if s > cap:
            self.gt_actions = np.pad(self.gt_actions, ((0, 0), (0, max(s, 2 * cap) - cap)), constant_values=-1)
        pool.actions = np.pad(pool.actions, ((0, 0), (0, self.gt_actions.shape[1] - s)), constant_values=-1)
        init = np.zeros((len(LANE_ROWS), len(pool)), dtype=np.int64)     # each lane's row values at its start
        patience = pool.complexity + 2                                     # the timeout rule, REFERENCE 2.6
        for name, value in (("x0", pool.x0), ("key", pool.key), ("x", 1), ("y", 1), ("n_outputs", pool.n_outputs),
                            ("complexity", pool.complexity), ("clock", pool.clock), ("deadline", patience),
                            ("patience", patience)):
            init[LANE_ROWS.index(name)] = value
        pool.lane_init = init

    def load(self, instances: Instances, lanes=None) -> np.ndarray:
        """Start ``instances`` (k of them) in ``lanes`` (k,; default all) and
        return the observation; use it to give the environment canned boards."""
        lanes = self._lanes[:len(instances)] if lanes is None else np.asarray(lanes)
        if len(lanes) != len(instances):
            raise ValueError(f"{len(instances)} instances for {len(lanes)} lanes")
        instances = instances.take(slice(None))
        self._fit(instances)
        self._start(instances, slice(None), lanes)
        return self.observe()

    def _start(self, pool: Instances, sl: slice, lanes: np.ndarray) -> None:
        """Start instances ``pool[sl]`` in ``lanes``."""
        if (pool.cells.shape[2], pool.targets.shape[1], pool.actions.shape[1]) != (
                self.input.board.capacity, self.output.targets.shape[1], self.gt_actions.shape[1]):
            self._fit(pool)                            # a capacity grew since the pool was drawn
        self.input.board.cells[lanes] = pool.cells[sl]          # the pool is fitted to the capacities
        self.output.targets[lanes] = pool.targets[sl]
        self.gt_actions[lanes] = pool.actions[sl]
        self._lane[:, lanes] = pool.lane_init[:, sl]            # heads, counters, origins, output index
        self._memory[lanes] = self._fresh
        self.episodes_started += len(lanes)

    # ------------------------------------------------------------ observing
    def observe(self) -> np.ndarray:
        """The observation (B, 5) of the current step (see the module doc)."""
        obs = np.empty((self.batch, 5), dtype=np.int64)
        obs[:, 0] = self.input.read()
        if self._has_clock:
            obs[self.time >= self.clock, 0] = self.vocab.Q
        obs[:, 1:] = self._memory
        return obs

    @property
    def v_hat(self) -> np.ndarray:
        """Outputs still to produce (B,), counting the one that may be written
        now: the paper's V-hat (section 6.1; REFERENCE 4.1), >= 1 in an episode."""
        return self.output.remaining

    @property
    def target_index(self) -> np.ndarray:
        """Index (B,) of the next target to write (0-based)."""
        return self.output.index

    @property
    def next_target(self) -> np.ndarray:
        """The symbol (B,) that a write at this step must produce."""
        return self.output.next_target

    @property
    def n_outputs(self) -> np.ndarray:
        return self.output.n_outputs

    def ground_truth(self) -> np.ndarray:
        """The ground-truth joint action (B,) of this step (REFERENCE 1.10);
        -1 once a lane has left the reference path's length."""
        return self.gt_actions[self._lanes, np.minimum(self.time, self.gt_actions.shape[1] - 1)].astype(np.int64)

    # --------------------------------------------------------------- acting
    def _check(self, name, value, dtype_kind, shape, high):
        a = value if type(value) is np.ndarray else np.asarray(value)
        if a.shape != shape or a.dtype.kind not in dtype_kind:
            raise ValueError(f"{name} must be an array of shape {shape} ({'integers' if 'i' in dtype_kind else 'floats'});"
                             f" got shape {a.shape} of {a.dtype}")
        if high is not None:
            if a.dtype != np.int64:
                a = a.astype(np.int64)
            if a.view(np.uint64).max() >= high:          # negatives viewed as unsigned are huge
                raise ValueError(f"{name} must be in 0..{high - 1}; got values from {a.min()} to {a.max()}")
        return a

    def step(self, actions, symbols=None, probs=None, explored=None) -> StepResult:
        """Apply one joint action per lane.

        actions : int (B,) in 0..n_actions-1 (``move + n_moves * write``).
        symbols : int (B,) in 0..V-1, the symbol written (read where writing).
        probs : float (B, V), the symbol head's probabilities; needed by the
            "discretized" and "continuous" rewards.
        explored : bool (B,), this step's action was exploratory (non-greedy);
            sets the observed explored flag from the next step on.

        The observation returned is also the environment's memory of the
        previous step: read it, do not modify it.
        """
        B = self.batch
        actions = self._check("actions", actions, "iu", (B,), self.n_actions)
        write = actions >= self.n_moves
        move = actions - self.n_moves * write
        any_write = write.any()
        if symbols is None:
            if any_write:
                raise ValueError("symbols (B,) are required when an action writes")
            symbols = np.full(B, self.vocab.NONE, dtype=np.int64)
        else:
            symbols = self._check("symbols", symbols, "iu", (B,), self.vocab.size)
        if self.reward_kind != "binary" and any_write:
            probs = self._check("probs", probs, "f", (B, self.vocab.size), None)
        out = self.output
        target = out.targets[self._lanes, out.index]                 # int8: what a write must produce now
        correct = out.write(write, symbols, target, record=False)    # live episodes only ever wrote targets
        reward = write_rewards(self.reward_kind, write, correct, target, probs, self.vocab.base)
        self.n_correct += correct
        self.time += 1
        np.copyto(self.deadline, self.time + self.patience, where=write)
        self.input.move(move)
        # why lanes end (REFERENCE 2.6), in order of precedence: a wrong write,
        # all targets written, the timeout
        reason = (self.time >= self.deadline) * TIMEOUT
        reason[out.index >= out.n_outputs] = ALL_WRITTEN
        reason[write > correct] = WRONG_WRITE
        done = reason > 0
        n_correct = self.n_correct.copy()
        obs = np.empty((B, 5), dtype=np.int64)
        obs[:, 1] = self.vocab.NONE
        np.copyto(obs[:, 1], symbols, where=write)
        obs[:, 2] = self._memory[:, 1]
        if explored is not None:
            obs[:, 2] |= explored
        obs[:, 3] = move
        obs[:, 4] = write
        self._memory = obs[:, 1:]
        if done.any():
            lanes = self._lanes[done]
            self._start(*self._draw(len(lanes)), lanes)
        obs[:, 0] = self.input.read()
        if self._has_clock:
            obs[self.time >= self.clock, 0] = self.vocab.Q
        return StepResult(obs, reward, done, reason, n_correct)

    # views on the observation memory, for readers and the renderer
    prev_written = property(lambda self: self._memory[:, 0])
    explored = property(lambda self: self._memory[:, 1])
    prev_move = property(lambda self: self._memory[:, 2])
    prev_write = property(lambda self: self._memory[:, 3])
