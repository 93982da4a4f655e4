# %% [markdown]
# # Tutorial 2: a GRU step, its backward pass, and a gradient check
#
# The controller's core is a GRU in the original release's convention (paper
# section 2; docs/original-release.md#cores): the reset gate multiplies h *before* the recurrent matrix.
#
#     z  = sigmoid(x W_xz + h W_hz + b)      r = sigmoid(x W_xr + h W_hr + b)
#     h~ = tanh(x W_xh + (r * h) W_hh + b)    h' = z * h~ + (1 - z) * h
#
# `tinyalgo.cores.gru_step_forward` returns h' and a cache (`GRUCache`, its
# fields named x, h, z, r, rh, cand, p); `gru_step_backward(dh', cache)` returns
# the gradients on x, on h and on every parameter, in two parts:
# `gru_state_backward` (to the gates' pre-activations and the entering state)
# and `gru_weights_backward` (dW = X^T dZ).  These are the functions that
# `tinyalgo train` trains the controller with: the last cell shows it.
#
# What you should see: every relative error below 1e-6 (about 1e-9 to 1e-11),
# your own backward pass checked the same way (as given, zeros: wrong for every
# array), training calling `gru_state_backward` once per step of a rollout
# and `gru_weights_backward` once for all its steps, then the same checks passing for the affine, tanh and log-softmax
# pairs, the NLL loss worked by hand (-log 0.25 = 1.386294) and the LSTM step.
# In an assignment's copy, a cell that needs a function you have not written
# yet says so (`with skip_if_stub():`) and the tutorial goes on.

# %%
import numpy as np

from tinyalgo import controller as controller_module
from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.cores import core_param_shapes, gru_state_backward, gru_step_backward, gru_step_forward
from tinyalgo.gradcheck import check_gradients, format_report
from tinyalgo.assignments.tutorial import skip_if_stub

rng = np.random.default_rng(0)
B, D, H = 3, 4, 5
params = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes("gru", D, H).items()}   # random biases too
x, h = rng.normal(size=(B, D)), rng.normal(size=(B, H))     # random input AND random initial state
dout = rng.normal(size=(B, H))                              # upstream gradient on h'
print({k: v.shape for k, v in params.items()})

# %% [markdown]
# ## The analytic gradient

# %%
h_new, cache = gru_step_forward(x, h, params)
print("cache fields:", cache._fields)
with skip_if_stub():
    dx, dh, grads = gru_step_backward(dout, cache)

# %% [markdown]
# ## The numerical gradient
# Centred differences of the scalar sum(h' * dout): perturb each entry by
# +-1e-5, measure, restore.  The relative error of an array (or of a gate's
# block of it), max|a - b| / max(1e-8, max(|a| + |b|)), should be around 1e-8 or smaller.

# %%
def loss():
    return float(np.sum(gru_step_forward(x, h, params)[0] * dout))


def gradient_check(backward):
    """The worst relative error per array of ``backward``'s gradients against centred differences."""
    bx, bh, bgrads = backward(dout, gru_step_forward(x, h, params)[1])
    return check_gradients(loss, dict(params, x=x, h=h), dict(bgrads, x=bx, h=bh))


# %%
with skip_if_stub():
    report = gradient_check(gru_step_backward)
    for name, err in report["errors"].items():
        print(f"{name:4s} relative error {err:.2e}")
    print(format_report(report))
    assert max(report["errors"].values()) < 1e-6

# %% [markdown]
# ## Your turn
# Fill in the body of `my_gru_step_backward`; each line of the forward pass has
# one line here.  The gradient check, not a copy of the answer, says which
# gradient is wrong.  As given, the body returns zeros, and the check finds
# every array wrong; run the cell again after each change until it finds none.

# %%
def my_gru_step_backward(dh_new, cache):
    x, h, z, r, rh, cand, p = cache
    # TODO: replace these zeros with the real gradients
    return np.zeros_like(x), np.zeros_like(h), {k: np.zeros_like(v) for k, v in p.items()}


mine = gradient_check(my_gru_step_backward)["errors"]
wrong = sorted(k for k, e in mine.items() if e >= 1e-6)
mine_dx, mine_dh, mine_grads = my_gru_step_backward(dout, gru_step_forward(x, h, params)[1])
if not any(np.any(g) for g in (mine_dx, mine_dh, *mine_grads.values())):
    print("your backward pass returns zeros, and the check finds every array wrong:", ", ".join(wrong))
    print("write the body of my_gru_step_backward and run this cell again")
    assert wrong == sorted(mine)                # zeros are wrong for every array: the check can fail
elif wrong:
    print("your backward pass is wrong for", ", ".join(wrong), "- right for",
          ", ".join(sorted(set(mine) - set(wrong))) or "none")
else:
    print(f"your backward pass: all correct (worst relative error {max(mine.values()):.1e})")

# %% [markdown]
# ## The same functions train the controller
# A controller steps with `gru_step_forward` and backpropagates through time
# (`tinyalgo.bptt`) with the two parts of `gru_step_backward`: the state part
# once per step, from the last to the first, then the weights part once, on
# the T steps' caches stacked (dW = X^T dZ sums over the steps).  Count the
# calls over a rollout of T = 6 steps.

# %%
calls = []


