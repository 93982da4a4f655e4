# %% [markdown]
# # Tutorial 1: the world the controller acts in
#
# The paper (section 2) gives a controller three interfaces: an input tape or
# grid it moves over, and an output tape it writes to.  Every step it picks one
# *joint action*, a move and whether to write, and its symbol head says what to
# write.  This tutorial builds the six tasks, looks at an instance, and runs the
# ground-truth solution through the batched environment.
#
# Run it as a script (`python tutorials/01_tasks_and_interfaces.py`) or open
# the notebook made from it (`01_tasks_and_interfaces.ipynb`).  Every claim
# below is checked by an `assert`: if the script runs to the end, the text is
# true.  In an assignment's copy some functions are still yours to write: a
# cell that needs one sits in `with skip_if_stub():`, which says which function
# and which assignment, and the tutorial goes on without that cell.

# %%
from tinyalgo.host.threads import one_blas_thread

one_blas_thread()       # before NumPy: one BLAS thread, the fastest for small matrices
import tinyalgo  # noqa: E402
import numpy as np

from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.evaluation import GroundTruthAgent, evaluate_complexity
from tinyalgo.inspection.render import action_name, ground_truth_frames, render_lane
from tinyalgo.tasks import TASKS, make_task
from tinyalgo.assignments.tutorial import skip_if_stub

print("tinyalgo", tinyalgo.__version__, "- tasks:", ", ".join(TASKS))
# expected: copy, reverse, walk, addition, addition3, multiplication
assert list(TASKS) == ["copy", "reverse", "walk", "addition", "addition3", "multiplication"]

# %% [markdown]
# ## An addition instance
# Two numbers sit right-aligned at x = 1 on rows 1 and 2; a wall of `q` stands
# in column 3; every other cell is `e`.  The head starts on the least
# significant digit of the top number.  The targets are the digits of the sum,
# least significant first.  At complexity 8 each number has 8 // 2 = 4 digits
# (paper section 3: the complexity of addition is twice the length).

# %%
with skip_if_stub():
    env = Environment("addition", batch_size=1, complexity=8, seed=0)
    print(render_lane(env, 0))

    v = env.vocab
    xs, ys = np.arange(-6, 8), np.arange(-1, 5)
    cells = env.input.board.window(0, xs, ys)             # (rows y, columns x) of lane 0

    def at(x, y):
        """The symbol at (x, y) of lane 0's board."""
        return cells[y - ys[0], x - xs[0]]

    top = [at(x, 1) for x in range(-2, 2)]                # 4 digits at x = -2..1, most significant first
    bottom = [at(x, 2) for x in range(-2, 2)]
    assert all(v.is_digit(d) for d in top + bottom)
    for x in xs:
        for y in ys:
            if x == 3:
                assert at(x, y) == v.Q                    # the wall, on every row
            elif not (-2 <= x <= 1 and y in (1, 2)):
                assert at(x, y) == v.E                    # the fill rule of addition: e everywhere else
    assert (env.input.x[0], env.input.y[0]) == (1, 1) and env.observe()[0, 0] == top[-1]

    def number(digits):
        """The number whose digits (most significant first) are ``digits``."""
        return int("".join(v.chars[d] for d in digits))

    total = number(top) + number(bottom)
    targets = env.output.targets[0, :int(env.n_outputs[0])]
    print(f"{number(top)} + {number(bottom)} = {total}; targets, least significant first:", v.to_chars(targets))
    # expected: 6288 + 9421 = 15709; targets 90751 (five digits: four columns and the final carry)
    assert v.to_chars(targets) == f"{total:05d}"[::-1]

# %% [markdown]
# ## Stepping through the ground truth
# The reference solution zig-zags: down (no write), left and write, up (no
# write), left and write, ... and one last write for the final carry: 2L + 1
# = 9 steps for L = 4 digits, and the episode ends with all five digits
# written.

# %%
with skip_if_stub():
    truth = [action_name(a, env.n_moves) for a in env.gt_actions[0] if a >= 0]
    print("ground truth:", ", ".join(truth))
    assert truth == ["down", "left+write", "up", "left+write"] * 2 + ["left+write"]
    frames = ground_truth_frames(env, 0)
    for frame in frames[:4]:
        print(frame, end="\n\n")
    print(frames[-1])
    # expected: episode ended: all written, 5 of 5 outputs right
    assert len(frames) == 9 + 1 and frames[-1].startswith("episode ended: all written, 5 of 5 outputs right")

# %% [markdown]
# ## Many lanes at once
# The environment holds B lanes in NumPy arrays; one `step` moves all of them.
# Here 20 lanes act at random for 200 steps: half the actions write, and a
# random digit is right one time in ten, so an episode lasts about two steps
# and ends with a wrong write, about 20 x 200 x 0.5 x 0.9 = 1800 times; the
# lanes start new instances on their own.

