# %% [markdown]
# # Tutorial 3: backpropagation through time and the episode barrier
#
# The controller (paper section 2, Figure 1) runs one step at a time:
# `Controller.step(obs, state, reset)` returns the Q values, the symbol head's
# log-probabilities, the new state and a `StepCache` that names what each layer
# kept (`embed`, `cores`, `extra`, `tanh`, `q`, `sym`, `log_softmax`, and `keep`,
# the episode barrier).  `Controller.step_backward` is that step's backward pass;
# `tinyalgo.bptt.backward` runs its parts over the list of a rollout's caches:
# the sweep over the states from the last step to the first, and the weight
# gradients of all steps as one product each.  These are the functions
# `tinyalgo train` trains with.
#
# A lane whose episode ends starts the next one at once.  The new episode's
# first step sees a zero state (the forward pass multiplies the incoming state
# by `keep` = 0), so no gradient may flow from it back into the old episode:
# the backward loop multiplies the state gradient by the same `keep`.
#
# What you should see: a rollout in which some lanes start new episodes; every
# gradient, including the initial state's, within 1e-5 of centred differences;
# a lane's initial state getting exactly zero gradient from losses after its
# reset; and, with the barrier removed, the initial state's gradient wrong by
# far more than 1e-3.  In an assignment's copy, a cell that needs a function
# you have not written yet says so (`with skip_if_stub():`) and the tutorial
# goes on.

# %%
import os

from tinyalgo.host.threads import one_blas_thread

one_blas_thread()   # before NumPy: one BLAS thread, the fastest for small matrices
import numpy as np

from tinyalgo import bptt
from tinyalgo.controller import Controller, ControllerConfig, rollout_forward
from tinyalgo.environment import Environment
from tinyalgo.gradcheck import check_gradients, format_report
from tinyalgo.assignments.tutorial import skip_if_stub

FAST = os.environ.get("TINYALGO_FAST") == "1"
T, B, H = 6, 3, 6

# %% [markdown]
# ## A rollout on copy with a random policy
# Random writes are mostly wrong, so episodes end early and lanes restart
# inside the rollout: `resets[t, b]` says lane b started a new episode at step t.
# The last lane never writes, so its episode lasts the whole rollout.

# %%
env = Environment("copy", batch_size=B, complexity=4, seed=3)
rng = np.random.default_rng(0)
obs_seq, resets = np.zeros((T, B, len(env.obs_sizes)), dtype=np.int64), np.zeros((T, B), dtype=bool)
obs = env.observe()
for t in range(T):
    obs_seq[t] = obs
    actions = rng.integers(0, env.n_actions, size=B)
    actions[B - 1] %= env.n_moves                        # the last lane only moves: its episode goes on
    result = env.step(actions, rng.integers(0, env.vocab.base, size=B))
    obs = result.obs
    if t + 1 < T:
        resets[t + 1] = result.done
print("resets (steps x lanes):\n", resets.astype(int))
assert resets.any(), "some lane starts a new episode inside the rollout"

# %% [markdown]
# ## Forward: a list of step caches
# `rollout_forward` calls `Controller.step` T times and keeps the caches; you
# can stop at any step and look inside (here the GRU's update gate z at step 2).

# %%
ctrl = Controller(ControllerConfig.for_environment(env, "gru", H), rng=np.random.default_rng(1))
state0 = [(rng.normal(size=(B, H)),)]                    # a random initial state: its gradient is checked too
q, logp, caches, final = rollout_forward(ctrl, obs_seq, resets, state0)
print("q", q.shape, "logp", logp.shape, "caches", len(caches), "fields", caches[0]._fields)
print("update gate z at step 2:", caches[2].cores[0].z.shape)
assert len(caches) == T and q.shape == (T, B, env.n_actions)

# %% [markdown]
# ## Backward through time, checked by centred differences
# The loss is sum(q * dq) + sum(logp * dlogp) with random upstream gradients;
# `bptt.backward` returns the gradient of every parameter and of the initial
# state.  Expected: every relative error below 1e-5 (most between 1e-9 and
# 1e-7: centred differences through six steps lose a few digits).

