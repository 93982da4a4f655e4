"""``TinyAlgoVectorEnv``: B task instances side by side on one batched
tinyalgo ``Environment``, with Gymnasium's three autoreset modes."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from tinyalgo.environment import ALL_WRITTEN, END_REASONS, TIMEOUT, Environment
from tinyalgo.gym.course import LanePools, paper_course
from tinyalgo.gym.env import DEFAULT_ADVANCE_AFTER, check_flag, check_options, check_render_mode, check_spaces
from tinyalgo.gym.render import frame_shape, rgb_frame, symbol_glyphs
from tinyalgo.gym.spaces import make_spaces
from tinyalgo.host.speed import count_outside
from tinyalgo.inspection.render import render_lane

REASON_NAMES = np.array(END_REASONS)       # an end reason's code -> its name, for whole arrays at once
MODES = {m.value: m for m in AutoresetMode}


def check_autoreset_mode(mode) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str) and mode in MODES:
        return MODES[mode]
    raise ValueError(f"autoreset_mode must be an AutoresetMode or one of {', '.join(map(repr, MODES))};"
                     f" got {mode!r}")


def check_max_steps(value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"max_episode_steps must be None or an integer of at least 1; got {value!r}")
    return int(value)


class TinyAlgoVectorEnv(VectorEnv):
    """``num_envs`` copies of a task on one batched tinyalgo ``Environment``
    (one lane each), with the options of ``TinyAlgoEnv`` and:

    autoreset_mode : ``AutoresetMode.NEXT_STEP`` (default: a lane whose
        episode ends returns the episode's last observation; its next
        ``step`` ignores its action and returns the new episode's first
        observation, reward 0, neither terminated nor truncated),
        ``SAME_STEP`` (the new episode's first observation at once; the last
        one in ``info["final_obs"]``, its info in ``info["final_info"]``) or
        ``DISABLED`` (an ended lane waits, taking no action, until
        ``reset(options={"reset_mask": mask})``).  Also as strings
        ("NextStep", "SameStep", "Disabled").
    max_episode_steps : None, or truncate every episode after that many
        steps (what ``gym.make_vec(..., max_episode_steps=n)`` passes); at
        that step ``info`` is the running episode's, as a ``SyncVectorEnv``
        of single environments in ``TimeLimit`` gives, and the curriculum
        counts the episode as abandoned.

    Seeding: ``reset(seed=s)`` gives lane i the generator of seed s + i (or
    ``seed=[s0, s1, ...]``, one per lane), so that lane i follows the
    episodes of a ``TinyAlgoEnv`` reset with seed s + i.  Each lane has its
    own curriculum level.  ``options={"complexity": c}`` sets the complexity
    of the episodes started by that ``reset``.
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4,
                                "autoreset_mode": AutoresetMode.NEXT_STEP}
    option, size_key = "complexity", "complexity"

    def __init__(self, task: str = "copy", num_envs: int = 1, base: int = 10, complexity=None,
                 curriculum: bool = False, reward: str = "binary", advance_after: int = DEFAULT_ADVANCE_AFTER,
                 extra_curriculum=None, render_mode=None, step_info: bool = False,
                 autoreset_mode=AutoresetMode.NEXT_STEP, max_episode_steps=None, action_space: str = "multidiscrete",
                 observation_space: str = "multidiscrete"):
        self._check_common(num_envs, render_mode, step_info, autoreset_mode, max_episode_steps)
        kinds = check_spaces(action_space, observation_space)
        self._setup(paper_course(task, base=base, complexity=complexity, curriculum=curriculum, reward=reward,
                                 advance_after=advance_after, extra_curriculum=extra_curriculum))
        self._make_spaces(*kinds, self._env.obs_sizes)

    def _make_spaces(self, action_kind, observation_kind, obs_sizes, observation=None) -> None:
        """The spaces of a lane and of the batch (as ``TinyAlgoEnv._make_spaces``)."""
        self.joint_actions, self._onehot, self.single_action_space, self.single_observation_space = make_spaces(
            action_kind, observation_kind, self._nm, self._V, obs_sizes, observation)
        self._limits = np.tile(np.array([self._nm, 2, self._V], dtype=np.uint64), (self.num_envs, 1))
        self.action_space = batch_space(self.single_action_space, self.num_envs)        # as SyncVectorEnv's
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    def _check_common(self, num_envs, render_mode, step_info, autoreset_mode, max_episode_steps) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer of at least 1; got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.render_mode = check_render_mode(render_mode)
        self.step_info = check_flag(step_info, "step_info")
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.max_episode_steps = check_max_steps(max_episode_steps)
        self.metadata = dict(self.metadata, autoreset_mode=self.autoreset_mode)

    def _setup(self, course) -> None:
        B, task = self.num_envs, course.task
        self.task = task
        env = self._env = Environment(task, batch_size=B, complexity=task.min_complexity, seed=0)
        env.restart = False
        self._pools = LanePools(course, env.lanes, B)
        vocab = task.vocab
        self._nm, self._V, self._NONE = task.n_moves, vocab.size, vocab.NONE
        self._over = np.zeros(B, dtype=bool)        # lanes whose episode has ended and not restarted
        self._waiting = False                       # ... any of them
        self._fixed_levels = self._pools.levels.copy()
        self._fixed_levels.flags.writeable = False   # the levels without a curriculum (they never change)
        self._lanes = np.arange(B)
        self._started = False
        self._glyphs = symbol_glyphs(vocab.chars)

    @property
    def environment(self) -> Environment:
        """tinyalgo's batched Environment underneath (one lane per copy)."""
        return self._env

    @property
    def levels(self) -> np.ndarray:
        """Each lane's complexity level (its curriculum's, or the fixed complexity)."""
        return self._pools.levels.copy()

    # ------------------------------------------------------------ checks
    def _check_actions(self, actions) -> np.ndarray:
        if self.joint_actions is not None:
            return self._check_indices(actions)
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        shape = (self.num_envs, 3)
        if a.shape == shape and a.dtype.kind in "iu":
            a = a.astype(np.int64, copy=False)
            if not count_outside(a, self._limits):
                return a
        raise ValueError(f"actions must be an integer array of shape {shape}, one (move, write, symbol) per lane,"
                         f" with move in 0..{self._nm - 1}, write 0 or 1, symbol in 0..{self._V - 1};"
                         f" got {actions!r}")

    def _check_indices(self, actions) -> np.ndarray:
        """(B, 3) triples of the ``Discrete`` actions (B,), or one ValueError."""
        a = actions if type(actions) is np.ndarray else np.asarray(actions)
        n = self.joint_actions.n
        if a.shape == (self.num_envs,) and a.dtype.kind in "iu":
            a = a.astype(np.int64, copy=False)
            if not count_outside(a, np.uint64(n)):
                return self.joint_actions.table[a]
        raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), one action index in"
                         f" 0..{n - 1} per lane (action_space='discrete'); got {actions!r}")

    def _seeds(self, seed):
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(self.num_envs)]
        if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) == self.num_envs and all(
                s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool)) for s in seed):
            return list(seed)
        raise ValueError(f"seed must be an integer or {self.num_envs} seeds (one per lane); got {seed!r}")

    # --------------------------------------------------------------- API
    def reset(self, *, seed=None, options=None):
        options = dict(options or {}) if isinstance(options, dict) or options is None else options
        mask = options.pop("reset_mask", None) if isinstance(options, dict) else None
        size = check_options(options or None, self.option)
        if size is not None:
            size = self._pools.course.check(size, f"options[{self.option!r}]")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != bool:
                raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},);"
                                 f" got {mask!r}")
        seeds = None if seed is None else self._seeds(seed)
        lanes = self._lanes if mask is None else mask.nonzero()[0]
        if self._started:
            self._abandon(lanes[~self._over[lanes]])
        super().reset(seed=None if seed is None else seeds[0])
        if seeds is not None:
            self._pools.seed(lanes, [seeds[i] for i in lanes])
        self._pools.start(lanes, size)
        over = self._over.copy()                     # a new array: an info returned earlier may hold the old one
        over[lanes] = False
        self._over, self._waiting = over, bool(over.any())
        self._started = True
        obs = self._observe(self._env.observe())
        return obs, self._reset_info(lanes)

    def _abandon(self, lanes) -> None:
        """Count the running episodes of ``lanes`` as abandoned (the curriculum's rule, ``Course.abandoned``)."""
        env, pools = self._env, self._pools
        if len(lanes) and pools.course.curriculum:
            pools.record(lanes, pools.course.abandoned(env.target_index[lanes], env.n_outputs[lanes]))

    def step(self, actions, explored=None):
        """One action per lane: ``(obs, rewards, terminations, truncations, info)``, lanes reset as
        ``autoreset_mode`` says."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = self._check_actions(actions)
        env, over, mode, pools = self._env, self._over, self.autoreset_mode, self._pools
        write = a[:, 1]
        waiting = self._waiting
        if waiting:                                     # ended lanes take no write: they stay as they ended
            live = ~over
            write = write * live
        res = env.step(self._moves(a[:, 0]) + self._nm * write, a[:, 2],
                       explored=None if explored is None else np.broadcast_to(np.asarray(explored), over.shape))
        raw = res.obs
        reward, terminated, truncated = self._outcome(res, write)
        cut = None                                      # the lanes cut by max_episode_steps alone
        if self.max_episode_steps is not None:
            limit = env.time >= self.max_episode_steps
            cut = limit & ~(terminated | truncated)
            truncated |= limit                          # as TimeLimit: also where the rules ended the episode
        started = None                                  # the lanes that start a new episode at this step
        if waiting:
            terminated &= live
            truncated &= live
            if cut is not None:
                cut &= live
            if self._idle_rewards:
                reward[over] = 0.0
            if mode is AutoresetMode.NEXT_STEP:
                started = over
                lanes = over.nonzero()[0]
                pools.start(lanes)
                raw[lanes] = env.lanes.obs[:, lanes].T     # a new instance's first observation: its fields
        ended = terminated | truncated
        any_end = bool(ended.any())
        if mode is AutoresetMode.NEXT_STEP:
            self._over, self._waiting = ended, any_end
        elif mode is AutoresetMode.DISABLED and any_end:
            self._over, self._waiting = over | ended, True
        if not any_end:
            info = self._info(None, None, started, None) if started is not None or self.step_info else {}
            return self._observe(raw), reward, terminated, truncated, info
        idx = ended.nonzero()[0]
        cut = cut if cut is not None and cut.any() else None
        finished = ended if cut is None else ended & ~cut      # ended by the task's rules: the info says how
        levels = pools.levels.copy() if pools.course.curriculum else self._fixed_levels
        if pools.course.curriculum:
            solved = self._solved(res)
            if cut is not None:
                solved = np.where(cut, pools.course.abandoned(env.target_index, env.n_outputs), solved)
            pools.record(idx, solved[idx])
        if mode is not AutoresetMode.SAME_STEP:
            return self._observe(raw), reward, terminated, truncated, self._info(res, finished, started, levels)
        final = self._observe(raw[idx])
        final_info = self._info(res, finished, None, levels)
        if self.step_info:
            final_info = {k: (ended if k[0] == "_" else v) for k, v in final_info.items()}
        pools.start(idx)
        raw[idx] = env.lanes.obs[:, idx].T
        info = self._info(None, None, ended, None)
        final_obs = np.full(self.num_envs, None, dtype=object)
        final_obs[idx] = list(final)
        info.update(final_obs=final_obs, _final_obs=ended, final_info=final_info, _final_info=ended)
        return self._observe(raw), reward, terminated, truncated, info

    # ------------------------------------------ what the task family sets
    _idle_rewards = False         # a lane that waits (takes no write) may have a reward to zero

    def _moves(self, moves):
        return moves

    _one_field = False            # the observation is one field (B,), not (B, F)

    def _fields(self, obs):
        """The observation fields of the lanes' raw observations (B, 5)."""
        return obs

    def _observe(self, raw):
        """The observation in the chosen space (the fields, or one-hot)."""
        obs = self._fields(raw)
        if self._onehot is None:
            return obs
        return self._onehot.encode(obs[..., None] if self._one_field else obs)

    def _outcome(self, res, write):
        """(reward, terminated, truncated) of a step of the paper's rules."""
        truncated = res.reason == TIMEOUT
        return res.reward, res.done ^ truncated, truncated

    def _solved(self, res):
        """The lanes whose episode ended with every target written (the curriculum's count)."""
        return res.reason == ALL_WRITTEN

    def _ground_truth(self, gt):
        """(B, 3) (move, write, symbol) of the joint ground-truth actions gt (B,), -1 rows where gt < 0."""
        out = np.stack([gt % self._nm, gt // self._nm, self._env.next_target], axis=1)
        out[gt < 0] = -1
        return out

    # -------------------------------------------------------------- info
    def _sizes(self):
        return self._env.complexity.copy()

    def _reset_info(self, lanes) -> dict:
        """Info of the episodes started in ``lanes``."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[lanes] = True
        return self._info(None, None, mask, None)

    def _info(self, res, ended, started, levels) -> dict:
        """Info of a step (``res``; None: no step) whose episodes ``ended``
        (bool (B,) or None) and of the episodes ``started`` (bool (B,) or
        None), each key with its mask ``_key`` (Gymnasium's layout);
        ``levels`` the lanes' levels before the ended episodes were counted
        (None: as they are)."""
        if levels is None:
            levels = self._pools.levels.copy() if self._pools.course.curriculum else self._fixed_levels
        if self.step_info:
            return self._full_info(res, ended, levels)
        mask = ended if started is None else started if ended is None else ended | started
        if not mask.any():
            return {}
        info = {self.size_key: self._sizes(), "_" + self.size_key: mask, "level": levels, "_level": mask}
        if ended is not None:
            info.update(reason=REASON_NAMES.take(self._reasons(res)), _reason=ended, n_correct=res.n_correct,
                        _n_correct=ended)
        return info

    def _reasons(self, res):
        return res.reason

    def _full_info(self, res, ended, levels) -> dict:
        """Every key at every lane (``step_info=True``): the lanes' state after this step."""
        env = self._env
        B = self.num_envs
        if res is None or ended is None:
            reason, n_correct = np.zeros(B, dtype=np.int64), env.output.index.copy()
        else:
            reason = np.where(ended, self._reasons(res), 0)
            n_correct = np.where(ended, res.n_correct, env.output.index)
        gt = self._ground_truth(env.ground_truth())
        v_hat, target = env.v_hat.astype(np.int64), env.next_target
        if ended is not None and ended.any():
            v_hat, target = np.where(ended, 0, v_hat), np.where(ended, self._NONE, target)
            gt[ended] = -1
        info = dict(reason=REASON_NAMES[reason], n_correct=n_correct.astype(np.int64), v_hat=v_hat,
                    next_target=target, ground_truth=gt, level=levels)
        info[self.size_key] = self._sizes()
        for key in list(info):
            info["_" + key] = np.ones(B, dtype=bool)
        return info

    # ---------------------------------------------------------- pictures
    def render(self):
        if self.render_mode is None:
            return None
        if not self._started:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "ansi":
            return tuple(render_lane(self._env, b) for b in range(self.num_envs))
        return tuple(rgb_frame(self._env, b, *self._glyphs, self._NONE) for b in range(self.num_envs))

    @property
    def frame_shape(self) -> tuple:
        """The shape (H, W, 3) of every ``rgb_array`` frame of a lane."""
        return frame_shape(self.task.interface != "tape")