# %%
env = Environment("walk", batch_size=20, complexity=10, seed=1)
rng = np.random.default_rng(0)
ends = {}
for _ in range(200):
    actions = rng.integers(0, env.n_actions, size=env.batch)
    symbols = rng.integers(0, env.vocab.base, size=env.batch)
    result = env.step(actions, symbols)
    for r in result.reason[result.done]:
        ends[END_REASONS[r]] = ends.get(END_REASONS[r], 0) + 1
print("episode ends of a random policy:", ends)
assert set(ends) == {"wrong write"} and 1600 < ends["wrong write"] < 2000

# %% [markdown]
# ## What the controller sees
# Five integers per lane (paper section 2; docs/original-release.md#observation):
# the symbol under the head (17 symbols in base 10: 10 digits, `q e p l u d`
# and "none"), the symbol written at the previous step (or none), whether it
# explored earlier in this episode, the previous move (4 moves on the grid, or
# none) and the previous write flag (no, yes, or none).  A lane that just
# started a new episode sees "none" in the three "previous" fields.

# %%
obs, v = result.obs, env.vocab
print("observation fields and their sizes:", env.obs_sizes)
print("first lanes' observations:\n", obs[:3])
print("outputs still to produce (V-hat):", env.v_hat[:5])
# expected sizes: (17, 17, 2, 5, 3)
assert env.obs_sizes == (17, 17, 2, 5, 3) and obs.shape == (20, 5)
assert np.all((obs >= 0) & (obs < np.array(env.obs_sizes)))
new, going = result.done, ~result.done
assert np.all(obs[new, 1] == v.NONE) and np.all(obs[new, 3] == env.n_moves) and np.all(obs[new, 4] == 2)
writes = actions >= env.n_moves
assert np.all(obs[going, 3] == actions[going] % env.n_moves) and np.all(obs[going, 4] == writes[going])
assert np.all(obs[going & writes, 1] == symbols[going & writes])   # a write that did not end the episode
assert np.all(obs[going & ~writes, 1] == v.NONE)
assert np.all(obs[:, 2] == 0)                                       # nobody told the environment it explored
# V-hat counts the outputs still to produce: all of them in a new episode (walk,
# complexity 10: the arrow 5 cells away, then 10 + 1 - 5 = 6 digits to copy)
assert np.all(env.v_hat[new] == 6) and np.all((1 <= env.v_hat) & (env.v_hat <= 6))

# %% [markdown]
# ## Every task, solved by its ground truth
# Q-learning never sees these actions; the supervised setting learns from them.
# Asked for complexity 12, each task builds the nearest instance it can
# (docs/original-release.md#tasks): reverse needs an odd 2n + 1 (13), walk
# counts the two steps of its turn (14), 3-number addition has at least 2
# digits per number, multiplication counts L + 2 (14).

# %%
with skip_if_stub():
    expected = {"copy": (12, 12, 12), "reverse": (13, 6, 13), "walk": (14, 7, 14), "addition": (12, 7, 13),
                "addition3": (12, 5, 13), "multiplication": (14, 13, 14)}
    for name in TASKS:
        task = make_task(name)
        inst = task.sample(np.random.default_rng(0), np.array([12]))
        print(f"{name:15s} complexity {inst.complexity[0]:3d}, {inst.n_outputs[0]:2d} outputs,"
              f" {inst.n_steps[0]:2d} ground-truth steps, interface {task.interface}")
        assert (inst.complexity[0], inst.n_outputs[0], inst.n_steps[0]) == expected[name]
        row = evaluate_complexity(GroundTruthAgent(), name, 12, instances=50, seed=1)
        assert row["solved"] == 1.0, (name, row)                      # 50 fresh instances, every one solved
    print("the ground truth solves 50 fresh instances of every task")

# %% [markdown]
# ## Exercises
# * `tinyalgo assignment make addition_ground_truth --out hw` writes a copy of
#   tinyalgo in which the zig-zag table of addition and 3-number addition
#   (`_ColumnArithmetic._zigzag` in `tinyalgo/tasks/arithmetic.py`) raises
#   `NotImplementedError`.  Write it from the description in this tutorial:
#   per column, down (even columns) or up (odd ones) once per extra number, then
#   left+write; one last left+write for the carry.  For 992 + 1 that is
#   down, left+write, up, left+write, down, left+write, left+write.
# * `tinyalgo assignment grade hw` runs its 3 tests (8 points): two action
#   tables worked by hand and the environment solving every length 1..8 in
#   bases 2 and 10 with your table.
