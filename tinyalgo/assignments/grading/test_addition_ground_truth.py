"""Grading "addition_ground_truth": the zig-zag action table of the column arithmetic tasks
(``_ColumnArithmetic._zigzag``) against the reference, on boards drawn at grading time in
several bases, with carry chains and every length from 1 digit."""
import numpy as np

from tinyalgo.tasks import Addition, Addition3

NAMES = {-1: "pad", 2: "down", 3: "up", 4: "left+write"}


def spell(row):
    return [NAMES.get(int(a), str(int(a))) for a in row]


def check(g, task, base, digits, lengths):
    made = Addition(base) if task == "addition" else Addition3(base, extra_curriculum=False)
    expected = np.asarray(made.build(digits, lengths).actions)
    got = g.call("column_actions", task=task, base=base, digits=digits, lengths=lengths)
    if not isinstance(got, np.ndarray) or got.shape != expected.shape:
        raise AssertionError(f"{task}: the action table has shape {getattr(got, 'shape', None)}, expected"
                             f" {expected.shape}")
    for lane in range(len(lengths)):
        if not np.array_equal(got[lane], expected[lane]):
            raise AssertionError(f"{task} in base {base}, {lengths[lane]} column(s) {digits[lane].tolist()}: got"
                                 f" {spell(got[lane])}, expected {spell(expected[lane])}")


def board(g, rows, base, lanes=6, longest=7):
    lengths = g.rng.integers(1, longest + 1, lanes)
    digits = g.rng.integers(0, base, (lanes, rows, int(lengths.max())))
    digits[0] = base - 1                                   # a carry chain
    return digits, lengths


def test_addition_actions_by_hand(g):
    digits = np.zeros((2, 2, 3), dtype=np.int64)
    digits[0, :, 0] = (5, 7)
    digits[1] = [[2, 9, 9], [1, 0, 0]]
    check(g, "addition", 10, digits, np.array([1, 3]))
    check(g, "addition", 10, *board(g, 2, 10))


def test_addition3_actions_by_hand(g):
    check(g, "addition3", 10, np.array([[[1, 2], [3, 4], [5, 6]]]), np.array([2]))
    check(g, "addition3", 10, *board(g, 3, 10))


def test_ground_truth_solves_addition(g):
    for base in sorted({2, int(g.rng.integers(3, 11))}):
        check(g, "addition", base, *board(g, 2, base, lanes=8, longest=9))
    base = int(g.rng.integers(3, 11))                       # 3-number addition needs a base of at least 3
    check(g, "addition3", base, *board(g, 3, base, lanes=5, longest=6))
