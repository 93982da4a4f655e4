"""tinyalgo.gym: the six tasks as Gymnasium environments, single and vector."""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import tinyalgo.gym as tg  # noqa: E402  (after the skip: needs gymnasium)
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

TASKS = list(tg.ENV_IDS)
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("render_mode, step_info", [("ansi", True), ("rgb_array", False)])
def test_check_env_passes(task, render_mode, step_info):
    env = tg.TinyAlgoEnv(task, complexity=8, render_mode=render_mode, step_info=step_info)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "no spec": alternative render modes not tried
        check_env(env)
    assert env.action_space.nvec.tolist() == [env.task.n_moves, 2, env.task.vocab.size]
    assert env.observation_space.nvec.tolist() == list(env.environment.obs_sizes)


@pytest.mark.parametrize("task", TASKS)
def test_ground_truth_solves_every_task(task):
    env = gym.make(tg.ENV_IDS[task], complexity=9, base=7, step_info=True)
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


def test_default_info_costs_nothing_while_an_episode_runs():
    env = tg.TinyAlgoEnv("reverse", complexity=6)
    obs, info = env.reset(seed=0)
    assert info == {"complexity": 7, "level": 6}          # reverse: 3 digits, complexity 2n + 1
    obs, reward, terminated, truncated, info = env.step((1, 0, 0))
    assert info == {} and not terminated
    obs, reward, terminated, truncated, info = env.step((1, 1, 12))
    assert terminated and info == {"reason": "wrong write", "n_correct": 0, "complexity": 7, "level": 6}


def test_registered_ids_and_vector_entry_point():
    for task, env_id in tg.ENV_IDS.items():
        assert gym.spec(env_id).kwargs["task"] == task
    envs = gym.make_vec("tinyalgo/Addition-v0", num_envs=3, complexity=6)
    assert isinstance(envs, tg.TinyAlgoVectorEnv) and envs.num_envs == 3
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = envs.reset(seed=5)
    assert obs.shape == (3, 5) and obs in envs.observation_space
    same = gym.make_vec("tinyalgo/Addition-v0", num_envs=3, complexity=6, autoreset_mode="SameStep")
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert tg.TinyAlgoVectorEnv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP   # the class's is untouched


def _random_actions(venv, vinfo, rng, mode):
    """Per lane: follow the ground truth (mostly), move without writing (a
    timeout) or act at random (mostly a wrong write)."""
    n = venv.num_envs
    actions = venv._ground_truth(venv.environment.ground_truth())       # whatever the info carries
    for i in range(n):
        if (mode[i] == 2 or actions[i, 0] < 0 or (mode[i] == 0 and rng.random() < 0.03)
                or actions[i] not in venv.single_action_space):    # an ended lane's (its action is ignored)
            actions[i] = venv.single_action_space.sample()
        elif mode[i] == 1:
            actions[i] = (rng.integers(venv.single_action_space.nvec[0]), 0, 0)
    return actions


