"""Assignment "addition_ground_truth": the zig-zag action table of the column
arithmetic tasks (tinyalgo/tasks/arithmetic.py, _ColumnArithmetic._zigzag;
tutorial 01).  Grid actions: move + 4 * write with moves 0 left, 1 right,
2 down, 3 up: down = 2, up = 3, left+write = 4; -1 pads past the end."""
import numpy as np

from tinyalgo.environment import ALL_WRITTEN, END_REASONS, Environment
from tinyalgo.tasks import Addition, Addition3

NAMES = {-1: "pad", 2: "down", 3: "up", 4: "left+write"}


def spell(row):
    return [NAMES.get(int(a), str(int(a))) for a in row]


def test_addition_actions_by_hand():
    digits = np.zeros((2, 2, 3), dtype=np.int64)
    digits[0, :, 0] = (5, 7)                        # 5 + 7 (one column)
    digits[1] = [[2, 9, 9], [1, 0, 0]]              # 992 + 1 (three columns, least significant first)
    actions = Addition(10).build(digits, np.array([1, 3])).actions
    # per column: down (even columns) or up (odd ones), then left+write; one more left+write for the carry
    expected = [[2, 4, 4, -1, -1, -1, -1],
                [2, 4, 3, 4, 2, 4, 4]]
    for lane, (got, want) in enumerate(zip(actions.tolist(), expected)):
        assert got == want, f"addition, {(1, 3)[lane]} column(s): got {spell(got)}, expected {spell(want)}"


def test_addition3_actions_by_hand():
    digits = np.array([[[1, 2], [3, 4], [5, 6]]])   # three 2-digit numbers
    actions = Addition3(10, extra_curriculum=False).build(digits, np.array([2])).actions
    # per column: two vertical moves (down, down on column 0; up, up on column 1), then left+write
    expected = [2, 2, 4, 3, 3, 4, 4]
    assert actions[0].tolist() == expected, \
        f"3-number addition, 2 columns: got {spell(actions[0])}, expected {spell(expected)}"


def test_ground_truth_solves_addition():
    """Following the ground truth and writing the right digit ends every episode with all digits written."""
    for base in (2, 10):
        rng = np.random.default_rng(base)
        lengths = np.arange(1, 9)
        digits = rng.integers(0, base, size=(len(lengths), 2, lengths.max()))
        digits[0] = base - 1                        # a carry chain: 99999999 + 99999999
        env = Environment("addition", batch_size=len(lengths), base=base, seed=0)
        env.load(env.task.build(digits, lengths))
        reason = np.zeros(len(lengths), int)
        steps = np.zeros(len(lengths), int)
        for _ in range(2 * int(lengths.max()) + 4):
            actions = env.ground_truth()
            assert (actions[reason == 0] >= 0).all(), f"base {base}: the ground truth ended before the episode"
            result = env.step(np.maximum(actions, 0), env.next_target)
            steps += reason == 0
            reason = np.where((reason == 0) & result.done, result.reason, reason)
            if reason.all():
                break
        for lane, L in enumerate(lengths):
            assert reason[lane] == ALL_WRITTEN, (
                f"base {base}, {L}-digit addition: the episode ended with "
                f"'{END_REASONS[reason[lane]]}' after {steps[lane]} steps, not with all {L + 1} digits written")
