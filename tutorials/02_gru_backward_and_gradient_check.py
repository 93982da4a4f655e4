# %% [markdown]
# # Tutorial 2: a GRU step, its backward pass, and a gradient check
#
# The controller's core is a GRU in the release's convention (paper section 4;
# REFERENCE 3.2): the reset gate multiplies h *before* the recurrent matrix.
#
#     z  = sigmoid(x W_xz + h W_hz + b)      r = sigmoid(x W_xr + h W_hr + b)
#     h~ = tanh(x W_xh + (r * h) W_hh + b)    h' = z * h~ + (1 - z) * h
#
# An assignment: write `my_gru_step_backward` below (the stub returns zeros),
# then run this file: the gradient check tells you which gradient is wrong.
# `tinyalgo.cores.gru_step_backward` is the reference answer.

# %%
import numpy as np

from tinyalgo.cores import core_param_shapes, gru_step_backward, gru_step_forward
from tinyalgo.gradcheck import check_gradients, format_report, rel_error

rng = np.random.default_rng(0)
B, D, H = 3, 4, 5
params = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes("gru", D, H).items()}
x, h = rng.normal(size=(B, D)), rng.normal(size=(B, H))     # random input AND random initial state
dout = rng.normal(size=(B, H))                              # upstream gradient on h'
print({k: v.shape for k, v in params.items()})

# %% [markdown]
# ## The analytic gradient (the reference implementation)

# %%
h_new, cache = gru_step_forward(x, h, params)
dx, dh, grads = gru_step_backward(dout, cache)

# %% [markdown]
# ## The numerical gradient
# Centred differences of the scalar sum(h' * dout): perturb each entry by
# +-1e-5, measure, restore.  The relative error
# max(|a - b| / max(1e-8, |a| + |b|)) should be around 1e-8 or smaller.

# %%
def loss():
    return float(np.sum(gru_step_forward(x, h, params)[0] * dout))


report = check_gradients(loss, dict(params, x=x, h=h), dict(grads, x=dx, h=dh))
for name, err in report["errors"].items():
    print(f"{name:4s} relative error {err:.2e}")
print(format_report(report))
assert max(report["errors"].values()) < 1e-6

# %% [markdown]
# ## Your turn
# Fill in the body; each line of the forward pass has one line here.

# %%
def my_gru_step_backward(dh_new, cache):
    x, h, z, r, rh, c, p = cache
    # TODO: replace these zeros with the real gradients
    return np.zeros_like(x), np.zeros_like(h), {k: np.zeros_like(v) for k, v in p.items()}


mine_dx, mine_dh, mine = my_gru_step_backward(dout, cache)
errors = {k: rel_error(mine[k], grads[k]) for k in grads}
errors.update(x=rel_error(mine_dx, dx), h=rel_error(mine_dh, dh))
print("your backward pass:", "all correct" if max(errors.values()) < 1e-7 else
      "wrong: " + ", ".join(k for k, e in errors.items() if e >= 1e-7))