def compare_vector_with_singles(make_single, make_vector, n_steps, autoreset_mode, seed=11, n=4, action_seed=0):
    """Step a vector env and n single envs (seeds seed + i) with the same
    actions, in ``autoreset_mode``; assert equal trajectories (observations,
    rewards, ends, every info key); return the end reasons seen and the
    vector env."""
    venv = make_vector(n, autoreset_mode)
    venv.single_action_space.seed(action_seed)
    singles = [make_single() for _ in range(n)]
    vobs, vinfo = venv.reset(seed=seed)
    sinfo = []
    for i, env in enumerate(singles):
        obs, info = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs, vobs[i])
        sinfo.append(info)
    _same_info(sinfo, vinfo, range(n))
    rng = np.random.default_rng(action_seed)
    reasons, waiting = [], np.zeros(n, dtype=bool)
    mode = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    for _ in range(n_steps):
        actions = _random_actions(venv, vinfo, rng, mode)
        vobs, vrew, vterm, vtrunc, vinfo = venv.step(actions)
        ended_now = []
        for i, env in enumerate(singles):
            if waiting[i]:                                  # NEXT_STEP: this step resets the lane
                if autoreset_mode == AutoresetMode.DISABLED:
                    assert (vrew[i], vterm[i], vtrunc[i]) == (0, False, False)
                    continue
                obs, info = env.reset()
                assert (vrew[i], vterm[i], vtrunc[i]) == (0, False, False)
                np.testing.assert_array_equal(obs, vobs[i])
                sinfo[i], waiting[i] = info, False
                continue
            obs, reward, terminated, truncated, info = env.step(actions[i])
            assert (reward, terminated, truncated) == (vrew[i], vterm[i], vtrunc[i])
            sinfo[i] = info
            if terminated or truncated:
                reasons.append(info["reason"])
                ended_now.append(i)
                mode[i] = rng.choice(3, p=[0.5, 0.3, 0.2])
                if autoreset_mode == AutoresetMode.SAME_STEP:
                    assert vinfo["_final_obs"][i]
                    np.testing.assert_array_equal(obs, vinfo["final_obs"][i])
                    _same_info([info], vinfo["final_info"], [i], lanes=[0])
                    obs, sinfo[i] = env.reset()
                else:
                    waiting[i] = True
            np.testing.assert_array_equal(obs, vobs[i])
        live = [i for i in range(n) if not (waiting[i] and autoreset_mode == AutoresetMode.DISABLED)
                or i in ended_now]
        _same_info(sinfo, vinfo, live)
        if autoreset_mode == AutoresetMode.DISABLED and waiting.any():
            vobs, vinfo = venv.reset(options={"reset_mask": waiting.copy()})
            for i in np.flatnonzero(waiting):
                obs, sinfo[i] = singles[i].reset()
                np.testing.assert_array_equal(obs, vobs[i])
            _same_info(sinfo, vinfo, np.flatnonzero(waiting))
            waiting[:] = False
    return reasons, venv


def _same_info(singles, vinfo, indices, lanes=None):
    """Every key of the singles' infos is in the vector info, with its mask set, and equal."""
    for i, lane in zip(indices, lanes or indices):
        info = singles[lane] if lanes else singles[i]
        for key, value in info.items():
            assert vinfo["_" + key][i], (key, i)
            np.testing.assert_array_equal(value, vinfo[key][i], err_msg=f"{key} of lane {i}")
        extra = [k for k in vinfo if k[0] != "_" and k not in info and k not in ("final_obs", "final_info")
                 and vinfo["_" + k][i]]
        assert extra == [], (i, extra)


def _paper(task, **options):
    return (lambda: tg.TinyAlgoEnv(task, **options),
            lambda n, mode: tg.TinyAlgoVectorEnv(task, num_envs=n, autoreset_mode=mode, **options))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("task, step_info", [("reverse", True), ("walk", False), ("addition3", True),
                                             ("multiplication", False)])
def test_vector_env_matches_single_envs(task, step_info, mode):
    reasons, _ = compare_vector_with_singles(*_paper(task, complexity=7, step_info=step_info), 120, mode)
    assert {"all written", "wrong write", "timeout"} <= set(reasons)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_env_matches_single_envs_with_curriculum(mode):
    reasons, venv = compare_vector_with_singles(*_paper("copy", curriculum=True, advance_after=2, step_info=True),
                                                200, mode)
    assert set(reasons) == {"all written", "wrong write", "timeout"}
    assert venv.levels.min() > 6                   # every lane advanced (the singles matched it step by step)


def test_next_step_autoreset_ignores_the_action_of_an_ended_lane():
    venv = tg.TinyAlgoVectorEnv("copy", num_envs=2, complexity=4, step_info=True)
    obs, info = venv.reset(seed=0)
    wrong = (info["next_target"][0] + 1) % 10
    obs, reward, terminated, truncated, info = venv.step(np.array([[1, 1, wrong], [1, 0, 0]]))
    assert terminated.tolist() == [True, False] and obs[0, 1] == wrong            # the episode's last observation
    assert info["reason"].tolist() == ["wrong write", "running"]
    obs, reward, terminated, truncated, info = venv.step(np.array([[0, 1, wrong], [1, 0, 0]]))
    assert reward[0] == 0 and not terminated[0] and not truncated[0]
    assert obs[0].tolist()[1:] == [venv.task.vocab.NONE, 0, 2, 2]                # a new episode's first observation
    assert info["reason"][0] == "running" and info["n_correct"][0] == 0 and info["v_hat"][0] == 4


