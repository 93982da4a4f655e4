"""Stable-Baselines3 on tinyalgo's environments: SB3's checker on every id,
``make_vec_env`` as written (DummyVecEnv and SubprocVecEnv), and the batched
adapter ``tinyalgo.gym.sb3.TinyAlgoVecEnv`` equal, lane by lane, to SB3's
DummyVecEnv of single environments; PPO and A2C train on it.  Needs the
``sb3`` extra (Stable-Baselines3, hence torch): skips without it, and
.ci/run installs it."""
import warnings

import numpy as np
import pytest

pytestmark = [pytest.mark.sb3, pytest.mark.slow]
gym = pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

import tinyalgo.gym as tg  # noqa: E402
from stable_baselines3 import A2C, PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor  # noqa: E402

from tinyalgo.gym.sb3 import TinyAlgoVecEnv, make_sb3_vec_env  # noqa: E402

ALL_IDS = list(tg.ENV_IDS.values()) + list(tg.CLASSIC_IDS.values())


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_sb3_check_env_passes_without_a_warning(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id), warn=True)


def test_make_vec_env_as_written():
    """SB3 passes render_mode="rgb_array" to every environment it makes."""
    venv = make_vec_env("tinyalgo/Copy-v0", n_envs=8)
    assert isinstance(venv, DummyVecEnv) and venv.render_mode == "rgb_array"
    obs = venv.reset()
    assert obs.shape == (8, 5)
    obs, rewards, dones, infos = venv.step(np.array([venv.action_space.sample() for _ in range(8)]))
    assert obs.shape == (8, 5) and len(infos) == 8
    frame = venv.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3


@pytest.mark.parametrize("env_id, vec_env_kwargs", [
    ("tinyalgo.gym:tinyalgo/Reverse-v0", None),                  # each worker imports tinyalgo.gym
    ("tinyalgo/GymReverse-v0", {"start_method": "fork"}),       # a forked worker has the registry already
])
def test_make_vec_env_with_subprocesses(env_id, vec_env_kwargs):
    venv = make_vec_env(env_id, n_envs=2, vec_env_cls=SubprocVecEnv, vec_env_kwargs=vec_env_kwargs, seed=0)
    try:
        obs = venv.reset()
        assert len(obs) == 2
        for _ in range(10):
            obs, rewards, dones, infos = venv.step(np.array([venv.action_space.sample() for _ in range(2)]))
        assert len(infos) == 2
    finally:
        venv.close()


@pytest.mark.parametrize("env_id, kwargs", [("tinyalgo/Reverse-v0", dict(complexity=5)),
                                            ("tinyalgo/Addition3-v0", dict(curriculum=True, advance_after=2)),
                                            ("tinyalgo/GymRepeatCopy-v0", dict(advance_after=3)),
                                            ("tinyalgo/GymReversedAddition3-v0", {})])
def test_adapter_equals_dummy_vec_env_lane_by_lane(env_id, kwargs):
    n, seed = 4, 3
    dummy = make_vec_env(env_id, n_envs=n, seed=seed, env_kwargs=dict(kwargs, render_mode=None))
    batched = make_sb3_vec_env(env_id, n_envs=n, seed=seed, **kwargs)
    assert isinstance(batched, VecMonitor) and isinstance(batched.venv, TinyAlgoVecEnv)
    assert batched.observation_space == dummy.observation_space and batched.action_space == dummy.action_space
    np.testing.assert_array_equal(dummy.reset(), batched.reset())
    rng = np.random.default_rng(0)
    ends = 0
    for step in range(300):
        actions = np.stack([dummy.action_space.sample() for _ in range(n)])
        actions[:, 1] = rng.random(n) < 0.6 if step % 3 else actions[:, 1]
        expected, got = dummy.step(actions), batched.step(actions)
        for a, b in zip(expected[:3], got[:3]):
            np.testing.assert_array_equal(a, b)
        assert got[1].dtype == np.float32
        for want, have in zip(expected[3], got[3]):
            assert set(want) == set(have)
            for key in want:
                if key == "episode":
                    assert want[key]["r"] == pytest.approx(have[key]["r"]) and want[key]["l"] == have[key]["l"]
                else:
                    np.testing.assert_array_equal(want[key], have[key])
        ends += int(expected[2].sum())
    assert ends > 50


def test_adapter_needs_same_step_autoreset_and_an_id_with_num_envs():
    with pytest.raises(ValueError, match="autoreset_mode='SameStep'"):
        TinyAlgoVecEnv(gym.make_vec("tinyalgo/Copy-v0", num_envs=2))
    with pytest.raises(ValueError, match="num_envs is needed"):
        TinyAlgoVecEnv("tinyalgo/Copy-v0")
    with pytest.raises(ValueError, match="a tinyalgo id or a TinyAlgoVectorEnv"):
        TinyAlgoVecEnv(gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync",
                                    vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}))
    venv = TinyAlgoVecEnv(gym.make_vec("tinyalgo/Copy-v0", num_envs=2, autoreset_mode="SameStep",
                                       render_mode="rgb_array"))
    venv.reset()
    assert venv.render().dtype == np.uint8 and venv.get_attr("render_mode") == ["rgb_array"] * 2


@pytest.mark.parametrize("algo, env_id", [(PPO, "tinyalgo/Copy-v0"), (A2C, "tinyalgo/GymReverse-v0")])
def test_sb3_trains_on_the_batched_env(algo, env_id):
    venv = make_sb3_vec_env(env_id, n_envs=8, seed=0)
    model = algo("MlpPolicy", venv, n_steps=16, seed=0, device="cpu",
                 **({"batch_size": 64, "n_epochs": 1} if algo is PPO else {}))
    model.learn(256)
    obs = venv.reset()
    actions, _ = model.predict(obs, deterministic=True)
    assert actions.shape == (8, 3) and all(a in venv.action_space for a in actions)
    assert model.num_timesteps >= 256