def counting_backward(dh_new, cache, wt=None):
    calls.append(dh_new.shape)
    return gru_state_backward(dh_new, cache, wt=wt)


with skip_if_stub():
    controller_module.gru_state_backward, taught = counting_backward, controller_module.gru_state_backward
    try:
        ctrl = Controller(ControllerConfig((5, 5, 2, 5, 3), n_actions=8, n_symbols=5, units=H),
                          rng=np.random.default_rng(1))
        T, state, rollout = 6, ctrl.initial_state(B), ctrl.rollout()
        for _t in range(T):
            obs = np.stack([rng.integers(0, s, size=B) for s in (5, 5, 2, 5, 3)], axis=1)
            q, scores, state = rollout.step(obs, state)
        rollout.backward(rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 5)))
    finally:
        controller_module.gru_state_backward = taught
    print(f"gru_state_backward called {len(calls)} times for {T} steps")
    assert len(calls) == T

# %% [markdown]
# ## The other pairs: affine, tanh, log-softmax
# Every layer of the controller is a `*_forward -> (out, cache)` /
# `*_backward(dout, cache)` pair in `tinyalgo.layers`, and the same check
# applies.  Expected: relative errors below 1e-7.

# %%
from tinyalgo.layers import (affine_backward, affine_forward, log_softmax_backward, log_softmax_forward,
                             nll_loss, tanh_backward, tanh_forward)

with skip_if_stub():
    a_x, a_w, a_b, a_d = rng.normal(size=(B, D)), rng.normal(size=(D, H)), rng.normal(size=H), rng.normal(size=(B, H))
    ax_, aw_, ab_ = affine_backward(a_d, affine_forward(a_x, a_w, a_b)[1])
    t_d, s_d = rng.normal(size=(B, D)), rng.normal(size=(D, H))      # upstream gradients of tanh and log-softmax
    pairs = {
        "affine": check_gradients(lambda: float(np.sum(affine_forward(a_x, a_w, a_b)[0] * a_d)),
                                  {"x": a_x, "w": a_w, "b": a_b}, {"x": ax_, "w": aw_, "b": ab_}),
        "tanh": check_gradients(lambda: float(np.sum(tanh_forward(a_x)[0] * t_d)),
                                {"x": a_x}, {"x": tanh_backward(t_d, tanh_forward(a_x)[1])}),
        "log_softmax": check_gradients(lambda: float(np.sum(log_softmax_forward(a_w)[0] * s_d)),
                                       {"x": a_w}, {"x": log_softmax_backward(s_d, log_softmax_forward(a_w)[1])}),
    }
    for name, rep in pairs.items():
        print(f"{name:12s} worst relative error {max(rep['errors'].values()):.1e}")
        assert max(rep["errors"].values()) < 1e-7, name

# %% [markdown]
# The symbol head's loss is the negative log-likelihood of the target symbol.
# By hand: with p = (0.5, 0.25, 0.25) and target 1 the loss is -log 0.25 =
# 1.386294, and dloss/dlogp is -1 at the target, 0 elsewhere.

# %%
with skip_if_stub():
    nll, dlogp = nll_loss(np.log([[0.5, 0.25, 0.25]]), np.array([1]))
    print(f"nll {nll:.6f}, dlogp {dlogp.tolist()}")
    assert abs(nll - 1.386294) < 1e-6 and dlogp.tolist() == [[0.0, -1.0, 0.0]]

# %% [markdown]
# ## The LSTM step
# `lstm_step_forward(x, h, c, p)` returns h', c' and an `LSTMCache`;
# `lstm_step_backward(dh', dc', cache)` the gradients on x, h, c and the
# parameters.  The loss now reads both outputs; c gets a random initial value
# too.  Expected: every relative error below 1e-6.

# %%
from tinyalgo.cores import lstm_step_backward, lstm_step_forward

lp = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes("lstm", D, H).items()}
c = rng.normal(size=(B, H))
dc_out = rng.normal(size=(B, H))


def lstm_loss():
    h2, c2, _ = lstm_step_forward(x, h, c, lp)
    return float(np.sum(h2 * dout) + np.sum(c2 * dc_out))


with skip_if_stub():
    ldx, ldh, ldc, lgrads = lstm_step_backward(dout, dc_out, lstm_step_forward(x, h, c, lp)[2])
    lstm_report = check_gradients(lstm_loss, dict(lp, x=x, h=h, c=c), dict(lgrads, x=ldx, h=ldh, c=ldc))
    print(format_report(lstm_report))
    assert max(lstm_report["errors"].values()) < 1e-6

# %% [markdown]
# ## Exercises
# Each is an assignment the package makes for you (`tinyalgo assignment list`):
# `tinyalgo assignment make gru_backward --out hw` writes a copy of tinyalgo in
# which `gru_step_backward` raises `NotImplementedError`, with its grading tests
# (gradient checks that name the wrong gate block, e.g. `wx[z]`);
# `tinyalgo assignment grade hw` scores it.
# * `layers` (affine and tanh backward, 8 points) and `softmax_nll`
#   (log-softmax backward and the NLL loss, 7 points);
# * `gru_backward` (8 points) and `lstm_backward` (8 points).
# Once yours pass, `tinyalgo train` in your copy trains with them.