def test_max_episode_steps_truncates_vector_episodes():
    venv = gym.make_vec("tinyalgo/Copy-v0", num_envs=3, complexity=50, max_episode_steps=5)
    venv.reset(seed=0)
    for step in range(5):
        obs, reward, terminated, truncated, info = venv.step(np.tile([1, 0, 0], (3, 1)))
        assert truncated.all() == (step == 4)
    assert info == {}                          # the running episodes' info, as TimeLimit over a single env gives
    obs, reward, terminated, truncated, info = venv.step(np.tile([1, 0, 0], (3, 1)))
    assert not truncated.any() and (obs[:, 3] == 2).all()          # reset: no previous move


def test_single_env_wrappers_need_a_vector_of_single_envs():
    """Gymnasium applies ``wrappers=`` to single environments only: with
    vectorization_mode="sync" (its SyncVectorEnv of tinyalgo's single envs)."""
    from gymnasium.wrappers import FlattenObservation, TimeLimit
    envs = gym.make_vec("tinyalgo/Walk-v0", num_envs=2, vectorization_mode="sync", complexity=5,
                        wrappers=[FlattenObservation, lambda e: TimeLimit(e, 3)])
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, int(sum(envs.single_observation_space.shape)))
    for _ in range(3):
        obs, reward, terminated, truncated, info = envs.step(np.tile([1, 0, 0], (2, 1)))
    assert truncated.all()
    with pytest.raises(gym.error.Error, match="wrappers"):
        gym.make_vec("tinyalgo/Walk-v0", num_envs=2, wrappers=[FlattenObservation])


def _vector_wrappers():
    from gymnasium.wrappers import FlattenObservation as SingleFlatten
    from gymnasium.wrappers import TransformAction as SingleTransformAction
    from gymnasium.wrappers import TransformReward as SingleTransformReward
    from gymnasium.spaces import Box, MultiDiscrete
    from gymnasium.wrappers import vector as w
    flat = w.FlattenObservation
    return {
        "FlattenObservation": lambda e: flat(e),
        "NormalizeObservation": lambda e: w.NormalizeObservation(flat(e)),
        "TransformObservation": lambda e: w.TransformObservation(
            e, lambda o: o[:, ::-1], Box(0, e.observation_space.high[:, ::-1], dtype=np.int64),
            MultiDiscrete(e.single_observation_space.nvec[::-1])),
        "DtypeObservation": lambda e: w.DtypeObservation(flat(e), np.float32),
        "RescaleObservation": lambda e: w.RescaleObservation(flat(e), -1.0, 1.0),
        "ReshapeObservation": lambda e: w.ReshapeObservation(flat(e), (1,) + flat(e).single_observation_space.shape),
        "TransformAction": lambda e: w.TransformAction(e, lambda a: a),
        "TransformReward": lambda e: w.TransformReward(e, lambda r: r * 3),
        "ClipReward": lambda e: w.ClipReward(e, 0.0, 0.5),
        "NormalizeReward": lambda e: w.NormalizeReward(e),
        "VectorizeTransformObservation": lambda e: w.VectorizeTransformObservation(e, SingleFlatten),
        "VectorizeTransformAction": lambda e: w.VectorizeTransformAction(e, SingleTransformAction, func=lambda a: a,
                                                                         action_space=e.single_action_space),
        "VectorizeTransformReward": lambda e: w.VectorizeTransformReward(e, SingleTransformReward, func=lambda r: -r),
        "RecordEpisodeStatistics": lambda e: w.RecordEpisodeStatistics(e),
        "DictInfoToList": lambda e: w.DictInfoToList(e),
    }