# %%
dq, dlogp = rng.normal(size=q.shape), rng.normal(size=logp.shape)


def loss():
    q, logp, _, _ = rollout_forward(ctrl, obs_seq, resets, state0)
    return float(np.sum(q * dq) + np.sum(logp * dlogp))


with skip_if_stub():
    grads, dstate0 = bptt.backward(ctrl, caches, dq, dlogp)
    checked = ["q.w", "sym.b", "extra.w", "core0.wh", "core0.whh", "embed.b"] if FAST else list(ctrl.params)
    report = check_gradients(loss, dict({k: ctrl.params[k] for k in checked}, h0=state0[0][0]),
                             dict({k: grads[k] for k in checked}, h0=dstate0[0][0]))
    for name, err in report["errors"].items():
        print(f"{name:10s} relative error {err:.1e}")
    print(format_report(report))
    assert max(report["errors"].values()) < 1e-5

# %% [markdown]
# ## One step at a time
# `Controller.step_backward` runs the same parts for one step.  Going back
# from the last step to the first, carrying the state's gradient and cutting
# it at the barrier, the sum of its gradients is `bptt.backward`'s.
# Expected: a largest difference around 1e-15.

# %%
with skip_if_stub():
    total, dstate = {k: np.zeros_like(v) for k, v in ctrl.params.items()}, [(np.zeros_like(state0[0][0]),)]
    for t in range(T - 1, -1, -1):
        step_grads, dstate = ctrl.step_backward(dq[t], dlogp[t], dstate, caches[t])
        for k, g in step_grads.items():
            total[k] += g
        if caches[t].keep is not None:
            dstate = [tuple(a * caches[t].keep for a in s) for s in dstate]
    gap = max(float(np.abs(total[k] - grads[k]).max()) for k in grads)
    print(f"largest difference from bptt.backward: {gap:.1e}")
    assert gap < 1e-10 and np.allclose(dstate[0][0], dstate0[0][0])

# %% [markdown]
# ## The episode barrier
# Keep only the losses of the steps after each lane's first reset (all steps of
# a lane that never restarts): a lane that restarted gets exactly zero gradient
# on its initial state (the losses it still has belong to another episode); the
# last lane, which never restarts, gets a non-zero one.

# %%
with skip_if_stub():
    first = np.where(resets.any(axis=0), resets.argmax(axis=0), T)      # each lane's first reset (T: none)
    after = (np.arange(T)[:, None] >= first[None, :]) | (first == T)[None, :]      # all steps if none
    _, d0 = bptt.backward(ctrl, caches, dq * after[..., None], dlogp * after[..., None])
    norms = np.linalg.norm(d0[0][0], axis=1)
    print("first reset per lane:", first.tolist(), " |d h0| per lane:", np.round(norms, 4).tolist())
    assert all(norms[b] == 0.0 for b in range(B) if first[b] < T)
    assert first[B - 1] == T and norms[B - 1] > 1e-3

# %% [markdown]
# Remove the barrier from the backward pass only (caches with `keep=None`): the
# gradient of the initial state no longer matches centred differences of the
# forward pass, which still zeroes the state at a reset.

# %%
with skip_if_stub():
    leaky = [c._replace(keep=None) for c in caches]
    _, d_leaky = bptt.backward(ctrl, leaky, dq, dlogp)
    wrong = check_gradients(loss, {"h0": state0[0][0]}, {"h0": d_leaky[0][0]})["errors"]["h0"]
    print(f"without the barrier: h0 relative error {wrong:.2e}")
    assert wrong > 1e-3

# %% [markdown]
# ## Exercises
# * `tinyalgo assignment make controller_backward --out hw` stubs
#   `Controller.step_backward`: the pairs of `tinyalgo.layers` and the core's
#   step backward, in the reverse order of `step` (both heads read the tanh
#   output t: their gradients add up).
# * `tinyalgo assignment make bptt --out hw` stubs `tinyalgo.bptt.backward`:
#   the loop over the caches with the barrier.  Its grading test
#   `test_episode_barrier` is the cell above.
# * Then `tinyalgo assignment grade hw` scores your work (8 points for bptt).
