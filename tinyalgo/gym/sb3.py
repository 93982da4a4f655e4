"""Stable-Baselines3 on tinyalgo's batched environments (the ``sb3`` extra:
``pip install -e '.[sb3]'``).

SB3 trains on its own ``VecEnv`` API: ``make_vec_env`` builds one from single
environments (a Python loop over them at every step), which works with every
tinyalgo id as written::

    from stable_baselines3.common.env_util import make_vec_env
    import tinyalgo.gym
    venv = make_vec_env("tinyalgo/Copy-v0", n_envs=8)

(with ``vec_env_cls=SubprocVecEnv`` write the id as
``"tinyalgo.gym:tinyalgo/Copy-v0"``: each worker process then imports
``tinyalgo.gym``, which registers the ids).  ``TinyAlgoVecEnv`` is SB3's
``VecEnv`` over one ``TinyAlgoVectorEnv`` instead: all lanes step in one
batched call, with SB3's conventions (same-step autoreset, the last
observation of an episode in ``infos[i]["terminal_observation"]``,
``infos[i]["TimeLimit.truncated"]``, float32 rewards)::

    from tinyalgo.gym.sb3 import make_sb3_vec_env
    venv = make_sb3_vec_env("tinyalgo/Copy-v0", n_envs=64, seed=0)   # VecMonitor(TinyAlgoVecEnv(...))
    PPO("MlpPolicy", venv, n_steps=32).learn(50_000)    # n_steps is per lane: 64 x 32 steps an update

Both take sb3-contrib's recurrent policies
(``RecurrentPPO("MlpLstmPolicy", venv)``), DQN with ``action_space="discrete"``
(``make_sb3_vec_env(id, n_envs=8, action_space="discrete")``, or
``env_kwargs=dict(action_space="discrete")`` with ``make_vec_env``), and
``VecNormalize`` / ``VecFrameStack`` with ``observation_space="onehot"``
(``tinyalgo.gym.spaces``)::

    venv = VecFrameStack(VecNormalize(make_sb3_vec_env("tinyalgo/Copy-v0", observation_space="onehot")), 4)

SB3's ``infos`` is a list of dicts, one per lane (each with
``TimeLimit.truncated``, as ``DummyVecEnv`` gives): building it is the one
loop over lanes left, a list of small dicts; the lanes whose episode ended
also get their last observation and info.
"""
from __future__ import annotations

try:
    from stable_baselines3.common.vec_env import VecMonitor
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:        # pragma: no cover - exercised only without stable-baselines3
    raise ImportError("tinyalgo.gym.sb3 needs stable-baselines3: pip install -e '.[sb3]'") from exc

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

import tinyalgo.gym  # noqa: F401  (registers the ids)
from tinyalgo.gym.vector import TinyAlgoVectorEnv


class TinyAlgoVecEnv(VecEnv):
    """SB3's ``VecEnv`` over a ``TinyAlgoVectorEnv`` (or a
    ``GymAlgorithmicVectorEnv``): ``TinyAlgoVecEnv("tinyalgo/Copy-v0",
    num_envs=64, complexity=6)`` makes one with same-step autoreset (SB3's
    convention), or pass one made with ``autoreset_mode="SameStep"``.

    ``seed(s)`` seeds lane i with s + i at the next ``reset`` (SB3's rule,
    and Gymnasium's); ``get_attr``/``set_attr``/``env_method`` reach the one
    vector environment (the same value for every lane)."""

    def __init__(self, env, num_envs: int | None = None, **kwargs):
        if isinstance(env, str):
            if num_envs is None:
                raise ValueError("num_envs is needed with an id: TinyAlgoVecEnv(env_id, num_envs, ...)")
            env = gymnasium.make_vec(env, num_envs=num_envs, vectorization_mode="vector_entry_point",
                                     autoreset_mode=AutoresetMode.SAME_STEP, **kwargs)
        elif kwargs or num_envs not in (None, getattr(env, "num_envs", None)):
            raise ValueError("give keyword arguments and num_envs only with an id, not with an environment")
        if not isinstance(env.unwrapped, TinyAlgoVectorEnv):
            raise ValueError(f"env must be a tinyalgo id or a TinyAlgoVectorEnv; got {env!r}")
        if env.metadata.get("autoreset_mode") is not AutoresetMode.SAME_STEP:
            raise ValueError("SB3 resets an ended lane in the same step: make the vector environment with"
                             " autoreset_mode='SameStep'")
        self.venv = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions = None

    def reset(self):
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = self._options[0] if all(o == self._options[0] for o in self._options) else None
        if options is None:
            raise ValueError("TinyAlgoVecEnv takes the same reset options for every lane")
        obs, info = self.venv.reset(seed=seeds, options=options or None)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = _per_lane(info, self.num_envs)
        return obs

    def step_async(self, actions) -> None:
        self._actions = actions

    def step_wait(self):
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        done = terminated | truncated
        infos = [{"TimeLimit.truncated": cut} for cut in (truncated & ~terminated).tolist()]   # as DummyVecEnv
        if done.any():
            final_obs, final_info = info["final_obs"], info["final_info"]
            keys = [k for k in final_info if k[0] != "_"]
            for i in done.nonzero()[0]:
                lane = infos[i]
                lane["terminal_observation"] = final_obs[i]
                for k in keys:
                    lane[k] = final_info[k][i]
        return obs, reward.astype(np.float32), done, infos

    def close(self) -> None:
        self.venv.close()

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        return [indices] if isinstance(indices, (int, np.integer)) else indices

    def get_attr(self, attr_name, indices=None):
        value = getattr(self.venv, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]

    def get_images(self):
        frames = self.venv.render()
        return list(frames) if frames is not None else [None] * self.num_envs


def _per_lane(info: dict, n: int) -> list:
    """Gymnasium's vector info (arrays with masks) as SB3's list of dicts."""
    out = [{} for _ in range(n)]
    for key, value in info.items():
        if key[0] == "_":
            continue
        mask = info.get("_" + key, np.ones(n, dtype=bool))
        for i in np.flatnonzero(mask):
            out[i][key] = value[i]
    return out


def make_sb3_vec_env(env_id: str, n_envs: int = 8, seed=None, monitor: bool = True, **env_kwargs) -> VecEnv:
    """``TinyAlgoVecEnv(env_id, n_envs, **env_kwargs)`` seeded with ``seed``
    (lane i: seed + i), in SB3's ``VecMonitor`` (episode returns and lengths
    in ``infos[i]["episode"]``, as ``make_vec_env``'s ``Monitor`` gives)."""
    venv = TinyAlgoVecEnv(env_id, n_envs, **env_kwargs)
    if seed is not None:
        venv.seed(seed)
    return VecMonitor(venv) if monitor else venv
