# %% [markdown]
# # Tutorial 3: the supervised setting (paper section 5)
#
# The ground-truth actions are given; the controller learns which action comes
# next and which symbol to write by backpropagation alone.  We train a small
# feed-forward controller on reverse with the +4 curriculum, then test it on
# instances far longer than any it saw.  (With `TINYALGO_FAST=1`, as the tests
# run it, everything is smaller.)

# %%
import os

import numpy as np

from tinyalgo.evaluation import GreedyAgent, evaluate
from tinyalgo.supervised import SupervisedConfig, train_supervised

FAST = os.environ.get("TINYALGO_FAST") == "1"
cfg = SupervisedConfig(task="reverse", controller="ff", units=32 if FAST else 200, seed=0,
                       target=100 if FAST else 1000, budget=200_000 if FAST else 2_000_000,
                       validate_every=5, val_instances=20 if FAST else 50)
controller, report = train_supervised(cfg)

# %% [markdown]
# ## The curriculum's history
# Each validation at the current complexity C; a perfect score adds 4.

# %%
for h in report["history"][-5:]:
    print(h)
print("trained up to complexity", max(h["level"] for h in report["history"]),
      "- solved the target:", report["solved_target"])

# %% [markdown]
# ## Generalisation far beyond the training lengths

# %%
complexities = [10, 100, 1000] if FAST else [10, 100, 1000, 10000]
rows = evaluate(GreedyAgent(controller), "reverse", complexities, instances=10, log=print)

# %% [markdown]
# ## Looking inside: the controller's state over an episode
# The paper's footnote on autocorrelation: A_ij = <h_i - E, h_j - E> / sigma^2.
# A feed-forward controller has no state, so here we look at its hidden layer.

# %%
from tinyalgo.environment import Environment

env = Environment("reverse", batch_size=1, complexity=35, seed=1)
obs, reset, hidden = env.observe(), np.ones(1, bool), []
state = controller.initial_state(1)
for _ in range(int(env.complexity[0])):
    q, logp, state, cache = controller.step(obs, state, reset)
    hidden.append(cache[4][0])
    r = env.step(q.argmax(1), logp.argmax(1))
    obs, reset = r.obs, r.done
Hs = np.array(hidden)
E = Hs.mean(0)
A = (Hs - E) @ (Hs - E).T / np.mean(np.sum((Hs - E) ** 2, axis=1))
print("autocorrelation matrix", A.shape, "- two blocks (moving right, then writing left):",
      np.round(A[[0, -1]][:, [0, -1]], 2).tolist())
if not FAST:
    import matplotlib.pyplot as plt
    plt.imshow(A, cmap="RdBu_r", vmin=-1, vmax=1)
    plt.title("reverse, complexity 35: autocorrelation of the hidden state")
    plt.colorbar()
    plt.savefig("reverse_autocorrelation.png", dpi=90)
