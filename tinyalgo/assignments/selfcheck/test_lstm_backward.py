"""Assignment "lstm_backward": lstm_step_backward (tinyalgo/cores.py; tutorial 02).

Every gradient is checked against centred differences of lstm_step_forward,
in float64, with random biases and random initial states h and c; fused
matrices are reported per gate block (wx[i], wx[f], wx[o], wx[g], ...)."""
import numpy as np

from grading import LSTM_BLOCKS, assert_gradients, gradient_errors, random_params
from tinyalgo.cores import core_param_shapes, lstm_step_backward, lstm_step_forward

B, D, H = 3, 4, 5


def setup(seed):
    rng = np.random.default_rng(seed)
    p = random_params(core_param_shapes("lstm", D, H), rng)
    x, h, c = rng.normal(size=(B, D)), rng.normal(size=(B, H)), rng.normal(size=(B, H))
    return p, x, h, c, rng.normal(size=(B, H)), rng.normal(size=(B, H))


def step_loss(x, h, c, p, dh_out, dc_out):
    h2, c2, _ = lstm_step_forward(x, h, c, p)
    return float(np.sum(h2 * dh_out) + np.sum(c2 * dc_out))


def test_lstm_step_parameter_gradients():
    p, x, h, c, dh_out, dc_out = setup(20)
    *_, grads = lstm_step_backward(dh_out, dc_out, lstm_step_forward(x, h, c, p)[2])
    errors = gradient_errors(lambda: step_loss(x, h, c, p, dh_out, dc_out), p, grads, LSTM_BLOCKS)
    assert_gradients("lstm_step_backward, parameters", errors)


def test_lstm_step_input_and_state_gradients():
    p, x, h, c, dh_out, dc_out = setup(21)
    dx, dh, dc, _ = lstm_step_backward(dh_out, dc_out, lstm_step_forward(x, h, c, p)[2])
    errors = gradient_errors(lambda: step_loss(x, h, c, p, dh_out, dc_out),
                             {"x": x, "h": h, "c": c}, {"x": dx, "h": dh, "c": dc})
    assert_gradients("lstm_step_backward, input x and states h, c", errors)


def test_lstm_three_steps():
    """T = 3 steps, B = 2 lanes: both state gradients carried back from step to step."""
    rng = np.random.default_rng(22)
    T, B2 = 3, 2
    p = random_params(core_param_shapes("lstm", D, H), rng)
    xs, h0, c0 = rng.normal(size=(T, B2, D)), rng.normal(size=(B2, H)), rng.normal(size=(B2, H))
    douts = rng.normal(size=(T, B2, H))

    def loss():
        h, c, total = h0, c0, 0.0
        for t in range(T):
            h, c, _ = lstm_step_forward(xs[t], h, c, p)
            total += float(np.sum(h * douts[t]))
        return total

    caches, h, c = [], h0, c0
    for t in range(T):
        h, c, cache = lstm_step_forward(xs[t], h, c, p)
        caches.append(cache)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    dxs, dh, dc = np.zeros_like(xs), np.zeros_like(h0), np.zeros_like(c0)
    for t in range(T - 1, -1, -1):
        dxs[t], dh, dc, g = lstm_step_backward(douts[t] + dh, dc, caches[t])
        for k in grads:
            grads[k] += g[k]
    errors = gradient_errors(loss, dict(p, xs=xs, h0=h0, c0=c0), dict(grads, xs=dxs, h0=dh, c0=dc), LSTM_BLOCKS)
    assert_gradients("lstm_step_backward over 3 steps", errors)
