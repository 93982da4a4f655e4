"""What the single and the vector environments share: B lanes of tinyalgo's
``Environment``, each lane with its own generator of instances, and the task
ids."""
from __future__ import annotations

import numpy as np
from gymnasium.utils import seeding

from tinyalgo.curriculum import FixedComplexity
from tinyalgo.curriculum import Curriculum
from tinyalgo.environment import ALL_WRITTEN, END_REASONS, TIMEOUT, WRONG_WRITE, Environment
from tinyalgo.tasks.instances import concatenate
from tinyalgo.inspection.render import render_lane
from tinyalgo.tasks import ALIASES, TASKS, make_task

ENV_IDS = {"copy": "tinyalgo/Copy-v0", "reverse": "tinyalgo/Reverse-v0", "walk": "tinyalgo/Walk-v0",
           "addition": "tinyalgo/Addition-v0", "addition3": "tinyalgo/Addition3-v0",
           "multiplication": "tinyalgo/Multiplication-v0"}
DEFAULT_COMPLEXITY = 6            # the curriculum's start (paper section 5)
DEFAULT_ADVANCE_AFTER = 100
REASON_NAMES = np.array(END_REASONS)       # an end reason's code -> its name, for whole arrays at once


class LaneStreams:
    """What both environments share: B lanes of tinyalgo's ``Environment``,
    each with its own generator and complexity (fixed or its own curriculum),
    and the conversion between Gymnasium's actions and the joint actions."""

    def __init__(self, batch, task, base, complexity, curriculum, reward, advance_after, extra_curriculum):
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
        if curriculum and complexity is not None:
            raise ValueError("give either complexity (fixed) or curriculum=True, not both")
        if isinstance(advance_after, bool) or not isinstance(advance_after, (int, np.integer)) or advance_after < 1:
            raise ValueError(f"advance_after must be an integer of at least 1; got {advance_after!r}")
        extra = bool(curriculum) if extra_curriculum is None else extra_curriculum
        self.task = make_task(name, base, **({"extra_curriculum": bool(extra)} if name == "addition3" else {}))
        minimum = self.task.min_complexity
        self.fixed = None
        if not curriculum:
            self.fixed = self.check_complexity(DEFAULT_COMPLEXITY if complexity is None
                                               else complexity, "complexity")
        self.curriculum, self.advance_after = bool(curriculum), int(advance_after)
        # tinyalgo's environment starts a new instance in a lane the moment its
        # episode ends, drawn from its own generator; here every lane draws
        # from its own generator instead (``draw``), so the environment's
        # draws are replaced at once: the cheapest instances do
        self.env = Environment(self.task, batch, complexity=minimum, seed=0)
        self.batch, self.vocab = batch, self.task.vocab
        self.n_moves = self.task.n_moves
        self.action_nvec = np.array([self.n_moves, 2, self.vocab.size], dtype=np.int64)
        self.obs_nvec = np.array(self.env.obs_sizes, dtype=np.int64)
        self.rngs = [None] * batch
        self.curricula = [Curriculum(minimum=minimum) if curriculum else None for _ in range(batch)]
        self.levels = np.array([self.level(b) for b in range(batch)], dtype=np.int64)   # kept in step by record
        self.solved_run = np.zeros(batch, dtype=np.int64)
        self.n_steps = np.zeros(batch, dtype=np.int64)    # length of each lane's reference solution
        self.over = np.zeros(batch, dtype=bool)         # the lane's episode has ended (single env)
        self._dx = np.array([m[0] for m in self.env.input.MOVES], dtype=np.int64)
        self._dy = np.array([m[1] for m in self.env.input.MOVES], dtype=np.int64)

    def check_complexity(self, value, what):
        minimum = self.task.min_complexity
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise ValueError(f"{what} must be an integer of at least {minimum} for task {self.task.name!r};"
                             f" got {value!r}")
        return int(value)

    # ------------------------------------------------------------- seeding
    def seed(self, lanes, seeds):
        for lane, s in zip(lanes, seeds):
            self.rngs[lane] = seeding.np_random(None if s is None else int(s))[0]

    def level(self, lane) -> int:
        return self.curricula[lane].level if self.curriculum else self.fixed

    def draw(self, lanes, complexity=None) -> None:
        """Start a new instance in each of ``lanes``, drawn from the lane's
        generator (``complexity``: this episode's, else the lane's sampler)."""
        if not len(lanes):
            return
        parts = []
        for lane in lanes:
            rng = self.rngs[lane]
            if rng is None:
                rng = self.rngs[lane] = seeding.np_random()[0]
            if complexity is not None:
                sampler = FixedComplexity(complexity, self.task.min_complexity)
            elif self.curriculum:
                sampler = self.curricula[lane].sampler()
            else:
                sampler = FixedComplexity(self.fixed, self.task.min_complexity)
            parts.append(self.task.sample(rng, sampler.draw(rng, 1), level=sampler.level))
        instances = parts[0] if len(parts) == 1 else concatenate(parts, self.vocab.NONE)
        self.env.load(instances, np.asarray(lanes))
        self.n_steps[lanes] = instances.n_steps
        self.over[lanes] = False

    def record(self, lanes, reasons) -> None:
        """The curriculum's rule: advance a lane's level after ``advance_after``
        episodes in a row with all targets written."""
        if not self.curriculum:
            return
        for lane, reason in zip(lanes, reasons):
            self.solved_run[lane] = self.solved_run[lane] + 1 if reason == ALL_WRITTEN else 0
            if self.solved_run[lane] >= self.advance_after:
                self.curricula[lane].record(1.0, episodes=self.advance_after)
                self.solved_run[lane] = 0
                self.levels[lane] = self.curricula[lane].level

    # -------------------------------------------------------------- acting
    def check_actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        shape = (self.batch, 3)
        if a.shape != shape and self.batch == 1 and a.shape == (3,):
            a = a[None]
        if a.shape != shape or a.dtype.kind not in "iu" or (a < 0).any() or (a >= self.action_nvec).any():
            what = "an action" if self.batch == 1 else f"actions of shape {shape}"
            raise ValueError(f"{what} must be (move, write, symbol) integers with move in 0..{self.n_moves - 1},"
                             f" write 0 or 1, symbol in 0..{self.vocab.size - 1}; got {actions!r}")
        return a.astype(np.int64)

    def step(self, actions, explored=None):
        """One step of every lane; returns (obs (B, 5), reward, terminated,
        truncated, reason, n_correct, final obs (B, 5), complexity of the episode)."""
        env = self.env
        a = self.check_actions(actions)
        move, write, symbol = a[:, 0], a[:, 1].astype(bool), a[:, 2]
        # the observation after the move, were the episode to go on: the
        # final observation where it ends (the environment starts the next
        # instance before it returns)
        head = env.input
        x = head.x + self._dx[move]
        read = head.board.read(x, None if env.task.interface == "tape" else head.y + self._dy[move])
        read = read.astype(np.int64)
        if env.task.name == "walk":            # every cell reads q from the instance's clock on
            read[env.time + 1 >= env.clock] = self.vocab.Q
        was_explored = env.explored.astype(bool)
        if explored is not None:
            was_explored = was_explored | np.broadcast_to(np.asarray(explored, dtype=bool), (self.batch,))
        final = np.stack([read, np.where(write, symbol, self.vocab.NONE), was_explored.astype(np.int64),
                          move, write.astype(np.int64)], axis=1)
        complexity = env.complexity.copy()
        result = env.step(move + self.n_moves * write, symbol,
                          explored=None if explored is None else np.broadcast_to(explored, (self.batch,)))
        truncated = result.reason == TIMEOUT
        terminated = (result.reason == ALL_WRITTEN) | (result.reason == WRONG_WRITE)
        return (result.obs, result.reward.astype(np.float64), terminated, truncated, result.reason,
                result.n_correct.astype(np.int64), final, complexity)

    def ground_truth(self) -> np.ndarray:
        """(B, 3): the reference action (move, write, symbol) of this step, -1 off the path."""
        gt = self.env.ground_truth()
        out = np.stack([gt % self.n_moves, gt // self.n_moves, self.env.next_target], axis=1)
        # past its own reference solution a lane reads -1, or the last action
        # where that solution fills the lanes' storage: -1 then too
        out[(gt < 0) | (self.env.time >= self.n_steps)] = -1
        return out

    def info(self, reason, n_correct, complexity, ended) -> dict:
        """Info arrays (B,...) of the step just taken (``ended`` lanes: of their last step)."""
        env = self.env
        levels = self.levels.copy()
        v_hat, target, gt = env.v_hat.astype(np.int64), env.next_target, self.ground_truth()
        if ended is not None and ended.any():
            v_hat, target = np.where(ended, 0, v_hat), np.where(ended, self.vocab.NONE, target)
            gt[ended] = -1
        return dict(v_hat=v_hat, next_target=target, ground_truth=gt,
                    reason=REASON_NAMES[reason], n_correct=n_correct,
                    complexity=complexity, level=levels)

    def start_info(self) -> dict:
        zeros = np.zeros(self.batch, dtype=np.int64)
        return self.info(zeros, zeros, self.env.complexity.copy(), None)

    def render(self, lane: int) -> str:
        return render_lane(self.env, lane)


def options_complexity(lanes: LaneStreams, options):
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict; got {options!r}")
    unknown = set(options) - {"complexity"}
    if unknown:
        raise ValueError(f"unknown reset option(s) {sorted(unknown)}; allowed: complexity")
    c = options.get("complexity")
    return None if c is None else lanes.check_complexity(c, "options['complexity']")
