"""Stable-Baselines3 on tinyalgo's environments: SB3's checker on every id,
``make_vec_env`` as written (DummyVecEnv and SubprocVecEnv), and the batched
adapter ``tinyalgo.gym.sb3.TinyAlgoVecEnv`` equal, lane by lane, to SB3's
DummyVecEnv of single environments; PPO and A2C train on it, sb3-contrib's
RecurrentPPO on it and on ``make_vec_env``, DQN on the ``Discrete`` actions;
``VecNormalize`` and ``VecFrameStack`` take the one-hot observations.  Needs
the ``sb3`` extra (Stable-Baselines3, hence torch; sb3-contrib): skips
without it, and .ci/run installs it."""
import warnings

import numpy as np
import pytest

pytestmark = [pytest.mark.sb3, pytest.mark.slow]
gym = pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

import tinyalgo.gym as tg  # noqa: E402
from stable_baselines3 import A2C, DQN, PPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import (DummyVecEnv, SubprocVecEnv, VecFrameStack, VecMonitor,  # noqa: E402
                                              VecNormalize)

from tinyalgo.gym.sb3 import TinyAlgoVecEnv, make_sb3_vec_env  # noqa: E402

ALL_IDS = list(tg.ENV_IDS.values()) + list(tg.CLASSIC_IDS.values())


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_sb3_check_env_passes_without_a_warning(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id), warn=True)
        check_env(gym.make(env_id, action_space="discrete", observation_space="onehot"), warn=True)


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


@pytest.mark.parametrize("make", ["batched", "make_vec_env"])
def test_recurrent_ppo_constructs_and_learns_copy(make):
    """sb3-contrib sizes its LSTM with sum(observation_space.nvec): a Python int here."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    if make == "batched":
        venv = make_sb3_vec_env("tinyalgo/Copy-v0", n_envs=4, seed=0, complexity=3)
    else:
        venv = make_vec_env("tinyalgo/Copy-v0", n_envs=4, seed=0, env_kwargs=dict(complexity=3))
    assert type(sum(venv.observation_space.nvec)) is int
    model = sb3_contrib.RecurrentPPO("MlpLstmPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0,
                                     device="cpu")
    before = [p.detach().clone() for p in model.policy.lstm_actor.parameters()]
    model.learn(128)
    assert model.num_timesteps >= 128
    assert any(not (a == p).all() for a, p in zip(before, model.policy.lstm_actor.parameters()))
    obs = venv.reset()
    actions, state = model.predict(obs, state=None, episode_start=np.ones(4, bool), deterministic=True)
    assert actions.shape == (4, 3) and all(a in venv.action_space for a in actions)


@pytest.mark.parametrize("env_id", ["tinyalgo/Copy-v0", "tinyalgo/GymReverse-v0"])
def test_dqn_on_discrete_actions(env_id):
    """action_space="discrete": DQN as written, on the batched env and on make_vec_env."""
    for venv in (make_sb3_vec_env(env_id, n_envs=4, seed=0, action_space="discrete"),
                 make_vec_env(env_id, n_envs=2, seed=0, env_kwargs=dict(action_space="discrete"))):
        assert isinstance(venv.action_space, gym.spaces.Discrete)
        model = DQN("MlpPolicy", venv, learning_starts=32, buffer_size=1000, train_freq=4, seed=0, device="cpu")
        model.learn(200)
        assert model.num_timesteps >= 200
        obs = venv.reset()
        actions, _ = model.predict(obs, deterministic=True)
        assert actions.shape == (venv.num_envs,) and all(a in venv.action_space for a in actions)
        obs, rewards, dones, infos = venv.step(actions)
        assert len(infos) == venv.num_envs


def test_discrete_actions_act_as_their_triples():
    """The batched adapter with Discrete actions equals it with the triples they decode to."""
    n = 4
    by_index = make_sb3_vec_env("tinyalgo/Reverse-v0", n_envs=n, seed=2, action_space="discrete", complexity=4)
    by_triple = make_sb3_vec_env("tinyalgo/Reverse-v0", n_envs=n, seed=2, complexity=4)
    table = by_index.venv.venv.joint_actions
    np.testing.assert_array_equal(by_index.reset(), by_triple.reset())
    rng = np.random.default_rng(0)
    for _ in range(100):
        k = rng.integers(table.n, size=n)
        a, b = by_index.step(k), by_triple.step(table.decode(k))
        for x, y in zip(a[:3], b[:3]):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("env_id", ["tinyalgo/Addition-v0", "tinyalgo/GymCopy-v0"])
def test_vec_normalize_and_frame_stack_take_onehot_observations(env_id):
    venv = make_sb3_vec_env(env_id, n_envs=4, seed=0, observation_space="onehot")
    width = venv.observation_space.shape[0]
    stacked = VecFrameStack(VecNormalize(venv), n_stack=3)
    obs = stacked.reset()
    assert obs.shape == (4, 3 * width) and obs.dtype == np.float32
    model = PPO("MlpPolicy", stacked, n_steps=16, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    obs, rewards, dones, infos = stacked.step(model.predict(stacked.reset())[0])
    assert obs.shape == (4, 3 * width) and np.isfinite(obs).all()
    plain = make_vec_env(env_id, n_envs=2, seed=0, env_kwargs=dict(observation_space="onehot"))
    assert VecFrameStack(VecNormalize(plain), n_stack=2).reset().shape == (2, 2 * width)
