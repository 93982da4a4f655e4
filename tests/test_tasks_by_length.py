"""Each task says what its instances of one length are: how many, numbered
and random ones, where the input ends, where each target comes from, its
corner instances, its end rule.  Checked against the boards themselves
(``Board.read``) and against Python integers."""
import numpy as np
import pytest

from tinyalgo.environment import Environment
from tinyalgo.tasks import TASKS, make_task
from tinyalgo.tasks.corners import corner_instances
from tinyalgo.tasks.instances import digits_to_int

NUMBERED = [name for name in TASKS if name != "walk"]


def _board(task, instances):
    env = Environment(task, batch_size=len(instances), base=task.base, seed=0)
    env.load(instances)
    return env.input.board


@pytest.mark.parametrize("name", NUMBERED)
@pytest.mark.parametrize("base", [3, 5])
def test_numbered_instances_are_every_instance_of_a_length_once(name, base):
    task = make_task(name, base, extra_curriculum=False)
    for n in (1, 2):
        count = task.count_of_length(n)
        rows = len(task.number_rows)
        assert count == base ** (rows * n) * (base - 2 if name == "multiplication" else 1)
        inst = task.numbered(n, np.arange(count))
        assert task.length(inst).tolist() == [n] * count
        board = _board(task, inst)
        lanes = np.arange(count)
        numbers = np.array([[board.read(np.full(count, task.digit_cell(n, r, j)[0]),
                                        np.full(count, task.digit_cell(n, r, j)[1]), lanes)
                             for j in range(n)] for r in task.number_rows]).transpose(2, 0, 1)   # (count, rows, n)
        boards = {tuple(b) for b in numbers.reshape(count, -1).tolist()}
        assert len(boards) == count // task.n_multipliers     # every board, once per multiplier
        for i in range(0, count, max(1, count // 7)):
            values = [digits_to_int(numbers[i, r] if task.interface != "tape" else numbers[i, r][::-1], base)
                      for r in range(rows)]
            targets = inst.targets[i, :int(inst.n_outputs[i])]
            if name == "copy":
                assert targets.tolist() == numbers[i, 0].tolist()
            elif name == "reverse":
                assert targets.tolist() == numbers[i, 0][::-1].tolist()
            elif name == "multiplication":
                m = int(board.read(np.array([1]), np.array([1]), np.array([i]))[0])
                assert digits_to_int(targets, base) == m * values[0]
            else:
                assert digits_to_int(targets, base) == sum(values)


@pytest.mark.parametrize("name", list(TASKS))
def test_the_input_end_and_the_targets_sources(name):
    task = make_task(name, 10, extra_curriculum=False)
    n = 4
    keys = np.arange(1, 6)
    inst = task.random_of_length(np.random.default_rng(0), n, keys)
    assert task.length(inst).tolist() == [n] * 5
    board = _board(task, inst)
    if task.number_rows:                  # the cell past the last digit in reading order ends the input
        x, _ = task.digit_cell(n, task.number_rows[0], n - 1)
        end = x + 1 if task.interface == "tape" else x - 1
        assert task.length_from_end(end) == n
    else:
        assert task.length_from_end(int(inst.x0[0])) == n             # walk: the arrow at x = 1 + d
    arrows = {board.vocab.L: "l", board.vocab.U: "u", board.vocab.D: "d"}
    for i in range(5):
        arrow = arrows.get(int(inst.cells[i, 0, 0])) if not task.number_rows else None
        for j in range(int(inst.n_outputs[i])):
            x, y = task.target_source(n, j, arrow)
            if y is None:                 # a column makes the target: it holds the task's numbers
                assert task.digit_cell(n, task.number_rows[0], j)[0] == x
                continue
            assert board.read(np.array([x]), np.array([y]), np.array([i]))[0] == inst.targets[i, j]


@pytest.mark.parametrize("name", list(TASKS))
def test_corner_instances_are_the_tasks_and_solved_by_their_ground_truth(name):
    corners = corner_instances(name, 3, base=10)
    task = make_task(name, 10, extra_curriculum=False)
    assert len(corners) == (0 if name == "walk" else 2 if task.interface == "tape" else 3)
    for label, inst in corners.items():
        env = Environment(task, batch_size=1, seed=0)
        env.restart = False
        env.load(inst)
        for _ in range(int(inst.n_steps[0])):
            r = env.step(env.ground_truth(), env.next_target)
        assert r.reason[0] == 1, label                                # all written


def test_a_task_carries_its_end_rule_and_options():
    assert [name for name, t in TASKS.items() if t.q_from_clock] == ["walk"]
    assert [name for name, t in TASKS.items() if t.has_extra_curriculum] == ["addition3"]
    assert make_task("addition", extra_curriculum=True).extra_curriculum is False     # nothing to turn on
    with pytest.raises(TypeError):
        TASKS["addition3"](10, False)                                # options are keywords
