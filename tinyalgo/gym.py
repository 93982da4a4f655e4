"""Gymnasium environments of the six tasks (paper section 3).

``import tinyalgo.gym`` registers ``tinyalgo/Copy-v0``, ``tinyalgo/Reverse-v0``,
``tinyalgo/Walk-v0``, ``tinyalgo/Addition-v0``, ``tinyalgo/Addition3-v0`` and
``tinyalgo/Multiplication-v0``::

    import gymnasium as gym
    import tinyalgo.gym
    env = gym.make("tinyalgo/Reverse-v0", complexity=10)
    envs = gym.make_vec("tinyalgo/Reverse-v0", num_envs=16, complexity=10)

This is the only module of tinyalgo that imports gymnasium (the ``gym`` extra:
``pip install -e '.[gym]'``).  Both environments run on tinyalgo's batched
``Environment`` (one lane for ``TinyAlgoEnv``, ``num_envs`` lanes for
``TinyAlgoVectorEnv``).

Action: ``MultiDiscrete([n_moves, 2, V])``, (move, write flag, symbol): the
moves of the task's interface (tape: 0 left, 1 right; grid: also 2 down,
3 up), whether to write, and the symbol written (a class of the vocabulary,
``tinyalgo.symbols``; ignored when the write flag is 0).

Observation: ``MultiDiscrete(obs_sizes)``, the five fields of
``tinyalgo.environment``: symbol under the input head, symbol written at the
previous step, explored flag, previous move, previous write flag.  The
explored flag is set by ``step(action, explored=True)`` (an exploratory
action, paper section 6); plain ``step(action)`` leaves it 0.

End of an episode: a wrong write or all targets written ``terminated``; the
paper's timeout (complexity + 2 steps without a write) ``truncated``.  There
is no other step limit.

Reward: the paper's 0/1 reward, 1 for a correct write.  The "discretized"
and "continuous" rewards (paper Appendix C) score the symbol head's
probabilities, which a Gymnasium action (one chosen symbol) does not carry:
they are refused; use ``tinyalgo.environment.Environment`` for them.

Info: ``v_hat`` (outputs still to produce, counting the one due now: the
paper's V-hat, section 6.1), ``next_target`` (the symbol a write must produce
now), ``ground_truth`` (the action (move, write, symbol) of the reference
solution at this step, -1 three times once the episode has left the
reference path: imitate it to solve the task), ``reason`` ("running", "all
written", "wrong write", "timeout"), ``n_correct`` (correct outputs so far),
``complexity`` (of the episode) and ``level`` (the curriculum's level, or
the fixed complexity).  At an episode's last step there is no step to take:
``v_hat`` is 0, ``next_target`` the vocabulary's none, ``ground_truth`` -1.

Complexity: ``complexity=c`` (every instance has complexity c; default 6)
or ``curriculum=True``: the paper's curriculum (section 5: start at 6, add 4
after a perfect validation; instances of complexity U{C-4..C} at level C).
A Gymnasium environment has no validation set, so the level advances after
``advance_after`` (default 100) episodes in a row end with all targets
written; any other end starts the count again.  The level is training
progress: a seeded ``reset`` keeps it.

Seeding: every lane has its own ``numpy.random.Generator`` and draws its
instances one at a time from it, so lane i of a ``TinyAlgoVectorEnv`` reset
with ``seed=s`` follows the same instances as a ``TinyAlgoEnv`` reset with
``seed=s + i`` (and reset again, without a seed, after each episode).
"""
from __future__ import annotations

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from gymnasium.vector import AutoresetMode, VectorEnv
except ImportError as exc:        # pragma: no cover - exercised only without gymnasium
    raise ImportError("tinyalgo.gym needs gymnasium: pip install -e '.[gym]'"
                      " (or pip install 'gymnasium>=1.1')") from exc

from tinyalgo.complexity import FixedComplexity
from tinyalgo.curriculum import Curriculum
from tinyalgo.environment import ALL_WRITTEN, END_REASONS, TIMEOUT, WRONG_WRITE, Environment
from tinyalgo.instances import concatenate
from tinyalgo.render import render_lane
from tinyalgo.tasks import ALIASES, TASKS, make_task

__all__ = ["TinyAlgoEnv", "TinyAlgoVectorEnv", "ENV_IDS", "register_envs"]

ENV_IDS = {"copy": "tinyalgo/Copy-v0", "reverse": "tinyalgo/Reverse-v0", "walk": "tinyalgo/Walk-v0",
           "addition": "tinyalgo/Addition-v0", "addition3": "tinyalgo/Addition3-v0",
           "multiplication": "tinyalgo/Multiplication-v0"}
