"""``TinyAlgoVectorEnv``: B task instances side by side on one batched
tinyalgo ``Environment``, with Gymnasium's same-step autoreset."""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from tinyalgo.environment import Environment
from tinyalgo.gym.lanes import DEFAULT_ADVANCE_AFTER, LaneStreams, options_complexity


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
        self._lanes = LaneStreams(int(num_envs), task, base, complexity, curriculum, reward, advance_after,
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
        return self._lanes.levels.copy()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        complexity = options_complexity(self._lanes, options)
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
