"""Gym's classic algorithmic tasks (tinyalgo.gym.classic): gym 0.19's rules,
rewards, time limits and curriculum on canned inputs, the vector env equal to
single ones, and the old documentation's errors."""
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import tinyalgo.gym as tg  # noqa: E402  (after the skip: needs gymnasium)
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from test_gym import compare_vector_with_singles  # noqa: E402

from tinyalgo.gym.classic import GymAlgorithmicEnv, GymAlgorithmicVectorEnv  # noqa: E402

LEFT, RIGHT, UP, DOWN = 0, 1, 2, 3          # gym's moves


def make(task="copy", **kwargs):
    return GymAlgorithmicEnv(task, step_info=True, **kwargs)


def canned(env, *args):
    """Start the instance the task builds from ``args`` (gym's tests' ``imprint``)."""
    return env.load(env.task.build(*args))


def tape(env, digits):
    return canned(env, np.array([digits]), np.array([len(digits)]))


def grid(env, columns):
    """gym's grid input: a list of columns, each the digits of the rows."""
    g = np.array(columns).T[None]
    return canned(env, g, np.array([g.shape[2]]))


@pytest.mark.parametrize("env_id", list(tg.CLASSIC_IDS.values()))
def test_check_env_passes(env_id):
    for render_mode in ("ansi", "rgb_array"):
        env = gym.make(env_id, render_mode=render_mode).unwrapped
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env)
    spec = gym.spec(env_id)
    assert spec.max_episode_steps == 200 and spec.reward_threshold in (9.0, 25.0, 75.0)
    assert isinstance(env.observation_space, gym.spaces.Discrete) and env.observation_space.n == env.task.base + 1


def test_successful_interaction():
    env = make(base=2)
    obs, info = tape(env, [0, 1])
    assert obs == 0
    obs, reward, terminated, truncated, info = env.step([RIGHT, 1, 0])
    assert obs == 1 and reward > 0 and not terminated
    obs, reward, terminated, truncated, info = env.step([LEFT, 1, 1])
    assert terminated and not truncated and reward > 0 and info["reason"] == "all written"


def test_bad_output_fails_fast():
    env = make(base=2)
    tape(env, [0, 1])
    obs, reward, terminated, truncated, info = env.step([RIGHT, 1, 1])
    assert terminated and reward == -0.5 and info["reason"] == "wrong write"


def test_walk_off_the_end():
    env = make(base=2)
    obs, _ = tape(env, [0, 1])
    for move, seen in [(LEFT, 2), (LEFT, 2), (RIGHT, 2), (RIGHT, 0), (RIGHT, 1), (RIGHT, 2), (RIGHT, 2)]:
        obs, reward, terminated, truncated, info = env.step([move, 0, 0])
        assert obs == seen == min(obs, env.task.base) and reward == 0 and not terminated


def test_grid_navigation():
    env = make("reversed_addition", base=6)
    obs, _ = grid(env, [[0, 3], [1, 4], [2, 5]])             # rows 0 1 2 / 3 4 5
    assert obs == 0
    for move, seen in [(DOWN, 3), (UP, 0), (RIGHT, 1), (DOWN, 4), (DOWN, 6), (RIGHT, 6), (UP, 5), (UP, 2),
                       (LEFT, 1)]:
        obs, reward, terminated, truncated, info = env.step([move, 0, 0])
        assert (obs, reward, terminated) == (seen, 0, False)


def test_grid_success():
    env = make("reversed_addition", base=3)
    obs, info = grid(env, [[1, 2], [1, 0], [2, 2]])
    assert obs == 1 and info["v_hat"] == 4
    for i, digit in enumerate([0, 2, 1, 1]):
        assert info["next_target"] == digit
        obs, reward, terminated, truncated, info = env.step([LEFT, 1, digit])
        assert reward > 0 and terminated == (i == 3)


def test_time_limit_ends_with_minus_one():
    env = make(base=2)
    tape(env, [0, 1])                                        # time limit 2 + 2 + 4 = 8 steps
    assert env.level == 2
    for step in range(9):
        obs, reward, terminated, truncated, info = env.step([LEFT, 0, 0])
        assert terminated == (step == 8) and not truncated
    assert reward == -1.0 and info["reason"] == "timeout" and info["time_limit"] == 8
    with pytest.raises(RuntimeError, match="reset"):
        env.step([LEFT, 0, 0])