@pytest.mark.parametrize("name", list(_vector_wrappers()))
def test_every_vector_wrapper_composes(name):
    """Each wrapper of gymnasium.wrappers.vector that applies to these spaces
    (the others need Box actions, images, dicts or another array library)
    wraps the native vector env (NEXT_STEP autoreset) and steps through resets."""
    envs = _vector_wrappers()[name](gym.make_vec("tinyalgo/Reverse-v0", num_envs=4, complexity=4))
    envs.action_space.seed(0)
    obs, info = envs.reset(seed=0)
    assert obs in envs.observation_space
    ends = 0
    for _ in range(30):
        obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
        assert obs in envs.observation_space and np.isfinite(reward).all()
        ends += int(np.sum(terminated | truncated))
    assert ends > 4


def test_record_episode_statistics_counts_each_lane_episodes():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(gym.make_vec("tinyalgo/Copy-v0", num_envs=3, complexity=3))
    envs.reset(seed=1)
    returns, lengths = np.zeros(3), np.zeros(3, dtype=int)
    for _ in range(40):
        obs, reward, terminated, truncated, info = envs.step(np.tile([1, 1, 0], (3, 1)))
        returns += reward
        lengths += 1
        ended = terminated | truncated
        if ended.any():
            np.testing.assert_array_equal(info["episode"]["r"][ended], returns[ended])
            np.testing.assert_array_equal(info["episode"]["l"][ended], lengths[ended])
            returns[ended], lengths[ended] = 0, -1          # the next step is the reset, not counted


def test_record_video_films_episodes(tmp_path):
    pytest.importorskip("moviepy")
    env = gym.wrappers.RecordVideo(gym.make("tinyalgo/Walk-v0", complexity=6, render_mode="rgb_array",
                                            step_info=True), str(tmp_path / "single"), episode_trigger=lambda e: True)
    for episode in range(2):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
            done = terminated or truncated
    env.close()
    films = sorted(p.name for p in (tmp_path / "single").glob("*.mp4"))
    assert films == ["rl-video-episode-0.mp4", "rl-video-episode-1.mp4"]
    venv = gym.wrappers.vector.RecordVideo(gym.make_vec("tinyalgo/Copy-v0", num_envs=4, render_mode="rgb_array"),
                                           str(tmp_path / "vector"), episode_trigger=lambda e: e == 0)
    venv.reset(seed=0)
    for _ in range(8):
        venv.step(venv.action_space.sample())
    venv.close()
    assert len(list((tmp_path / "vector").glob("*.mp4"))) == 1


def test_rgb_array_frames():
    env = tg.TinyAlgoEnv("addition", complexity=6, render_mode="rgb_array", step_info=True)
    obs, info = env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.shape == env.frame_shape
    assert first.shape[0] % 16 == first.shape[1] % 16 == 0
    from tinyalgo.gym import render as r
    assert (first == r.HEAD).all(axis=2).sum() > 100           # the head's cell is yellow
    obs, reward, terminated, truncated, info = env.step(info["ground_truth"])       # down
    obs, reward, terminated, truncated, info = env.step(info["ground_truth"])       # left and write
    assert reward == 1
    second = env.render()
    assert second.shape == first.shape and (second == r.RIGHT).all(axis=2).sum() > 100   # a correct output
    assert not (second == r.WRONG).all(axis=2).any()
    env.step((0, 1, (info["next_target"] + 1) % 10))
    assert (env.render() == r.WRONG).all(axis=2).sum() > 100                              # the wrong one, red
    tape = tg.TinyAlgoEnv("copy", complexity=40, render_mode="rgb_array")
    tape.reset(seed=0)
    assert tape.render().shape == tape.frame_shape and tape.frame_shape[0] < first.shape[0]
    frames = tg.TinyAlgoVectorEnv("walk", num_envs=3, render_mode="rgb_array")
    frames.reset(seed=0)
    assert [f.shape for f in frames.render()] == [frames.frame_shape] * 3
    with pytest.raises(RuntimeError, match="reset"):
        tg.TinyAlgoEnv("copy", render_mode="rgb_array").render()


