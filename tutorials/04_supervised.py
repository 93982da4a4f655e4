# %% [markdown]
# # Tutorial 4: the supervised setting (paper section 5)
#
# The ground-truth actions are given; the controller learns which action comes
# next and which symbol to write by backpropagation alone.  We train a small
# feed-forward controller on reverse with the +4 curriculum, then test it on
# instances far longer than any it saw.  (With `TINYALGO_FAST=1`, as the tests
# run it, everything is smaller: 32 units, target complexity 100.)  Every
# claim below is checked by an `assert`.

# %%
import os

import tinyalgo         # before NumPy: it asks for one BLAS thread, the fastest for small matrices
import numpy as np

from tinyalgo.environment import ALL_WRITTEN, Environment
from tinyalgo.evaluation import GreedyAgent, evaluate
from tinyalgo.supervised import SupervisedConfig, train_supervised

FAST = os.environ.get("TINYALGO_FAST") == "1"
print("tinyalgo", tinyalgo.__version__, "- fast mode" if FAST else "")
cfg = SupervisedConfig(task="reverse", controller="ff", units=32 if FAST else 200, seed=0,
                       target=100 if FAST else 1000, budget=200_000 if FAST else 2_000_000,
                       validate_every=5, val_instances=20 if FAST else 50)
controller, report = train_supervised(cfg)

# %% [markdown]
# ## The curriculum's history
# Each validation at the current complexity C; a perfect score adds 4.  The
# run stops as soon as the model, after an advance, also solves the target
# complexity: it never trains anywhere near it.  (Fast mode: about 8000
# characters, validations at complexities 6 and 10 only; the second advance,
# 10 -> 14, comes with complexity 100 solved.)

# %%
for h in report["history"][-5:]:
    print(h)
trained_max = max(h["level"] for h in report["history"])
print("trained up to complexity", trained_max, "- solved the target:", report["solved_target"])
assert report["solved_target"] and report["chars"] < cfg.budget
level = cfg.start
for h in report["history"]:
    assert h["level"] == level and h["advanced"] == (h["solved"] == 1.0)
    level += cfg.increment if h["advanced"] else 0
assert report["final_level"] == level and report["history"][-1]["target_solved"] == 1.0
assert report["history"][0]["solved"] < 1.0                    # it had to learn level 6 first
assert trained_max <= cfg.target // 4                          # trained on short instances only

# %% [markdown]
# ## Generalisation far beyond the training lengths
# A feed-forward controller that reverses short tapes reverses any tape: it
# needs no memory, only the symbol under its head and its previous move.
# Expected: every instance solved at 10, 100 and 1000 (and 10000 in full mode).

# %%
complexities = [10, 100, 1000] if FAST else [10, 100, 1000, 10000]
rows = evaluate(GreedyAgent(controller), "reverse", complexities, instances=10, log=print)
assert [row["solved"] for row in rows] == [1.0] * len(complexities)

# %% [markdown]
# ## Looking inside: the controller's state over an episode
# The paper's footnote on autocorrelation: A_ij = <h_i - E, h_j - E> / sigma^2.
# A feed-forward controller has no state, so here we look at its hidden layer
# t, the tanh layer both heads read (`StepCache.tanh`).  Reverse at complexity
# 35 has n = 17 digits: the ground truth moves right 17 times, turns left once,
# then writes 17 times moving left.  The greedy controller does exactly that,
# and A shows two blocks: steps of the same phase correlate (positive mean),
# steps of different phases anti-correlate (negative mean).

# %%
env = Environment("reverse", batch_size=1, complexity=35, seed=1)
obs, reset, hidden, taken = env.observe(), np.ones(1, bool), [], []
state = controller.initial_state(1)
truth = env.gt_actions[0, :35].tolist()
assert state == []                                             # no recurrent state
for _ in range(int(env.complexity[0])):
    q, logp, state, cache = controller.step(obs, state, reset)
    hidden.append(cache.tanh[0])
    taken.append(int(q[0].argmax()))
    r = env.step(q.argmax(1), logp.argmax(1))
    obs, reset = r.obs, r.done
assert taken == truth and r.reason[0] == ALL_WRITTEN          # the reference path, to the last digit
Hs = np.array(hidden)
E = Hs.mean(0)
A = (Hs - E) @ (Hs - E).T / np.mean(np.sum((Hs - E) ** 2, axis=1))
right, left = slice(0, 17), slice(18, 35)
blocks = [A[right, right].mean(), A[left, left].mean(), A[right, left].mean()]
print("autocorrelation matrix", A.shape, "- mean within moving right, within writing left, across:",
      [round(float(b), 2) for b in blocks])
assert blocks[0] > 0 and blocks[1] > 0 and blocks[2] < 0
if not FAST:
    import matplotlib.pyplot as plt
    plt.imshow(A, cmap="RdBu_r", vmin=-1, vmax=1)
    plt.title("reverse, complexity 35: autocorrelation of the hidden layer")
    plt.colorbar()
    plt.savefig("reverse_autocorrelation.png", dpi=90)

# %% [markdown]
# ## Exercises
# * `tinyalgo assignment make curriculum --out hw` stubs `Curriculum.record`
#   (`tinyalgo/curriculum.py`), the rule this run followed: count the perfect
#   validations in a row, add `increment` (4) to the level once `streak` of
#   them are reached, and record each validation in `history`.  The grading
#   tests (6 points) replay short score sequences whose levels are worked by
#   hand, e.g. 0.9 then 1.0 then 1.0 gives levels 6, 10, 14.
# * `tinyalgo assignment grade hw` scores it.
