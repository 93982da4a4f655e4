"""tinyalgo.gym: the six tasks as Gymnasium environments, single and vector."""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import tinyalgo.gym as tg  # noqa: E402  (after the skip: needs gymnasium)
from gymnasium.utils.env_checker import check_env  # noqa: E402

TASKS = list(tg.ENV_IDS)


@pytest.mark.parametrize("task", TASKS)
def test_check_env_passes(task):
    env = tg.TinyAlgoEnv(task, complexity=8, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "no spec": alternative render modes not tried
        check_env(env)
    assert env.action_space.nvec.tolist() == [env.task.n_moves, 2, env.task.vocab.size]
    assert env.observation_space.nvec.tolist() == list(env.environment.obs_sizes)


@pytest.mark.parametrize("task", TASKS)
def test_ground_truth_solves_every_task(task):
    env = gym.make(tg.ENV_IDS[task], complexity=9, base=7)
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        outputs, total, steps = info["v_hat"], 0.0, 0
        assert outputs >= 1 and info["level"] == 9
        while True:
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
            total, steps = total + reward, steps + 1
            assert obs in env.observation_space
            if terminated or truncated:
                break
        assert terminated and not truncated and info["reason"] == "all written"
        assert total == outputs == info["n_correct"]


def test_registered_ids_and_vector_entry_point():
    for task, env_id in tg.ENV_IDS.items():
        assert gym.spec(env_id).kwargs["task"] == task
    envs = gym.make_vec("tinyalgo/Addition-v0", num_envs=3, complexity=6)
    assert isinstance(envs, tg.TinyAlgoVectorEnv) and envs.num_envs == 3
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    obs, info = envs.reset(seed=5)
    assert obs.shape == (3, 5) and obs in envs.observation_space


def _compare_vector_with_singles(task, n_steps, seed=11, n=4, action_seed=0, **options):
    """Step a vector env and n single envs (seeds seed + i) with the same
    actions; assert equal trajectories; return the end reasons seen."""
    venv = tg.TinyAlgoVectorEnv(task, num_envs=n, **options)
    venv.single_action_space.seed(action_seed)
    singles = [tg.TinyAlgoEnv(task, **options) for _ in range(n)]
    vobs, vinfo = venv.reset(seed=seed)
    for i, env in enumerate(singles):
        obs, info = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs, vobs[i])
        assert info["complexity"] == vinfo["complexity"][i]
    rng = np.random.default_rng(action_seed)
    reasons = []
    # per lane and episode: follow the ground truth (mostly), move without
    # writing (a timeout), or act at random (mostly a wrong write)
    mode = rng.choice(3, size=n, p=[0.6, 0.2, 0.2])
    for _ in range(n_steps):
        actions = vinfo["ground_truth"].copy()
        for i in range(n):
            if mode[i] == 2 or actions[i, 0] < 0 or (mode[i] == 0 and rng.random() < 0.03):
                actions[i] = venv.single_action_space.sample()
            elif mode[i] == 1:
                actions[i] = (rng.integers(venv.task.n_moves), 0, 0)
        vobs, vrew, vterm, vtrunc, vinfo = venv.step(actions)
        for i, env in enumerate(singles):
            obs, reward, terminated, truncated, info = env.step(actions[i])
            assert (reward, terminated, truncated) == (vrew[i], vterm[i], vtrunc[i])
            if terminated or truncated:
                assert vinfo["_final_obs"][i]
                np.testing.assert_array_equal(obs, vinfo["final_obs"][i])
                assert info["reason"] == vinfo["final_info"]["reason"][i]
                assert info["n_correct"] == vinfo["final_info"]["n_correct"][i]
                reasons.append(info["reason"])
                mode[i] = rng.choice(3, p=[0.6, 0.2, 0.2])
                obs, info = env.reset()
            else:
                assert not vinfo.get("_final_obs", np.zeros(n, dtype=bool))[i]
            np.testing.assert_array_equal(obs, vobs[i])
            np.testing.assert_array_equal(info["ground_truth"], vinfo["ground_truth"][i])
            assert (info["v_hat"], info["next_target"], info["complexity"], info["level"]) == \
                (vinfo["v_hat"][i], vinfo["next_target"][i], vinfo["complexity"][i], vinfo["level"][i])
    return reasons, venv


@pytest.mark.parametrize("task", ["reverse", "walk", "addition3"])
def test_vector_env_matches_single_envs(task):
    reasons, _ = _compare_vector_with_singles(task, 150, complexity=7)
    assert {"all written", "wrong write", "timeout"} <= set(reasons)


def test_vector_env_matches_single_envs_with_curriculum():
    reasons, venv = _compare_vector_with_singles("copy", 200, curriculum=True, advance_after=2)
    assert set(reasons) == {"all written", "wrong write", "timeout"}
    assert venv.levels.min() > 6                   # every lane advanced (the singles matched it step by step)