def test_rgb_glyphs_are_distinct():
    from tinyalgo.gym.render import FONT, GLYPHS
    flat = FONT.reshape(len(GLYPHS), -1)
    assert len({row.tobytes() for row in flat}) == len(GLYPHS)
    with pytest.raises(ValueError, match="no glyph for '#'"):
        __import__("tinyalgo.gym.render", fromlist=["glyph"]).glyph("#")


def test_curriculum_advances_after_solved_episodes_in_a_row():
    env = tg.TinyAlgoEnv("reverse", curriculum=True, advance_after=3, step_info=True)
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
        assert 2 <= info["complexity"] <= env.level + 1
    assert seen == [6, 6, 6, 6, 6, 10, 10]


def test_reset_option_sets_the_complexity_of_one_episode():
    env = tg.TinyAlgoEnv("copy", complexity=5)
    obs, info = env.reset(seed=3, options={"complexity": 12})
    assert info["complexity"] == 12
    obs, info = env.reset()
    assert info["complexity"] == 5
    venv = tg.TinyAlgoVectorEnv("copy", num_envs=2, complexity=5)
    obs, info = venv.reset(seed=3, options={"complexity": 12})
    assert info["complexity"].tolist() == [12, 12]


def test_same_seed_same_instances_and_chunks_do_not_leak_between_seeds():
    a, b = (tg.TinyAlgoEnv("addition", complexity=8, step_info=True) for _ in range(2))
    first = [a.reset(seed=4)[1]["ground_truth"]] + [a.reset()[1]["next_target"] for _ in range(5)]
    b.reset(seed=99)
    again = [b.reset(seed=4)[1]["ground_truth"]] + [b.reset()[1]["next_target"] for _ in range(5)]
    assert all(np.array_equal(x, y) for x, y in zip(first, again))


def test_timeout_is_truncation():
    env = tg.TinyAlgoEnv("copy", complexity=4)
    env.reset(seed=0)
    for step in range(6):                                   # complexity + 2 steps without a write
        obs, reward, terminated, truncated, info = env.step((1, 0, 0))
        assert truncated == (step == 5) and not terminated
    assert info["reason"] == "timeout"
    with pytest.raises(RuntimeError, match="reset"):
        env.step((1, 0, 0))


def test_scalar_reads_match_the_board_far_from_the_instance():
    """The single env reads the board on Python ints: off the instance, in
    the margins and the random fill, on every task, as the batched one does."""
    for task in TASKS:
        env = tg.TinyAlgoEnv(task, complexity=6, render_mode="ansi")
        venv = tg.TinyAlgoVectorEnv(task, num_envs=1, complexity=6)
        obs, _ = env.reset(seed=7)
        vobs, _ = venv.reset(seed=7)
        n = env.task.n_moves
        for move in [0] * 12 + [1] * 30 + list(range(n)) * 3 + [n - 1] * 6:
            obs, *_, terminated, truncated, _ = env.step((move, 0, 0))
            vobs, *_ = venv.step(np.array([[move, 0, 0]]))
            np.testing.assert_array_equal(obs, vobs[0])
            if terminated or truncated:
                obs, _ = env.reset()
                venv.step(np.array([[0, 0, 0]]))            # NEXT_STEP: the reset step


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
    env = tg.TinyAlgoEnv("addition", complexity=6, render_mode="ansi", step_info=True)
    obs, info = env.reset(seed=0)
    frame = env.render()
    assert frame.startswith("addition  complexity 6") and "Y: " in frame
    env.step((0, 1, (info["next_target"] + 1) % 10))
    assert env.render() == "episode ended: wrong write, 0 of 4 outputs right"
    assert tg.TinyAlgoEnv("copy").render() is None


