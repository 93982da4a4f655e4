"""The ground-truth actions solve every task, in every base, at every length,
with targets checked against independent arithmetic (Python integers)."""
import numpy as np
import pytest

from tinyalgo.environment import ALL_WRITTEN, Environment
from tinyalgo.tasks.instances import digits_to_int
from tinyalgo.tasks import TASKS, make_task
from tinyalgo.tasks.corners import corner_batch, corner_instances

VALID = [(name, base) for name in TASKS for base in range(2, 11) if base >= TASKS[name].min_base]


def number_on_row(env, lane, row, length):
    """The integer written on ``row``, right-aligned at x = 1, read off the board."""
    digits = env.input.board.window(lane, np.arange(2 - length, 2), [row])[0]
    assert (digits < env.vocab.base).all(), f"non-digit on row {row}: {digits}"
    return digits_to_int(digits[::-1], env.vocab.base)


def expected_outputs(env, lane):
    """Independent answer of the lane's current instance, least significant
    digit first, or None for tasks whose answer is read off the board while
    moving (copy, reverse, walk)."""
    task, base, n = env.task.name, env.vocab.base, int(env.n_outputs[lane])
    if task in ("addition", "addition3"):
        rows = 2 if task == "addition" else 3
        value = sum(number_on_row(env, lane, r, n - 1) for r in range(1, rows + 1))
    elif task == "multiplication":
        m = int(env.input.board.window(lane, [1], [1])[0, 0])
        assert 2 <= m < base
        value = m * number_on_row(env, lane, 2, n - 1)
    else:
        return None
    digits = [(value // base ** i) % base for i in range(n)]
    assert value < base ** n, "the answer has more digits than targets"
    return np.array(digits)


def run_ground_truth(env):
    """Drive every lane through its first episode with the ground-truth
    actions; writes come from the independent answer (arithmetic) or from the
    symbol under the head (copy, reverse, walk).  Returns per lane (reason,
    total reward, number of outputs, symbols written)."""
    B = env.batch
    answers = [expected_outputs(env, b) for b in range(B)]
    n_outputs = env.n_outputs.copy()
    obs = env.observe()
    active = np.ones(B, bool)
    reasons, totals, written = np.zeros(B, int), np.zeros(B), [[] for _ in range(B)]
    for _ in range(int(env.complexity.max()) * 2 + 10):
        actions = env.ground_truth()
        assert (actions[active] >= 0).all(), "ran past the ground-truth sequence"
        actions = np.where(active, actions, 0)
        writes = actions >= env.n_moves
        symbols = obs[:, 0].copy()
        for b in range(B):
            if answers[b] is not None and writes[b] and active[b]:
                symbols[b] = answers[b][env.target_index[b]]
            if writes[b] and active[b]:
                written[b].append(int(symbols[b]))
        result = env.step(actions, symbols)
        totals += np.where(active, result.reward, 0)
        ended = result.done & active
        reasons[ended] = result.reason[ended]
        active &= ~result.done
        obs = result.obs
        if not active.any():
            return reasons, totals, n_outputs, written, answers
    raise AssertionError("episodes did not end")


@pytest.mark.parametrize("name,base", VALID)
def test_ground_truth_solves_every_task_and_base(name, base):
    minimum = TASKS[name].min_complexity
    for c in (minimum, minimum + 1, minimum + 5, 37, 2000 if base in (2, 3, 10) else 300):
        env = Environment(name, batch_size=3, base=base, complexity=c, seed=c + base)
        reasons, totals, n_out, written, answers = run_ground_truth(env)
        assert (reasons == ALL_WRITTEN).all(), (name, base, c, reasons)
        np.testing.assert_array_equal(totals, n_out, err_msg=f"{name} base {base} c {c}")
        for b in range(3):
            assert len(written[b]) == n_out[b]
            if answers[b] is not None:
                np.testing.assert_array_equal(written[b], answers[b])


@pytest.mark.slow
def test_ground_truth_at_2000_for_every_base_of_addition():
    for base in range(2, 11):
        env = Environment("addition", batch_size=2, base=base, complexity=2000, seed=base)
        reasons, totals, n_out, _, _ = run_ground_truth(env)
        assert (reasons == ALL_WRITTEN).all() and (totals == n_out).all() and (n_out == 1001).all()


def canned_env(task, instances):
    env = Environment(task.name, batch_size=len(instances), base=task.base, seed=0,
                      complexity=task.min_complexity)
    env.load(instances)
    return env


@pytest.mark.parametrize("base", [2, 7, 10])
def test_long_carry_chain(base):
    task = make_task("addition", base)
    L = 300
    top = np.full((1, L), base - 1)            # 999...9 (least significant first)
    bottom = np.zeros((1, L), int)
    bottom[0, 0] = 1                           # 000...1
    env = canned_env(task, task.build(np.stack([top, bottom], axis=1), [L]))
    assert number_on_row(env, 0, 1, L) == base ** L - 1 and number_on_row(env, 0, 2, L) == 1
    np.testing.assert_array_equal(env.output.targets[0, :L + 1], [0] * L + [1])
    reasons, totals, n_out, written, _ = run_ground_truth(env)
    assert reasons[0] == ALL_WRITTEN and totals[0] == L + 1 and written[0] == [0] * L + [1]


def test_three_number_addition_carry_two():
    task = make_task("addition3", 10, extra_curriculum=False)
    L = 40
    rows = np.full((1, 3, L), 9)
    env = canned_env(task, task.build(rows, [L]))
    value = 3 * (10 ** L - 1)
    np.testing.assert_array_equal(env.output.targets[0, :L + 1], [(value // 10 ** i) % 10 for i in range(L + 1)])
    assert env.output.targets[0, L] == 2
    reasons, totals, _, _, _ = run_ground_truth(env)
    assert reasons[0] == ALL_WRITTEN and totals[0] == L + 1


def test_multiplication_zero_run():
    task = make_task("multiplication", 10)
    L = 500
    number = np.zeros((1, L), int)
    number[0, 0] = 2                           # 000...02
    env = canned_env(task, task.build(number, [9], [L]))
    np.testing.assert_array_equal(env.output.targets[0, :L + 1], [8, 1] + [0] * (L - 1))
    reasons, totals, _, written, _ = run_ground_truth(env)
    assert reasons[0] == ALL_WRITTEN and written[0] == [8, 1] + [0] * (L - 1)


@pytest.mark.parametrize("name", list(TASKS))
def test_shortest_instance(name):
    env = Environment(name, batch_size=4, complexity=TASKS[name].min_complexity, seed=3)
    reasons, totals, n_out, _, _ = run_ground_truth(env)
    assert (reasons == ALL_WRITTEN).all() and (totals == n_out).all() and (n_out >= 1).all()


@pytest.mark.parametrize("name,factor,c,complexity,n_out", [
    ("copy", 1, 10, 10, 10), ("reverse", 2, 10, 11, 5), ("walk", 1, 10, 12, 6),
    ("addition", 2, 10, 10, 6), ("addition3", 3, 30, 30, 11), ("multiplication", 1, 10, 12, 11)])
def test_complexity_and_outputs(name, factor, c, complexity, n_out):
    task = make_task(name)
    inst = task.sample(np.random.default_rng(0), np.array([c]))
    assert task.factor == factor
    assert inst.complexity[0] == complexity and inst.n_outputs[0] == n_out
    assert inst.n_steps[0] in (complexity, complexity + 1)   # the arithmetic tasks write a last carry


@pytest.mark.parametrize("name,base", [(n, b) for n, b in VALID if b in (3, 10) and n != "walk"])
def test_corner_instances_are_the_numbers_they_name_and_ground_truth_solves_them(name, base):
    top = base - 1
    for digits in (1, 2, 7):
        corners = corner_instances(name, digits, base)
        assert len(corners) == (2 if name in ("copy", "reverse") else 3)
        batch = corner_batch(name, [digits], base)
        env = Environment(name, batch_size=len(batch), base=base, seed=0, extra_curriculum=False)
        env.load(batch)
        reasons, _, _, written, answers = run_ground_truth(env)
        assert (reasons == ALL_WRITTEN).all(), (name, base, digits, reasons)
        nines = base ** digits - 1
        expected = {"addition": [nines + 1, 2 * nines, 0], "addition3": [nines + 1, 3 * nines, 0],
                    "multiplication": [2 * nines, top * nines, 0]}.get(name)
        if expected is None:                              # tape tasks: the digits themselves
            assert [set(w) for w in written] == [{top}, {0}]
        else:
            assert [digits_to_int(a, base) for a in answers] == expected


def test_corner_instances_of_walk_are_none_and_a_length_below_one_is_refused():
    assert corner_instances("walk", 5) == {} and corner_batch("walk", [1, 2]) is None
    with pytest.raises(ValueError, match="at least one digit"):
        corner_instances("addition", 0)
