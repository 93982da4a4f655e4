"""The batched environment: canned boards with hand-written observations,
fuzzing, seeding, the reward variants and the errors of bad input."""
import hashlib

import numpy as np
import pytest

from tinyalgo.environment import ALL_WRITTEN, RUNNING, TIMEOUT, WRONG_WRITE, Environment
from tinyalgo.tasks import TASKS, make_task

L_, R_, D_, U_ = 0, 1, 2, 3


def test_canned_copy_tape_observations():
    task = make_task("copy")
    env = Environment("copy", batch_size=1, seed=0)
    v = env.vocab
    N, NONE_MOVE, NONE_WRITE = v.NONE, 2, 2
    obs = env.load(task.build([[3, 0, 9]], [3], [7]))
    # fields: symbol, previous written, explored, previous move, previous write
    assert obs.tolist() == [[3, N, 0, NONE_MOVE, NONE_WRITE]]
    path = [  # (action, symbol written, expected observation after, reward, reason)
        (task.action(R_, 0), None, [0, N, 0, R_, 0], 0, RUNNING),        # move on without writing
        (task.action(L_, 0), None, [3, N, 0, L_, 0], 0, RUNNING),        # back on the 3
        (task.action(R_, 1), 3, [0, 3, 0, R_, 1], 1, RUNNING),           # write 3, see the 0
        (task.action(R_, 1), 0, [9, 0, 0, R_, 1], 1, RUNNING),           # digit 0 scores
                                                                         # (docs/original-release.md#digit-zero)
        (task.action(R_, 0), None, [v.Q, N, 1, R_, 0], 0, RUNNING),      # explored flag raised
        (task.action(L_, 1), 9, None, 1, ALL_WRITTEN),
    ]
    for action, symbol, expected, reward, reason in path:
        explored = np.array([expected is not None and expected[2] == 1])
        result = env.step(np.array([action]), np.array([v.NONE if symbol is None else symbol]), explored=explored)
        assert result.reward[0] == reward and result.reason[0] == reason
        if expected is not None:
            assert result.obs[0].tolist() == expected
    # the lane started a new episode: fresh observation fields
    assert result.obs[0, 1:].tolist() == [N, 0, NONE_MOVE, NONE_WRITE]


def test_canned_addition_grid_observations():
    task = make_task("addition")
    env = Environment("addition", batch_size=1, seed=0)
    v = env.vocab
    N, E, Q = v.NONE, v.E, v.Q
    # 47 + 85 = 132: top row x=0,1 reads 4 7; bottom row 8 5
    obs = env.load(task.build([[[7, 4], [5, 8]]], [2]))
    assert obs.tolist() == [[7, N, 0, 4, 2]]
    path = [
        (task.action(D_, 0), None, [5, N, 0, D_, 0], 0, RUNNING),   # (1,2)
        (task.action(L_, 1), 2, [8, 2, 0, L_, 1], 1, RUNNING),      # write 2, now (0,2)
        (task.action(U_, 0), None, [4, N, 0, U_, 0], 0, RUNNING),   # (0,1)
        (task.action(L_, 1), 3, [E, 3, 0, L_, 1], 1, RUNNING),      # (-1,1) is empty
        (task.action(R_, 0), None, [4, N, 0, R_, 0], 0, RUNNING),   # (0,1)
        (task.action(U_, 0), None, [E, N, 0, U_, 0], 0, RUNNING),   # (0,0)
        (task.action(R_, 0), None, [E, N, 0, R_, 0], 0, RUNNING),   # (1,0)
        (task.action(R_, 0), None, [E, N, 0, R_, 0], 0, RUNNING),   # (2,0)
        (task.action(R_, 0), None, [Q, N, 0, R_, 0], 0, RUNNING),   # (3,0): the q wall
        (task.action(R_, 1), 1, None, 1, ALL_WRITTEN),             # 5 silent steps: no timeout yet
    ]
    for action, symbol, expected, reward, reason in path:
        result = env.step(np.array([action]), np.array([N if symbol is None else symbol]))
        assert (result.reward[0], result.reason[0]) == (reward, reason), (action, symbol)
        if expected is not None:
            assert result.obs[0].tolist() == expected, (action, symbol)
    assert env.episodes_started == 3   # reset, the canned board, the next instance