def test_load_starts_a_canned_instance():
    env = tg.TinyAlgoEnv("copy", step_info=True)
    obs, info = env.load(env.task.build(np.array([[3, 1, 4]]), np.array([3]), np.array([0])))
    assert obs[0] == 3 and info["v_hat"] == 3 and info["next_target"] == 3
    for digit in (3, 1):
        obs, reward, terminated, truncated, info = env.step((1, 1, digit))
        assert reward == 1 and not terminated
    obs, reward, terminated, truncated, info = env.step((1, 1, 5))
    assert terminated and reward == 0 and info["n_correct"] == 2
    with pytest.raises(ValueError, match="one instance"):
        env.load(env.task.build(np.array([[3], [4]]), np.array([1, 1]), np.array([0, 0])))


@pytest.mark.parametrize("kwargs, match", [
    (dict(task="sorting"), "unknown task 'sorting'; allowed: copy, reverse"),
    (dict(task="copy", base=11), r"base must be an integer in 2\.\.10; got 11"),
    (dict(task="multiplication", base=2), "at least 3"),
    (dict(task="walk", complexity=1), "complexity must be an integer of at least 2 for task 'walk'; got 1"),
    (dict(task="copy", reward="continuous"), "reward must be 'binary'"),
    (dict(task="copy", complexity=8, curriculum=True), "either complexity"),
    (dict(task="copy", render_mode="human"), "render_mode must be one of None, 'ansi', 'rgb_array'; got 'human'"),
    (dict(task="copy", step_info="yes"), "step_info must be True or False"),
    (dict(task="copy", advance_after=0), "advance_after must be an integer of at least 1"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tg.TinyAlgoEnv(**kwargs)
    with pytest.raises(ValueError, match=match):
        tg.TinyAlgoVectorEnv(num_envs=2, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_envs=0), "num_envs must be an integer"),
    (dict(autoreset_mode="later"), "autoreset_mode must be an AutoresetMode or one of 'NextStep'"),
    (dict(max_episode_steps=0), "max_episode_steps must be None or an integer of at least 1"),
])
def test_bad_vector_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tg.TinyAlgoVectorEnv("copy", **{"num_envs": 2, **kwargs})


def test_bad_actions_and_reset_options():
    env = tg.TinyAlgoEnv("walk", complexity=4)
    with pytest.raises(ValueError, match=r"complexity'\] must be an integer of at least 2"):
        env.reset(options={"complexity": 1})
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['length'\]; allowed: complexity"):
        env.reset(options={"length": 1})
    env.reset(seed=0)
    V = env.task.vocab.size
    for bad in [(4, 0, 0), (0, 2, 0), (0, 1, V), (-1, 0, 0), (0, 0), (0.5, 0, 0), np.array([0.0, 0, 0]),
                np.zeros((1, 3), dtype=int), "abc", None]:
        with pytest.raises(ValueError, match=r"move in 0\.\.3, write 0 or 1, symbol in 0\.\."):
            env.step(bad)
    with pytest.raises(ValueError, match="explored must be True or False"):
        env.step((0, 0, 0), explored=2)
    venv = tg.TinyAlgoVectorEnv("copy", num_envs=2, complexity=3)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros((2, 3), dtype=np.int64))
    venv.reset(seed=0)
    for bad in [np.zeros((3, 3), dtype=np.int64), np.array([[0, 0, 0], [2, 0, 0]]), np.zeros((2, 3))]:
        with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(2, 3\)"):
            venv.step(bad)
    with pytest.raises(ValueError, match="seed must be an integer or 2 seeds"):
        venv.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match=r"reset_mask'\] must be a bool array of shape \(2,\)"):
        venv.reset(options={"reset_mask": [1, 0]})
    with pytest.raises(ValueError, match="options must be a dict"):
        venv.reset(options=[("complexity", 3)])


def test_vector_seeds_one_per_lane():
    venv = tg.TinyAlgoVectorEnv("copy", num_envs=3, complexity=5, step_info=True)
    obs, info = venv.reset(seed=[8, 3, 8])
    np.testing.assert_array_equal(obs[0], obs[2])
    single = tg.TinyAlgoEnv("copy", complexity=5, step_info=True)
    sobs, sinfo = single.reset(seed=3)
    np.testing.assert_array_equal(sobs, obs[1])
    np.testing.assert_array_equal(sinfo["ground_truth"], info["ground_truth"][1])


