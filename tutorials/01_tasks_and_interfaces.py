# %% [markdown]
# # Tutorial 1: the world the controller acts in
#
# The paper (section 3) gives a controller three interfaces: an input tape or
# grid it moves over, and an output tape it writes to.  Every step it picks one
# *joint action*, a move and whether to write, and its symbol head says what to
# write.  This tutorial builds the six tasks, looks at an instance, and runs the
# ground-truth solution through the batched environment.
#
# Run it as a script (`python tutorials/01_tasks_and_interfaces.py`) or open it
# as a notebook (the `# %%` lines are cells).

# %%
import numpy as np

from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.render import ground_truth_frames, render_lane
from tinyalgo.tasks import TASKS, make_task

print("tasks:", ", ".join(TASKS))

# %% [markdown]
# ## An addition instance
# Two numbers sit right-aligned at x = 1 on rows 1 and 2; a wall of `q` stands
# in column 3; every other cell is `e`.  The head starts on the least
# significant digit of the top number.  The targets are the digits of the sum,
# least significant first.

# %%
env = Environment("addition", batch_size=1, complexity=8, seed=0)
print(render_lane(env, 0))

# %% [markdown]
# ## Stepping through the ground truth
# The reference solution zig-zags: down (no write), left and write, up (no
# write), left and write, ... and one last write for the final carry.

# %%
for frame in ground_truth_frames(env, 0)[:4]:
    print(frame, end="\n\n")

# %% [markdown]
# ## Many lanes at once
# The environment holds B lanes in NumPy arrays; one `step` moves all of them.
# Here 20 lanes act at random: writes are mostly wrong, so episodes end fast
# and lanes start new instances on their own.

# %%
env = Environment("walk", batch_size=20, complexity=10, seed=1)
rng = np.random.default_rng(0)
ends = {}
for _ in range(200):
    actions = rng.integers(0, env.n_actions, size=env.batch)
    result = env.step(actions, rng.integers(0, env.vocab.base, size=env.batch))
    for r in result.reason[result.done]:
        ends[END_REASONS[r]] = ends.get(END_REASONS[r], 0) + 1
print("episode ends of a random policy:", ends)

# %% [markdown]
# ## What the controller sees
# Five integers per lane: the symbol under the head, the symbol written at the
# previous step (or none), whether it explored earlier in this episode, the
# previous move and the previous write flag (docs/original-release.md#observation).

# %%
print("observation fields and their sizes:", env.obs_sizes)
print("first lanes' observations:\n", result.obs[:3])
print("outputs still to produce (V-hat):", env.v_hat[:5])

# %% [markdown]
# ## Every task, solved by its ground truth
# Q-learning never sees these actions; the supervised setting learns from them.

# %%
for name in TASKS:
    task = make_task(name)
    inst = task.sample(np.random.default_rng(0), np.array([12]))
    print(f"{name:15s} complexity {inst.complexity[0]:3d}, {inst.n_outputs[0]:2d} outputs,"
          f" {inst.n_steps[0]:2d} ground-truth steps, interface {task.interface}")
