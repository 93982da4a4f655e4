"""The interfaces: heads move over infinite boards (carrying the random
board's hash), the output tape checks and records writes, and the
environment's step acts through them."""
import numpy as np

from tinyalgo.host.speed import board_hash, random_digits
from tinyalgo.environment import Environment
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
    # digit 0 scores (docs/original-release.md#digit-zero)
    correct = out.write(np.array([True, False]), np.array([0, 0]))
    assert correct.tolist() == [True, False] and out.remaining.tolist() == [1, 1]
    assert v.to_chars(out.written[0, :2]) == "40" and out.written[1, 0] == 9


def test_grid_head_carries_the_hash_of_a_random_board():
    v = Vocabulary(7)
    grid = InputGrid(4, 1, v, "random")
    grid.board.key[:] = [0, 5, 123456789, 2 ** 40]
    grid.hash[:] = board_hash(grid.board.key, grid.x, grid.y)
    rng = np.random.default_rng(0)
    for _ in range(300):
        grid.move(rng.integers(0, 4, size=4))
        np.testing.assert_array_equal(grid.hash, board_hash(grid.board.key, grid.x, grid.y))
        np.testing.assert_array_equal(grid.read(), random_digits(grid.board.key, grid.x, grid.y, 7))
    assert np.abs(grid.y).max() > 3        # the heads left the stored rows


def test_output_tape_keeps_the_symbol_just_written():
    v = Vocabulary(10)
    out = OutputTape(3, v)
    out.targets = out.fit(np.array([[4, 0], [1, 2], [7, 7]]))
    correct = out.write(np.array([True, False, True]), np.array([4, 9, 1]), record=False)
    assert correct.tolist() == [True, False, False] and out.index.tolist() == [1, 0, 1]
    assert out.last_written.tolist() == [4, v.NONE, 1]
    assert out.next_target.tolist() == [0, 1, 7]


def test_the_environment_steps_through_its_interfaces():
    env = Environment("addition", batch_size=3, complexity=6, seed=0)
    calls = []
    move, write = env.input.move, env.output.write
    env.input.move = lambda moves: (calls.append(("move", moves.tolist())), move(moves))
    env.output.write = lambda mask, *a, **k: (calls.append(("write", mask.tolist())), write(mask, *a, **k))[1]
    x = env.input.x.copy()
    env.step(np.array([1, 2, 5]), env.next_target)                 # right; down; right + a correct write
    assert calls == [("write", [False, False, True]), ("move", [1, 2, 1])]
    assert (env.input.x - x).tolist() == [1, 0, 1] and env.input.x is env.lanes.x