def test_a_write_after_the_time_limit_is_still_minus_one():
    env = make("reverse", base=2)
    tape(env, [1, 0])                                        # time limit 2 + 2 + 4 = 8
    for _ in range(8):
        env.step([RIGHT, 0, 0])
    obs, reward, terminated, truncated, info = env.step([LEFT, 1, 0])
    assert terminated and reward == -1.0 and info["reason"] == "timeout" and info["n_correct"] == 1


def test_curriculum_levels_up_after_last_solved_episodes_in_a_row():
    env = make(base=2)
    env.reset(seed=0)
    assert env.level == 2
    for i in range(25):
        tape(env, [0, 1])
        env.step([RIGHT, 1, 0])
        if i == 4:                                          # a failure starts the count again
            obs, reward, terminated, truncated, info = env.step([RIGHT, 1, 0])
            assert reward == -0.5
        else:
            obs, reward, terminated, truncated, info = env.step([RIGHT, 1, 1])
            assert terminated and reward == 1
        assert env.level == 2 + (i >= 14) + (i >= 24)       # 10 in a row: episodes 5..14, 15..24
    obs, info = env.reset()
    assert info["level"] == 4 and 4 + 4 + 4 <= info["time_limit"] <= 6 + 6 + 4   # lengths U{4..6}


def test_the_curriculum_stops_at_30():
    env = make("copy", advance_after=1)
    env.reset(seed=0)
    for _ in range(40):
        obs, info = env.reset()
        while True:
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
            if terminated:
                break
        assert info["reason"] == "all written"
    assert env.level == 30


@pytest.mark.parametrize("task, digits, target", [
    ("reverse", [0], [0]), ("reverse", [0, 1], [1, 0]), ("reverse", [1, 0, 1], [1, 0, 1]),
    ("reverse", [0, 0, 1, 1], [1, 1, 0, 0]),
    ("copy", [0, 1, 2], [0, 1, 2]),
    ("repeat_copy", [0, 1, 2], [0, 1, 2, 2, 1, 0, 0, 1, 2]),
    ("duplicated_input", [0, 0, 0, 0, 1, 1], [0, 0, 1]),
])
def test_tape_targets(task, digits, target):
    env = make(task, base=3)
    obs, info = tape(env, digits)
    assert info["v_hat"] == len(target)
    assert written_by_ground_truth(env, info) == target


def written_by_ground_truth(env, info) -> list:
    """Follow the ground truth to the end of the episode; the symbols it writes."""
    written = []
    while True:
        action = info["ground_truth"]
        if action[1] == 1:
            written.append(int(action[2]))
        obs, reward, terminated, truncated, info = env.step(action)
        assert reward == float(action[1])                    # +1 a correct write, 0 a move
        if terminated:
            assert info["reason"] == "all written" and info["n_correct"] == len(written)
            return written


@pytest.mark.parametrize("rows, columns, target", [
    (2, [[1, 1], [1, 1]], [2, 2]), (2, [[2, 2], [0, 1]], [1, 2]), (2, [[2, 1], [1, 1], [1, 1], [1, 0]], [0, 0, 0, 2]),
    (3, [[1, 1, 0], [0, 1, 1]], [2, 2]), (3, [[1, 1, 2], [0, 1, 1]], [1, 0, 1]),
])
def test_reversed_addition_targets(rows, columns, target):
    env = make("reversed_addition", base=3, rows=rows, solvable_time_limit=True)
    obs, info = grid(env, columns)
    assert info["v_hat"] == len(target)                       # no leading zero: a final carry only if not 0
    assert written_by_ground_truth(env, info) == target


def test_duplicated_input_lengths():
    env = make("duplicated_input", base=5)
    for asked, width in [(4, 4), (3, 2), (1, 2), (2, 2)]:
        obs, info = env.reset(seed=asked, options={"length": asked})
        assert info["v_hat"] == width // 2 and info["time_limit"] == width + width // 2 + 4
        cells = env._sync().input.board.window(0, np.arange(1, width + 1), [1])[0]
        assert (cells[0::2] == cells[1::2]).all()
    triple = make("duplicated_input", base=5, duplication=3)
    obs, info = triple.reset(seed=0, options={"length": 6})
    cells = triple._sync().input.board.window(0, np.arange(1, 7), [1])[0]
    assert info["v_hat"] == 2 and (cells[:3] == cells[0]).all() and (cells[3:] == cells[3]).all()