DEFAULT_COMPLEXITY = 6            # the curriculum's start (paper section 5)
DEFAULT_ADVANCE_AFTER = 100


class _Lanes:
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
        levels = np.array([self.level(b) for b in range(self.batch)], dtype=np.int64)
        v_hat, target, gt = env.v_hat.astype(np.int64), env.next_target, self.ground_truth()
        if ended is not None and ended.any():
            v_hat, target = np.where(ended, 0, v_hat), np.where(ended, self.vocab.NONE, target)
            gt[ended] = -1
        return dict(v_hat=v_hat, next_target=target, ground_truth=gt,
                    reason=np.array([END_REASONS[r] for r in reason]), n_correct=n_correct,
                    complexity=complexity, level=levels)

    def start_info(self) -> dict:
        zeros = np.zeros(self.batch, dtype=np.int64)
        return self.info(zeros, zeros, self.env.complexity.copy(), None)

    def render(self, lane: int) -> str:
        return render_lane(self.env, lane)


def _options_complexity(lanes: _Lanes, options):
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict; got {options!r}")
    unknown = set(options) - {"complexity"}
    if unknown:
        raise ValueError(f"unknown reset option(s) {sorted(unknown)}; allowed: complexity")
    c = options.get("complexity")
    return None if c is None else lanes.check_complexity(c, "options['complexity']")


class TinyAlgoEnv(gymnasium.Env):
    """One of the six tasks as a Gymnasium environment (see the module doc).

    Parameters
    ----------
    task : "copy", "reverse", "walk", "addition", "addition3", "multiplication".
    base : 2..10 (paper Appendix B).
    complexity : the complexity of every instance (default 6), or
    curriculum : True for the paper's curriculum (section 5; the level
        advances after ``advance_after`` episodes in a row with all targets
        written).
    reward : "binary" only (see the module doc).
    extra_curriculum : 3-number addition: the extra curriculum of small
        digits in training instances; default on with the curriculum, off
        with a fixed complexity.
    render_mode : None or "ansi" (a text frame of the board, the targets and
        what has been written).

    ``reset(seed=None, options=None)``: ``options={"complexity": c}`` sets the
    complexity of that episode alone.  After an episode ends, call ``reset``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, task: str = "copy", base: int = 10, complexity=None, curriculum: bool = False,
                 reward: str = "binary", advance_after: int = DEFAULT_ADVANCE_AFTER, extra_curriculum=None,
                 render_mode=None):
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi'; got {render_mode!r}")
        self._lanes = _Lanes(1, task, base, complexity, curriculum, reward, advance_after, extra_curriculum)
        self.render_mode = render_mode
        self.task = self._lanes.task
        self.action_space = spaces.MultiDiscrete(self._lanes.action_nvec)
        self.observation_space = spaces.MultiDiscrete(self._lanes.obs_nvec)
        self._last = None               # (reason, n_correct, n_outputs) of an episode that ended
        self._started = False

    @property
    def environment(self) -> Environment:
        """tinyalgo's one-lane Environment underneath."""
        return self._lanes.env

    @property
    def level(self) -> int:
        """The complexity level: the curriculum's, or the fixed complexity."""
        return self._lanes.level(0)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        complexity = _options_complexity(self._lanes, options)
        if seed is not None or self._lanes.rngs[0] is None:
            self._lanes.rngs[0] = self.np_random         # seeded by gymnasium from ``seed``
        self._lanes.draw([0], complexity)
        self._last, self._started = None, True
        return self._lanes.env.observe()[0], self._one(self._lanes.start_info())

    def step(self, action, explored=None):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._lanes.over[0]:
            raise RuntimeError("the episode has ended (terminated or truncated): call reset() before step()")
        n_outputs = int(self._lanes.env.n_outputs[0])
        obs, reward, term, trunc, reason, n_correct, final, complexity = self._lanes.step(action, explored)
        ended = term | trunc
        info = self._one(self._lanes.info(reason, n_correct, complexity, ended))
        if ended[0]:
            self._lanes.over[0] = True
            self._lanes.record([0], reason)
            self._last = (int(reason[0]), int(n_correct[0]), n_outputs)
            obs = final
        return obs[0], float(reward[0]), bool(term[0]), bool(trunc[0]), info

    def render(self):
        if self.render_mode != "ansi":
            return None
        if self._last is not None:
            reason, n_correct, n_outputs = self._last
            return f"episode ended: {END_REASONS[reason]}, {n_correct} of {n_outputs} outputs right"
        return self._lanes.render(0)

    @staticmethod
    def _one(info: dict) -> dict:
        return {k: (v[0] if k == "ground_truth" else v[0].item()) for k, v in info.items()}


