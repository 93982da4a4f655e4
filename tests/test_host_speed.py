"""The environment's speed devices (tinyalgo/host/speed.py) give what the
rules give: the heads' index reads what ``Board.read`` reads, the lanes'
ground truth is the instances' actions, the range checks refuse exactly the
values outside the range."""
import numpy as np
import pytest

from tinyalgo.environment import Environment
from tinyalgo.host.speed import as_lane_ints, board_hash, count_outside
from tinyalgo.tasks import TASKS


@pytest.mark.parametrize("name", list(TASKS))
def test_the_heads_index_reads_what_the_board_rule_reads(name):
    env = Environment(name, batch_size=7, base=7 if name != "multiplication" else 5, complexity=9, seed=3)
    rng = np.random.default_rng(0)
    board, head = env.input.board, env.input
    for step in range(150):
        moves = rng.integers(0, head.n_moves, size=7)
        head.move(moves)
        if step % 40 == 39:                        # new instances in some lanes: the index follows them
            env.load(env.task.sample(rng, np.full(3, 9)), lanes=[0, 3, 5])
        np.testing.assert_array_equal(head.read(), board.read(head.x, head.y if head.GRID else None))
        if board.fill == "random":                 # the carried table index is the one the rule computes
            np.testing.assert_array_equal(head.hash, board_hash(board.key, head.x, head.y))
    assert np.abs(head.x).max() > 3


@pytest.mark.parametrize("name", list(TASKS))
def test_the_lanes_ground_truth_is_the_instances_actions(name):
    env = Environment(name, batch_size=4, complexity=8, seed=1, extra_curriculum=False)
    inst = env.task.sample(np.random.default_rng(2), np.array([6, 7, 8, 9]))
    env.load(inst)
    for t in range(int(inst.n_steps.max()) + 2):
        env.time[:] = t
        expected = np.where(t < inst.n_steps, inst.actions[:, min(t, inst.actions.shape[1] - 1)], -1)
        np.testing.assert_array_equal(env.ground_truth(), expected)


def test_range_checks_on_unsigned_views():
    a = np.array([-1, 0, 3, 4, 2 ** 62, -(2 ** 62)], dtype=np.int64)
    assert count_outside(a, np.uint64(4)) == 4
    assert as_lane_ints("x", np.array([0, 3]), (2,), 4).dtype == np.int64
    assert as_lane_ints("x", [1, 2], (2,), 4).tolist() == [1, 2]
    for bad, message in (([0, 4], "x must be in 0..3; got values from 0 to 4"),
                         ([-1, 0], "x must be in 0..3; got values from -1 to 0"),
                         ([0.5, 1.0], "x must be an array of shape (2,) (integers)"),
                         ([0, 1, 2], "x must be an array of shape (2,) (integers)")):
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            as_lane_ints("x", bad, (2,), 4)