def test_reverse_has_no_end_marker():
    """gym's page of Reverse-v0 spoke of a special character r at the end of
    the input: the head meets the blank, the same symbol as off the start."""
    env = make("reverse", base=2)
    obs, _ = tape(env, [1, 1, 0])
    seen = [int(obs)] + [int(env.step([RIGHT, 0, 0])[0]) for _ in range(4)]
    assert seen == [1, 1, 0, 2, 2]
    tape(env, [1, 1, 0])
    assert int(env.step([LEFT, 0, 0])[0]) == 2


def test_reversed_addition_starts_on_the_least_significant_digit_top_left():
    """gym's page said the head starts on the top number's last digit (upper
    right): it starts upper left, on the least significant digit."""
    env = make("reversed_addition", base=10)
    obs, info = grid(env, [[3, 4], [1, 2]])                  # 13 + 24, least significant digits first
    assert obs == 3 and info["next_target"] == 7
    assert int(env.step([LEFT, 0, 0])[0]) == 10 and int(env.step([RIGHT, 0, 0])[0]) == 3   # blank on the left


def test_reversed_addition3_time_limit_stalls_beyond_four_digits():
    """gym's 2 x length + 4 steps cannot read 3 digits a column beyond 4 columns;
    ``solvable_time_limit`` gives rows x length + 4."""
    for solvable, reasons in [(False, {"timeout"}), (True, {"all written"})]:
        env = make("reversed_addition", rows=3, solvable_time_limit=solvable)
        seen = set()
        for seed in range(6):
            obs, info = env.reset(seed=seed, options={"length": 5})
            while True:
                obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
                if terminated:
                    break
            seen.add(info["reason"])
        assert seen == reasons
        assert reward == (-1.0 if not solvable else 1.0)
    env = make("reversed_addition", rows=3)
    obs, info = env.reset(seed=0, options={"length": 3})
    while True:
        obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
        if terminated:
            break
    assert info["reason"] == "all written"


@pytest.mark.parametrize("name", list(tg.CLASSIC_IDS))
def test_ground_truth_solves_the_first_levels(name):
    options = {"solvable_time_limit": True} if name == "reversed_addition3" else {}
    env = gym.make(tg.CLASSIC_IDS[name], step_info=True, **options)
    for episode in range(12):
        obs, info = env.reset(seed=episode)
        outputs = info["v_hat"]
        while True:
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
            assert obs in env.observation_space and reward in (0.0, 1.0)
            if terminated or truncated:
                break
        assert info["reason"] == "all written" and info["n_correct"] == outputs
    # 12 solved episodes: a level up after 10 in a row (after 50 for reverse and repeat_copy)
    assert env.unwrapped.level == {"reverse": 1, "repeat_copy": 2}.get(name, 3)


def _classic(task, **options):
    return (lambda: GymAlgorithmicEnv(task, **options),
            lambda n, mode: GymAlgorithmicVectorEnv(task, num_envs=n, autoreset_mode=mode, **options))


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
@pytest.mark.parametrize("task, options", [("repeat_copy", dict(step_info=True)),
                                           ("reversed_addition", dict(rows=3)),
                                           ("duplicated_input", dict(advance_after=2, step_info=True))])
def test_vector_env_matches_single_envs(task, options, mode):
    reasons, venv = compare_vector_with_singles(*_classic(task, **options), 150, mode)
    assert {"all written", "wrong write"} <= set(reasons)