class TinyAlgoVectorEnv(VectorEnv):
    """``num_envs`` copies of a task on one batched tinyalgo ``Environment``
    (one lane each), with the options of ``TinyAlgoEnv``.

    Autoreset: same-step (``AutoresetMode.SAME_STEP``, in
    ``metadata["autoreset_mode"]``).  A lane whose episode ends starts its
    next episode within the same ``step``: the observation returned is the new
    episode's first, ``info["final_obs"][i]`` (with the mask
    ``info["_final_obs"]``) the last observation of the episode that ended,
    and ``info["final_info"]`` its info; the other info keys describe the new
    episode's first step.

    Seeding: ``reset(seed=s)`` gives lane i the generator of seed s + i (or
    ``seed=[s0, s1, ...]``, one per lane), so that lane i follows the
    episodes of a ``TinyAlgoEnv`` reset with seed s + i.  Each lane has its
    own curriculum level.  ``options={"complexity": c}`` sets the complexity
    of the episodes started by that ``reset``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4, "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, task: str = "copy", num_envs: int = 1, base: int = 10, complexity=None,
                 curriculum: bool = False, reward: str = "binary", advance_after: int = DEFAULT_ADVANCE_AFTER,
                 extra_curriculum=None, render_mode=None):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer of at least 1; got {num_envs!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi'; got {render_mode!r}")
        self._lanes = _Lanes(int(num_envs), task, base, complexity, curriculum, reward, advance_after,
                             extra_curriculum)
        self.num_envs, self.render_mode, self.task = int(num_envs), render_mode, self._lanes.task
        self.single_action_space = spaces.MultiDiscrete(self._lanes.action_nvec)
        self.single_observation_space = spaces.MultiDiscrete(self._lanes.obs_nvec)
        self.action_space = spaces.MultiDiscrete(np.tile(self._lanes.action_nvec, (self.num_envs, 1)))
        self.observation_space = spaces.MultiDiscrete(np.tile(self._lanes.obs_nvec, (self.num_envs, 1)))
        self._started = False

    @property
    def environment(self) -> Environment:
        """tinyalgo's batched Environment underneath (one lane per copy)."""
        return self._lanes.env

    @property
    def levels(self) -> np.ndarray:
        """Each lane's complexity level (its curriculum's, or the fixed complexity)."""
        return np.array([self._lanes.level(b) for b in range(self.num_envs)], dtype=np.int64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        complexity = _options_complexity(self._lanes, options)
        lanes = np.arange(self.num_envs)
        if seed is not None:
            if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
                seeds = [int(seed) + i for i in lanes]
            elif len(seed) == self.num_envs:
                seeds = list(seed)
            else:
                raise ValueError(f"seed must be an integer or {self.num_envs} seeds (one per lane); got {seed!r}")
            self._lanes.seed(lanes, seeds)
        self._lanes.draw(lanes, complexity)
        self._started = True
        return self._lanes.env.observe(), self._masked(self._lanes.start_info())

    def step(self, actions, explored=None):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        lanes = self._lanes
        obs, reward, term, trunc, reason, n_correct, final, complexity = lanes.step(actions, explored)
        ended = term | trunc
        if not ended.any():
            return obs, reward, term, trunc, self._masked(lanes.info(reason, n_correct, complexity, None))
        final_info = self._masked(lanes.info(reason, n_correct, complexity, ended), ended)
        idx = ended.nonzero()[0]
        lanes.record(idx, reason[idx])
        lanes.draw(idx)
        obs = lanes.env.observe()
        info = self._masked(lanes.info(np.where(ended, 0, reason), np.where(ended, 0, n_correct),
                                       lanes.env.complexity.copy(), None))
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in idx:
            final_obs[i] = final[i]
        info.update(final_obs=final_obs, _final_obs=ended.copy(), final_info=final_info, _final_info=ended.copy())
        return obs, reward, term, trunc, info

    def render(self):
        if self.render_mode != "ansi":
            return None
        return tuple(self._lanes.render(b) for b in range(self.num_envs))

    def _masked(self, info: dict, mask=None) -> dict:
        """Gymnasium's vector info layout: each key with a mask ``_key`` of the lanes it holds."""
        mask = np.ones(self.num_envs, dtype=bool) if mask is None else mask
        out = {}
        for key, value in info.items():
            out[key], out["_" + key] = value, mask.copy()
        return out


def register_envs() -> None:
    """Register the six tasks with gymnasium (``import tinyalgo.gym`` does it)."""
    for name, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="tinyalgo.gym:TinyAlgoEnv",
                               vector_entry_point="tinyalgo.gym:TinyAlgoVectorEnv", kwargs={"task": name})


register_envs()
