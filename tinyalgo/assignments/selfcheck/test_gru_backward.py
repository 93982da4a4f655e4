"""Assignment "gru_backward": gru_step_backward (tinyalgo/cores.py; tutorial 02).

Every gradient is checked against centred differences of gru_step_forward,
in float64, with random biases and a random initial state; fused matrices
are reported per gate block (wx[z], wx[r], wx[h~], ...)."""
import numpy as np

from grading import GRU_BLOCKS, assert_gradients, gradient_errors, random_params
from tinyalgo.cores import core_param_shapes, gru_step_backward, gru_step_forward

B, D, H = 3, 4, 5


def setup(seed):
    rng = np.random.default_rng(seed)
    p = random_params(core_param_shapes("gru", D, H), rng)
    return p, rng.normal(size=(B, D)), rng.normal(size=(B, H)), rng.normal(size=(B, H))


def test_gru_step_parameter_gradients():
    p, x, h, dout = setup(10)
    _, _, grads = gru_step_backward(dout, gru_step_forward(x, h, p)[1])
    errors = gradient_errors(lambda: float(np.sum(gru_step_forward(x, h, p)[0] * dout)), p, grads, GRU_BLOCKS)
    assert_gradients("gru_step_backward, parameters", errors)


def test_gru_step_input_and_state_gradients():
    p, x, h, dout = setup(11)
    dx, dh, _ = gru_step_backward(dout, gru_step_forward(x, h, p)[1])
    errors = gradient_errors(lambda: float(np.sum(gru_step_forward(x, h, p)[0] * dout)),
                             {"x": x, "h": h}, {"x": dx, "h": dh})
    assert_gradients("gru_step_backward, input x and state h", errors)


def test_gru_three_steps():
    """T = 3 steps, B = 2 lanes: the state gradient carried back from step to step."""
    rng = np.random.default_rng(12)
    T, B2 = 3, 2
    p = random_params(core_param_shapes("gru", D, H), rng)
    xs, h0, douts = rng.normal(size=(T, B2, D)), rng.normal(size=(B2, H)), rng.normal(size=(T, B2, H))

    def loss():
        h, total = h0, 0.0
        for t in range(T):
            h = gru_step_forward(xs[t], h, p)[0]
            total += float(np.sum(h * douts[t]))
        return total

    caches, h = [], h0
    for t in range(T):
        h, cache = gru_step_forward(xs[t], h, p)
        caches.append(cache)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    dxs, dh = np.zeros_like(xs), np.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        dxs[t], dh, g = gru_step_backward(douts[t] + dh, caches[t])
        for k in grads:
            grads[k] += g[k]
    errors = gradient_errors(loss, dict(p, xs=xs, h0=h0), dict(grads, xs=dxs, h0=dh), GRU_BLOCKS)
    assert_gradients("gru_step_backward over 3 steps", errors)