def test_environment_without_restart_keeps_an_ended_lane_as_it_ended():
    """``Environment.restart = False`` (what the Gymnasium layer sets): a lane
    whose episode ends keeps its last state, and its observation is the
    episode's last, until ``load`` starts an instance there."""
    from tinyalgo.environment import WRONG_WRITE, Environment
    env = Environment("copy", 2, complexity=5, seed=0)
    env.restart = False
    started = env.episodes_started
    wrong = (env.next_target + 1) % 10
    result = env.step(np.array([1 + 2, 1]), wrong)                  # lane 0 writes wrong; lane 1 moves
    assert result.reason.tolist() == [WRONG_WRITE, 0] and env.episodes_started == started
    assert result.obs[0].tolist()[1:] == [wrong[0], 0, 1, 1] and env.time.tolist() == [1, 1]
    np.testing.assert_array_equal(env.observe(), result.obs)


@pytest.mark.parametrize("mode", MODES)
def test_max_episode_steps_equals_single_envs_in_time_limit(mode):
    """A cut episode's info is the running episode's (as ``TimeLimit`` over a
    single env gives), and the curriculum counts it as abandoned."""
    make_single = lambda: gym.wrappers.TimeLimit(tg.TinyAlgoEnv("copy", curriculum=True, advance_after=2,  # noqa: E731
                                                                step_info=True), 5)
    make_vector = lambda n, m: tg.TinyAlgoVectorEnv("copy", num_envs=n, autoreset_mode=m, curriculum=True,  # noqa: E731
                                                    advance_after=2, step_info=True, max_episode_steps=5)
    reasons, venv = compare_vector_with_singles(make_single, make_vector, 200, mode)
    assert "running" in reasons and "all written" in reasons            # cut episodes, and solved ones


@pytest.mark.parametrize("step_info", [True, False])
def test_max_episode_steps_info_equals_sync_vector_env(step_info):
    kwargs = dict(num_envs=3, complexity=50, max_episode_steps=5, step_info=step_info)
    native = gym.make_vec("tinyalgo/Copy-v0", **kwargs)
    sync = gym.make_vec("tinyalgo/Copy-v0", vectorization_mode="sync", **kwargs)
    assert isinstance(native, tg.TinyAlgoVectorEnv) and isinstance(sync, gym.vector.SyncVectorEnv)
    for a, b in zip(native.reset(seed=1), sync.reset(seed=1)):
        np.testing.assert_equal(a, b)
    for step in range(12):
        got, want = native.step(np.tile([1, 0, 0], (3, 1))), sync.step(np.tile([1, 0, 0], (3, 1)))
        for a, b in zip(got[:4], want[:4]):
            np.testing.assert_array_equal(a, b)
        assert got[3].all() == (step % 6 == 4)                       # cut at the 5th step; the 6th resets
        assert set(got[4]) == set(want[4]), step
        for key in want[4]:
            np.testing.assert_array_equal(got[4][key], want[4][key], err_msg=key)
        if step == 4 and step_info:
            assert (got[4]["v_hat"] == 50).all() and (got[4]["ground_truth"] >= 0).all()     # live values


def test_an_abandoned_episode_breaks_the_run_of_solved_episodes():
    env = tg.TinyAlgoEnv("reverse", curriculum=True, advance_after=3, step_info=True)
    obs, info = env.reset(seed=0)
    levels = []
    for episode in range(6):
        while info["v_hat"] > (2 if episode == 2 else 0):             # episode 3 abandoned, 2 targets short
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
        obs, info = env.reset()
        levels.append(info["level"])
    assert levels == [6, 6, 6, 6, 6, 10]
    venv = tg.TinyAlgoVectorEnv("reverse", num_envs=2, curriculum=True, advance_after=2)
    venv.reset(seed=0)
    venv.step(np.tile([1, 0, 0], (2, 1)))
    venv.reset()
    venv.reset()                                                        # two abandoned episodes: no advance
    assert venv.levels.tolist() == [6, 6]


