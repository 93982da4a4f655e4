"""The interfaces on their own: heads move over infinite boards, the output
tape checks and records writes."""
import numpy as np

from tinyalgo.board import random_digits
from tinyalgo.interfaces import InputGrid, InputTape, OutputTape
from tinyalgo.symbols import Vocabulary


def test_tape_and_grid_moves_and_the_infinite_board():
    v = Vocabulary(10)
    tape = InputTape(2, 1, v, "random")
    assert tape.n_moves == 2
    tape.move(np.array([0, 1]))
    assert tape.x.tolist() == [0, 2] and tape.y.tolist() == [1, 1]
    for _ in range(500):
        tape.move(np.array([0, 1]))                  # far off any defined cell
    np.testing.assert_array_equal(tape.read(), random_digits(tape.board.key, tape.x, tape.y, 10))
    grid = InputGrid(3, 2, v, "e", q_column=True)
    assert grid.n_moves == 4
    grid.move(np.array([1, 2, 3]))                    # right, down, up
    assert grid.x.tolist() == [2, 1, 1] and grid.y.tolist() == [1, 2, 0]
    grid.x[:] = [3, 3, 4]
    assert grid.read().tolist() == [v.Q, v.Q, v.E]    # the q wall in column 3, on every row


def test_output_tape_checks_and_records_writes():
    v = Vocabulary(10)
    out = OutputTape(2, v)
    out.targets = out.fit(np.array([[4, 0, 7], [1, 2, v.NONE]]))
    out.written = np.full_like(out.targets, v.NONE)
    out.n_outputs[:] = [3, 2]
    correct = out.write(np.array([True, True]), np.array([4, 9]))
    assert correct.tolist() == [True, False] and out.index.tolist() == [1, 1]
    correct = out.write(np.array([True, False]), np.array([0, 0]))   # digit 0 scores (docs/original-release.md#digit-zero)
    assert correct.tolist() == [True, False] and out.remaining.tolist() == [1, 1]
    assert v.to_chars(out.written[0, :2]) == "40" and out.written[1, 0] == 9
