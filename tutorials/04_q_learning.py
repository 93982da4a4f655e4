# %% [markdown]
# # Tutorial 4: Q-learning from input-output pairs (paper section 6)
#
# No actions are given: the controller must discover how to move.  First the
# targets by hand, then a real run.

# %%
import os

import numpy as np

from tinyalgo.qlearning import lambda_returns, watkins_targets

FAST = os.environ.get("TINYALGO_FAST") == "1"

# %% [markdown]
# ## The dynamic discount and Watkins Q(lambda) on a hand-made trajectory
# One lane, 4 steps, 3 outputs to write.  Step 2 explores, so Watkins cuts the
# return there and bootstraps with max_a Q(s_2, a).  With the dynamic discount
# Q-hat = Q / V-hat (V-hat = outputs still to produce), so every target is a
# fraction of what remains: it stays in [0, 1] whatever the length.

# %%
rewards = np.array([[1.0], [0.0], [1.0], [1.0]])
v_hat = np.array([[3], [2], [2], [1], [1]])
q_max = np.array([[0.9], [0.8], [0.7], [0.6], [0.5]])
exploratory = np.array([[False], [False], [True], [False], [False]])
terminal = np.array([[False], [False], [False], [True]])
targets = watkins_targets(rewards, q_max, exploratory, terminal, v_hat=v_hat)
print("targets:", targets[:, 0].round(4))
print("step 0 by hand: (1 + 0) / 3 + (2 / 3) * 0.7 =", round((1 + 0) / 3 + (2 / 3) * 0.7, 4))

# the same numbers as a lambda-return with lambda cut to 0 before exploratory steps
lam = (~exploratory[1:]).astype(float)
lam[-1] = 0
print("as a lambda-return:", lambda_returns(rewards / v_hat[:-1], (~terminal) * v_hat[1:] / v_hat[:-1],
                                           q_max, lam)[:, 0].round(4))

# %% [markdown]
# ## A run: copy, learned from rewards alone

# %%
from tinyalgo.qtraining import QConfig, QTrainer

cfg = QConfig(task="copy", units=24 if FAST else 200, seed=0, budget=600_000 if FAST else 3_000_000,
              test_length=20 if FAST else 100, report_lengths=(20, 60) if FAST else (100, 1000),
              confirm_length=60 if FAST else 1000,    # after the paper's solve, go on until this length passes
              val_instances=20 if FAST else 50, dtype="float64" if FAST else "float32")
trainer = QTrainer(cfg)
state = trainer.run()
report = trainer.final_report()
print("solved (the paper's protocol):", state.solved_at, " passed the longer length:", state.confirmed_at)

# %% [markdown]
# ## Watching the learned policy: Q-values per joint action, frame by frame

# %%
from tinyalgo.environment import Environment
from tinyalgo.render import render_lane

env = Environment("copy", batch_size=1, complexity=6, seed=3)
obs, reset, hidden = env.observe(), np.ones(1, bool), trainer.controller.initial_state(1)
for _ in range(3):
    q, logp, hidden = trainer.controller.infer(obs, hidden, reset)
    print(render_lane(env, 0, q_values=q[0], action=q[0].argmax()), end="\n\n")
    r = env.step(q.argmax(1), logp.argmax(1))
    obs, reset = r.obs, r.done

# %% [markdown]
# ## Where a model fails: its first departure from the reference solution
#
# `first_departures` runs fresh instances greedily and, for each one, names the
# first step at which the controller's joint action differs from the
# ground-truth action, with the Q-values of both. On a failed instance that
# is the decision that started the failure; a small gap between the two
# Q-values means the model could hardly tell them apart. A solved instance
# can depart too: the small model here sometimes writes while moving left and
# then walks back right, a detour that costs nothing under the dynamic
# discount with gamma = 1, so Q-learning has no reason to avoid it. (On addition at
# length 1000, every failure of a trained model is a swapped up/down after a
# write: see `figures/README.md`.)

# %%
from tinyalgo.evaluation import first_departures
from tinyalgo.render import action_name

rows = first_departures(trainer.controller, "copy", 60 if FAST else 1000, instances=20)
print(sum(r["solved"] for r in rows), "of", len(rows), "solved")
for r in rows:
    d = r["departure"]
    if d is not None:
        print(f"instance {r['lane']}: {'solved' if r['solved'] else 'failed'}; at step {d['step']}:"
              f" {action_name(d['action'], 2)} (Q {d['q_action']:.3f}) instead of"
              f" {action_name(d['truth'], 2)} (Q {d['q_truth']:.3f})")