def test_discrete_actions_and_onehot_observations():
    """action_space="discrete": the distinct valid triples, one index each;
    observation_space="onehot": the fields one-hot, side by side."""
    from tinyalgo.gym.spaces import JointActions, OneHot

    for space in (tg.TinyAlgoEnv("copy").observation_space, tg.TinyAlgoVectorEnv("walk").single_action_space):
        assert type(sum(space.nvec)) is int                 # a layer sized by it (sb3-contrib's LSTM) needs an int
        assert type(space.sample()) is np.ndarray and space.sample() in space
    table = JointActions(2, 17)
    assert table.n == 36 and len({tuple(r) for r in table.table}) == 36          # Copy: 68 triples, 36 actions
    triples = np.array([(m, w, s) for m in range(2) for w in range(2) for s in range(17)])
    np.testing.assert_array_equal(table.decode(table.encode(triples))[triples[:, 1] == 1],
                                  triples[triples[:, 1] == 1])
    np.testing.assert_array_equal(table.decode(table.encode(triples))[:, :2], triples[:, :2])
    np.testing.assert_array_equal(table.encode(table.table), np.arange(36))
    assert OneHot([3, 2]).encode(np.array([[2, 0], [0, 1]])).tolist() == [[0, 0, 1, 1, 0], [1, 0, 0, 0, 1]]
    for task in ("walk", "addition3"):
        plain = tg.TinyAlgoVectorEnv(task, num_envs=3, complexity=6, step_info=True, autoreset_mode="SameStep")
        other = tg.TinyAlgoVectorEnv(task, num_envs=3, complexity=6, step_info=True, action_space="discrete",
                                     observation_space="onehot", autoreset_mode="SameStep")
        single = gym.make(tg.ENV_IDS[task], complexity=6, action_space="discrete", observation_space="onehot")
        check_env(single.unwrapped)
        onehot = OneHot(plain.single_observation_space.nvec)
        assert other.single_action_space.n == plain._nm * (1 + plain._V)
        obs, info = plain.reset(seed=4)
        obs2, _ = other.reset(seed=4)
        obs3, _ = single.reset(seed=4)
        np.testing.assert_array_equal(onehot.encode(obs), obs2)
        np.testing.assert_array_equal(obs2[0], obs3)
        rng = np.random.default_rng(0)
        for _ in range(60):
            k = np.where(rng.random(3) < 0.8, other.joint_actions.encode(np.maximum(info["ground_truth"], 0)),
                         rng.integers(other.single_action_space.n, size=3))
            a = plain.step(other.joint_actions.decode(k))
            b = other.step(k)
            c = single.step(k[0])
            np.testing.assert_array_equal(onehot.encode(a[0]), b[0])
            for x, y in zip(a[1:4], b[1:4]):
                np.testing.assert_array_equal(x, y)
            assert (c[1], c[2], c[3]) == (b[1][0], b[2][0], b[3][0])
            np.testing.assert_array_equal(single.reset()[0] if c[2] or c[3] else c[0], b[0][0])
            info = a[4]
    with pytest.raises(ValueError, match="action_space must be one of 'multidiscrete', 'discrete'; got 'box'"):
        tg.TinyAlgoEnv("copy", action_space="box")
    with pytest.raises(ValueError, match="observation_space must be one of 'multidiscrete', 'onehot'"):
        tg.TinyAlgoVectorEnv("copy", observation_space="flat")
    with pytest.raises(ValueError, match=r"an action must be an integer in 0..35"):
        env = tg.TinyAlgoEnv("copy", action_space="discrete")
        env.reset(seed=0)
        env.step(36)
    with pytest.raises(ValueError, match=r"one action index in 0..35 per lane"):
        venv = tg.TinyAlgoVectorEnv("copy", num_envs=2, action_space="discrete")
        venv.reset(seed=0)
        venv.step(np.array([0, -1]))