def test_classic_vector_env_from_make_vec():
    envs = gym.make_vec("tinyalgo/GymReversedAddition3-v0", num_envs=5)
    assert isinstance(envs, GymAlgorithmicVectorEnv) and envs.max_episode_steps == 200
    obs, info = envs.reset(seed=0)
    assert obs.shape == (5,) and obs in envs.observation_space and envs.task.rows == 3
    envs.action_space.seed(0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
    assert set(np.unique(reward)) <= {0.0, 1.0, -0.5, -1.0}


@pytest.mark.parametrize("kwargs, match", [
    (dict(task="sorting"), "unknown classic task 'sorting'; allowed: copy, repeat_copy"),
    (dict(task="copy", base=11), "base must be an integer from 2 to 10"),
    (dict(task="copy", rows=2), "rows is an option of reversed_addition only"),
    (dict(task="copy", duplication=3), "duplication is an option of duplicated_input only"),
    (dict(task="duplicated_input", duplication=0), "duplication must be an integer of at least 1"),
    (dict(task="reversed_addition", rows=0), "rows must be an integer of at least 1"),
    (dict(task="copy", length=0), "length must be an integer of at least 1"),
    (dict(task="copy", chars="yes"), "chars must be True or False"),
    (dict(task="reversed_addition", solvable_time_limit=1.5), "solvable_time_limit must be True or False"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GymAlgorithmicEnv(**kwargs)


def test_bad_actions():
    env = make("copy", base=5)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"symbol in 0\.\.4"):
        env.step((1, 1, 5))
    with pytest.raises(ValueError, match="no explored flag"):
        env.step((1, 0, 0), explored=True)
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['complexity'\]; allowed: length"):
        env.reset(options={"complexity": 3})


def test_pictures_use_letters_or_digits():
    env = GymAlgorithmicEnv("copy", render_mode="ansi")
    env.reset(seed=0)
    assert set(env.render().split("Targets             : ")[1]) <= set("ABCDE")
    adder = GymAlgorithmicEnv("reversed_addition", render_mode="rgb_array")
    adder.reset(seed=0)
    frame = adder.render()
    assert frame.dtype == np.uint8 and frame.shape == adder.frame_shape


def _levels_after(env, plan):
    """Run ``plan`` (per episode: "solve", or "abandon k": reset with k targets
    unwritten), following the ground truth; the level seen at each next reset."""
    obs, info = env.reset(seed=0)
    levels = []
    for what in plan:
        short = 0 if what == "solve" else int(what.split()[1])
        while info["v_hat"] > short:
            obs, reward, terminated, truncated, info = env.step(info["ground_truth"])
        assert (info["reason"] == "all written") == (what == "solve")
        obs, info = env.reset()
        levels.append(info["level"])
    return levels


def test_an_abandoned_episode_counts_as_its_shortfall():
    """gym 0.19 counts, at each reset, the last episode's total reward minus
    its targets' count, whether or not it ended: episode 10 abandoned with 2 or
    more targets unwritten breaks Copy's run (level up after episode 20, not
    11); one target short is within Copy's threshold (-1), not Reverse's (-0.1)."""
    levels = _levels_after(make("copy"), ["solve"] * 9 + ["abandon 2"] + ["solve"] * 10)
    assert levels.index(3) + 1 == 20
    levels = _levels_after(make("copy"), ["solve"] * 9 + ["abandon 1"])
    assert levels.index(3) + 1 == 10
    levels = _levels_after(make("reverse", advance_after=3), ["solve", "solve", "abandon 1"] + ["solve"] * 3)
    assert levels == [1, 1, 1, 1, 1, 2]
    venv = GymAlgorithmicVectorEnv("copy", num_envs=2, advance_after=2)
    venv.reset(seed=0)
    venv.reset()
    venv.reset()                                   # two episodes abandoned before any write: shortfall -2 or less
    assert venv.levels.tolist() == [2, 2]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_max_episode_steps_counts_a_cut_episode_as_abandoned(mode):
    """The vector env's max_episode_steps equals gym's TimeLimit over single envs, curriculum included."""
    make_single = lambda: gym.wrappers.TimeLimit(GymAlgorithmicEnv("copy", advance_after=2, step_info=True), 3)  # noqa: E731
    make_vector = lambda n, m: GymAlgorithmicVectorEnv("copy", num_envs=n, autoreset_mode=m, advance_after=2,  # noqa: E731
                                                       step_info=True, max_episode_steps=3)
    reasons, venv = compare_vector_with_singles(make_single, make_vector, 200, mode)
    assert "running" in reasons and "all written" in reasons
    assert venv.levels.max() > 2