def test_wrong_write_ends_with_zero_reward_and_v_hat():
    env = Environment("copy", batch_size=2, complexity=5, seed=0)
    assert env.v_hat.tolist() == [5, 5]
    target = env.next_target
    wrong = (target + 1) % 10
    result = env.step(np.array([3, 3]), np.array([target[0], wrong[1]]))
    assert result.reward.tolist() == [1, 0]
    assert result.reason.tolist() == [RUNNING, WRONG_WRITE]
    assert result.n_correct.tolist() == [1, 0]
    assert env.v_hat.tolist() == [4, 5] and env.target_index.tolist() == [1, 0]


@pytest.mark.parametrize("name", list(TASKS))
def test_timeout_after_complexity_plus_two_silent_steps(name):
    env = Environment(name, batch_size=3, complexity=9, seed=1)
    limit = env.complexity.copy() + 2
    for t in range(1, int(limit.max()) + 1):
        result = env.step(np.zeros(3, dtype=np.int64))         # move left, never write
        np.testing.assert_array_equal(result.done, t == limit)
        assert (result.reason[result.done] == TIMEOUT).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TASKS))
def test_fuzz_random_actions(name):
    B = 8
    env = Environment(name, batch_size=B, complexity=12, seed=5)
    rng = np.random.default_rng(7)
    far = 0
    ends = 0
    for _step in range(3000):
        # half the lanes mostly move left without writing: heads wander far off the board
        actions = rng.integers(0, env.n_actions, size=B)
        drift = rng.random(B) < 0.9
        actions[: B // 2] = np.where(drift[: B // 2], 0, actions[: B // 2])
        symbols = rng.integers(0, env.vocab.size, size=B)
        writes = actions >= env.n_moves
        result = env.step(actions, symbols)
        assert result.obs.shape == (B, 5) and (result.obs >= 0).all()
        assert (result.obs < np.array(env.obs_sizes)).all()
        assert (result.reward[~writes] == 0).all(), "reward without a write"
        assert np.isin(result.reward, (0.0, 1.0)).all()
        assert np.isin(result.reason[result.done], (ALL_WRITTEN, WRONG_WRITE, TIMEOUT)).all()
        assert (result.reason[~result.done] == RUNNING).all()
        assert (env.time <= (env.n_outputs + 1) * (env.complexity + 2)).all()
        far = max(far, int(np.abs(env.input.x).max()))
        ends += result.done.sum()
    assert ends > 100 and far >= 10


def run(seed, name="walk", steps=300, reward="binary"):
    env = Environment(name, batch_size=6, complexity=8, seed=seed, reward=reward)
    rng = np.random.default_rng(0)
    trace = [env.observe()]
    for _ in range(steps):
        actions = np.where(rng.random(6) < 0.5, env.ground_truth(), rng.integers(0, env.n_actions, 6))
        actions = np.maximum(actions, 0)
        probs = rng.dirichlet(np.ones(env.vocab.size), size=6)
        r = env.step(actions, np.where(rng.random(6) < 0.8, env.next_target, 0), probs=probs)
        trace += [r.obs, r.reward, r.done, r.reason]
    return trace


@pytest.mark.parametrize("reward", ["binary", "discretized", "continuous"])
def test_same_seed_same_run(reward):
    a, b, c = run(1, reward=reward), run(1, reward=reward), run(2, reward=reward)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_reset_with_seed_restarts_the_stream():
    env = Environment("addition", batch_size=4, complexity=10, seed=3)
    first = env.observe(), env.output.targets.copy()
    env.step(np.full(4, 5), np.zeros(4, dtype=np.int64))
    env.reset(seed=3)
    assert np.array_equal(env.observe(), first[0]) and np.array_equal(env.output.targets, first[1])


def test_reward_variants():
    for kind in ("discretized", "continuous"):
        env = Environment("copy", batch_size=4, complexity=5, seed=0, reward=kind)
        t = env.next_target
        probs = np.full((4, env.vocab.size), 0.01)
        for lane in range(4):
            ranking = [(t[lane] + lane + k) % 10 for k in range(10)]   # best first
            for pos, sym in enumerate(ranking):
                probs[lane, sym] = 0.3 / (pos + 1)
            probs[lane, t[lane]] = 0.3 / (((10 - lane) % 10) + 1)
        symbols = probs[:, :10].argmax(1)
        result = env.step(np.full(4, 3), symbols, probs=probs)
        p_target = probs[np.arange(4), t]
        if kind == "continuous":
            np.testing.assert_allclose(result.reward, p_target)
        else:
            ranks = (probs[:, :10] > p_target[:, None]).sum(1)
            np.testing.assert_allclose(result.reward, [[1, 1 / 2, 1 / 3, 0][min(r, 3)] for r in ranks])
            assert result.reward[0] == 1


def test_walk_reads_q_after_its_clock():
    env = Environment("walk", batch_size=1, complexity=6, seed=0)
    for _ in range(int(env.complexity[0])):
        env.step(np.maximum(env.ground_truth(), 0) % env.n_moves)   # follow the path silently
    assert env.observe()[0, 0] == env.vocab.Q


@pytest.mark.parametrize("kwargs,message", [
    (dict(task="division"), "unknown task 'division'; allowed: copy"),
    (dict(task="copy", base=11), "base must be an integer from 2 to 10"),
    (dict(task="copy", base=1), "base must be an integer from 2 to 10"),
    (dict(task="copy", base="ten"), "base must be an integer from 2 to 10"),
    (dict(task="multiplication", base=2), "needs a base of at least 3"),
    (dict(task="addition3", base=2), "needs a base of at least 3"),
    (dict(task="reverse", complexity=1), "complexity must be an integer of at least 2"),
    (dict(task="copy", complexity=-3), "complexity must be an integer of at least 1"),
    (dict(task="copy", batch_size=0), "batch_size must be an integer of at least 1"),
    (dict(task="copy", reward="log"), "unknown reward 'log'; allowed: binary"),
])
def test_bad_construction(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        Environment(**kwargs)


@pytest.mark.parametrize("actions,symbols,message", [
    (np.zeros(3, dtype=np.int64), None, r"actions must be an array of shape \(4,\)"),
    (np.zeros((4, 1), dtype=np.int64), None, r"actions must be an array of shape \(4,\)"),
    (np.zeros(4), None, r"actions must be an array of shape \(4,\) \(integers\); got shape \(4,\) of float64"),
    (np.array([0, 1, 2, 8]), None, r"actions must be in 0..7; got values from 0 to 8"),
    (np.array([0, -1, 2, 3]), None, r"actions must be in 0..7"),
    (np.array([4, 0, 0, 0]), None, r"symbols \(B,\) are required when an action writes"),
    (np.array([4, 0, 0, 0]), np.array([0, 0, 0, 17]), r"symbols must be in 0..16"),
])
def test_bad_step(actions, symbols, message):
    env = Environment("addition", batch_size=4, seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(actions, symbols)


def test_reward_variant_needs_probabilities():
    env = Environment("copy", batch_size=2, reward="continuous", seed=0)
    with pytest.raises(ValueError, match=r"probs must be an array of shape \(2, 17\)"):
        env.step(np.array([3, 3]), np.array([0, 0]))


def test_sample_rejects_short_complexity():
    with pytest.raises(ValueError, match="at least 3 for task 'addition3'"):
        make_task("addition3").sample(np.random.default_rng(0), np.array([2]))


def test_long_instances_drawn_in_parts_are_the_same_kind():
    from tinyalgo.tasks.instances import concatenate
    task = make_task("addition")
    rng = np.random.default_rng(0)
    a, b = task.sample(rng, np.array([10, 12])), task.sample(rng, np.array([30]))
    both = concatenate([a, b], task.vocab.NONE)
    assert len(both) == 3 and both.targets.shape[1] == b.targets.shape[1]
    assert (both.targets[0, a.n_outputs[0]:] == task.vocab.NONE).all()
    env = Environment("addition", batch_size=3, complexity=2001, seed=0)      # drawn 4 at a time
    from test_ground_truth import run_ground_truth
    reasons, totals, n_out, _, _ = run_ground_truth(env)
    assert (reasons == ALL_WRITTEN).all() and (totals == n_out).all()


@pytest.mark.parametrize("name", list(TASKS))
def test_the_observed_symbol_is_the_board_under_the_head(name):
    # the step reads the board through the head's carried column and hash;
    # Board.window reads it from (x, y): both must agree, lanes restarting or not
    env = Environment(name, batch_size=5, complexity=6, seed=2)
    rng = np.random.default_rng(3)
    for _ in range(300):
        obs = env.step(rng.integers(0, env.n_actions, 5), rng.integers(0, env.vocab.size, 5)).obs
        for lane in range(5):
            if env.time[lane] < env.clock[lane]:        # walk reads q after its clock
                x, y = int(env.input.x[lane]), int(env.input.y[lane])
                assert obs[lane, 0] == env.input.board.window(lane, [x], [y])[0, 0]


def rollout_digest(name, reward, steps=200, B=6):
    """sha256 (first 16 hex digits) of a fixed-seed rollout: random and
    ground-truth actions, mostly correct writes, random explored flags, over
    complexities 1..25 so lanes restart often and the storage grows."""
    from tinyalgo.curriculum import UniformComplexity
    env = Environment(name, batch_size=B, seed=11, reward=reward,
                      complexity=UniformComplexity(1, 25, minimum=TASKS[name].min_complexity))
    rng = np.random.default_rng(12)
    h = hashlib.sha256(env.observe().astype(np.int64).tobytes())
    for _ in range(steps):
        actions = np.where(rng.random(B) < 0.5, np.maximum(env.ground_truth(), 0),
                           rng.integers(0, env.n_actions, B))
        symbols = np.where(rng.random(B) < 0.8, env.next_target, rng.integers(0, env.vocab.size, B))
        probs = rng.dirichlet(np.ones(env.vocab.size), size=B)
        r = env.step(actions, symbols, probs=probs, explored=rng.random(B) < 0.1)
        for a in (r.obs, r.reward, r.done, r.reason, r.n_correct, env.ground_truth(), env.v_hat,
                  env.input.x, env.input.y):
            h.update(np.ascontiguousarray(a, dtype=np.float64 if a.dtype.kind == "f" else np.int64).tobytes())
    return h.hexdigest()[:16]


# digests of the rollouts above: a change to the environment must leave every
# observation, reward, end and ground-truth action as it was (recorded again
# once, when ground_truth() stopped repeating a lane's last action past its end)
ROLLOUT_DIGESTS = {
    ("copy", "binary"): "3fe06adf75ac4011",
    ("copy", "discretized"): "2628b95d20567439",
    ("reverse", "binary"): "553742e3b68c2098",
    ("reverse", "discretized"): "c8dbb28296092da9",
    ("walk", "binary"): "7859a5c183772f35",
    ("walk", "discretized"): "e2af8137a2d0cdd3",
    ("addition", "binary"): "960d91c2584af5e7",
    ("addition", "discretized"): "542d46c2f1c42042",
    ("addition3", "binary"): "9869823c0c28ba38",
    ("addition3", "discretized"): "249ccdc750859187",
    ("multiplication", "binary"): "fb37e9faa1b2e64c",
    ("multiplication", "discretized"): "9b1eea6f0486f7cf",
}


@pytest.mark.parametrize("name", list(TASKS))
@pytest.mark.parametrize("reward", ["binary", "discretized"])
def test_rollout_is_unchanged(name, reward):
    assert rollout_digest(name, reward) == ROLLOUT_DIGESTS[name, reward]


def test_ground_truth_ends_where_the_reference_actions_end():
    """A lane whose ground-truth actions fill the storage's capacity exactly
    gets -1, not its last action, once it has taken more steps than that."""
    env = Environment("copy", batch_size=1, complexity=5, seed=0)
    n = int((env.gt_actions[0] >= 0).sum())
    assert n == env.lanes.wa == 5
    for _ in range(n):
        assert env.ground_truth()[0] >= 0
        env.step(np.array([1]))                    # right, without writing: the episode goes on
    assert env.time[0] == n and env.ground_truth()[0] == -1


def test_the_pool_of_drawn_instances_stays_small_for_many_lanes():
    """Many lanes at complexity 1000 draw at most ~32 MiB of instances at once
    (64 batches of 10,000 lanes would be gigabytes); small batches draw as before."""
    from tinyalgo.host.speed import POOL_BYTES, pool_size
    assert pool_size(20, 20, 1000, 3) == 1280 and pool_size(3, 1, 100, 3) == 1024    # unchanged
    assert pool_size(20, 20, 5000, 3) == 20
    assert pool_size(10, 10_000, 1000, 3) == 10_000              # one batch: 64 would be 5 GB
    assert pool_size(10, 2_000, 1000, 3) == POOL_BYTES // (8 * 1008)
    env = Environment("addition", batch_size=4096, complexity=1000, seed=0)
    assert len(env._pool) == POOL_BYTES // ((env.task.rows + 5) * 1008) < 64 * 4096