def test_curriculum_advances_after_solved_episodes_in_a_row():
    env = tg.TinyAlgoEnv("reverse", curriculum=True, advance_after=3)
    assert env.level == 6
    obs, info = env.reset(seed=0)
    seen = []
    for episode in range(7):
        if episode == 2:                                    # a failure starts the count again
            obs, reward, terminated, truncated, info = env.step((0, 1, (info["next_target"] + 1) % 10))
            assert terminated and info["reason"] == "wrong write"
        else:
            while True:
                obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
                if terminated or truncated:
                    break
            assert info["reason"] == "all written"
        seen.append(env.level)
        obs, info = env.reset()
        assert info["level"] == env.level
    assert seen == [6, 6, 6, 6, 6, 10, 10]


def test_reset_option_sets_the_complexity_of_one_episode():
    env = tg.TinyAlgoEnv("copy", complexity=5)
    obs, info = env.reset(seed=3, options={"complexity": 12})
    assert info["complexity"] == 12 and info["v_hat"] == 12
    obs, info = env.reset()
    assert info["complexity"] == 5


def test_timeout_is_truncation():
    env = tg.TinyAlgoEnv("copy", complexity=4)
    env.reset(seed=0)
    for step in range(6):                                   # complexity + 2 steps without a write
        obs, reward, terminated, truncated, info = env.step((1, 0, 0))
    assert truncated and not terminated and info["reason"] == "timeout" and step == 5
    with pytest.raises(RuntimeError, match="reset"):
        env.step((1, 0, 0))


def test_final_observation_is_the_observation_of_the_step():
    """The last observation of an episode is computed before tinyalgo starts
    the next instance; where the episode goes on it must be the observation."""
    rng = np.random.default_rng(1)
    for task in TASKS:
        venv = tg.TinyAlgoVectorEnv(task, num_envs=6, complexity=6)
        venv.action_space.seed(4)
        venv.reset(seed=2)
        for _ in range(40):
            actions = venv.action_space.sample()
            actions[:, 1] = rng.random(6) < 0.1
            explored = rng.random(6) < 0.3
            out = venv._lanes.step(actions, explored)
            obs, ended, final = out[0], out[2] | out[3], out[6]
            np.testing.assert_array_equal(final[~ended], obs[~ended])
            venv._lanes.draw(ended.nonzero()[0])
            assert np.array_equal(final[ended][:, 1:], np.stack([np.where(actions[ended, 1] == 1, actions[ended, 2], venv.task.vocab.NONE),
                                                                  final[ended][:, 2], actions[ended, 0], actions[ended, 1]], 1))


def test_explored_flag():
    env = tg.TinyAlgoEnv("copy", complexity=6)
    obs, info = env.reset(seed=0)
    assert obs[2] == 0
    obs, *_ = env.step((1, 0, 0))
    assert obs[2] == 0
    obs, *_ = env.step((1, 0, 0), explored=True)
    assert obs[2] == 1
    obs, *_ = env.step((1, 0, 0))
    assert obs[2] == 1


def test_render_ansi():
    env = tg.TinyAlgoEnv("addition", complexity=6, render_mode="ansi")
    obs, info = env.reset(seed=0)
    frame = env.render()
    assert frame.startswith("addition  complexity 6") and "Y: " in frame
    env.step((0, 1, (info["next_target"] + 1) % 10))
    assert env.render() == "episode ended: wrong write, 0 of 4 outputs right"
    assert tg.TinyAlgoEnv("copy").render() is None


@pytest.mark.parametrize("kwargs, match", [
    (dict(task="sorting"), "unknown task 'sorting'; allowed: copy, reverse"),
    (dict(task="copy", base=11), r"base must be an integer in 2\.\.10; got 11"),
    (dict(task="multiplication", base=2), "at least 3"),
    (dict(task="walk", complexity=1), "complexity must be an integer of at least 2 for task 'walk'; got 1"),
    (dict(task="copy", reward="continuous"), "reward must be 'binary'"),
    (dict(task="copy", complexity=8, curriculum=True), "either complexity"),
    (dict(task="copy", render_mode="human"), "render_mode must be None or 'ansi'"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tg.TinyAlgoEnv(**kwargs)


def test_bad_actions_and_reset_options():
    env = tg.TinyAlgoEnv("walk", complexity=4)
    with pytest.raises(ValueError, match=r"complexity'\] must be an integer of at least 2"):
        env.reset(options={"complexity": 1})
    env.reset(seed=0)
    V = env.task.vocab.size
    for bad in [(4, 0, 0), (0, 2, 0), (0, 1, V), (-1, 0, 0), (0, 0), (0.5, 0, 0)]:
        with pytest.raises(ValueError, match=r"move in 0\.\.3, write 0 or 1, symbol in 0\.\."):
            env.step(bad)
    venv = tg.TinyAlgoVectorEnv("copy", num_envs=2, complexity=3)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions of shape \(2, 3\)"):
        venv.step(np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="num_envs must be an integer"):
        tg.TinyAlgoVectorEnv("copy", num_envs=0)
