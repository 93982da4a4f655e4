"""``TinyAlgoEnv``: one task instance at a time through the Gymnasium API."""
from __future__ import annotations

import gymnasium
from gymnasium import spaces

from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.gym.lanes import DEFAULT_ADVANCE_AFTER, LaneStreams, options_complexity


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
        self._lanes = LaneStreams(1, task, base, complexity, curriculum, reward, advance_after, extra_curriculum)
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
        complexity = options_complexity(self._lanes, options)
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
