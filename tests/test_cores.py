"""Gradient checks of each core's step, over several steps and lanes, with
random biases and random initial states; the GRU's release convention."""
import numpy as np
import pytest

from tinyalgo.cores import (core_param_shapes, gru_step_backward, gru_step_forward, lstm_step_backward,
                            lstm_step_forward)
from tinyalgo.gradcheck import GATE_BLOCKS, TOLERANCE, check_gradients, format_report
from tinyalgo.layers import sigmoid

CASES = [(int(B), int(D), int(H), int(T)) for B, D, H, T in np.random.default_rng(0).integers(2, 6, size=(5, 4))]


def random_params(core, D, H, rng):
    return {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes(core, D, H).items()}


@pytest.mark.gradcheck
@pytest.mark.parametrize("B,D,H,T", CASES)
def test_gru_over_several_steps(B, D, H, T):
    rng = np.random.default_rng(B + 10 * D + 100 * H + 1000 * T)
    p, h0, xs = random_params("gru", D, H, rng), rng.normal(size=(B, H)), rng.normal(size=(T, B, D))
    weights = rng.normal(size=(T, B, H))

    def unroll():
        h, caches, out = h0, [], 0.0
        for t in range(T):
            h, cache = gru_step_forward(xs[t], h, p)
            caches.append(cache)
            out += np.sum(h * weights[t])
        return out, caches

    _, caches = unroll()
    grads, dxs, dh = {k: np.zeros_like(v) for k, v in p.items()}, np.zeros_like(xs), np.zeros((B, H))
    for t in range(T - 1, -1, -1):
        dxs[t], dh, g = gru_step_backward(weights[t] + dh, caches[t])
        for k in g:
            grads[k] += g[k]
    report = check_gradients(lambda: unroll()[0], dict(p, h0=h0, xs=xs), dict(grads, h0=dh, xs=dxs),
                             blocks=GATE_BLOCKS["gru"])
    assert max(report["errors"].values()) < TOLERANCE, ((B, D, H, T), format_report(report))


@pytest.mark.gradcheck
@pytest.mark.parametrize("B,D,H,T", CASES)
def test_lstm_over_several_steps(B, D, H, T):
    rng = np.random.default_rng(7 + B + 10 * D + 100 * H + 1000 * T)
    p = random_params("lstm", D, H, rng)
    h0, c0, xs = rng.normal(size=(B, H)), rng.normal(size=(B, H)), rng.normal(size=(T, B, D))
    wh, wc = rng.normal(size=(T, B, H)), rng.normal(size=(T, B, H))

    def unroll():
        h, c, caches, out = h0, c0, [], 0.0
        for t in range(T):
            h, c, cache = lstm_step_forward(xs[t], h, c, p)
            caches.append(cache)
            out += np.sum(h * wh[t]) + np.sum(c * wc[t])
        return out, caches

    _, caches = unroll()
    grads, dxs = {k: np.zeros_like(v) for k, v in p.items()}, np.zeros_like(xs)
    dh, dc = np.zeros((B, H)), np.zeros((B, H))
    for t in range(T - 1, -1, -1):
        dxs[t], dh, dc, g = lstm_step_backward(wh[t] + dh, wc[t] + dc, caches[t])
        for k in g:
            grads[k] += g[k]
    report = check_gradients(lambda: unroll()[0], dict(p, h0=h0, c0=c0, xs=xs), dict(grads, h0=dh, c0=dc, xs=dxs),
                             blocks=GATE_BLOCKS["lstm"])
    assert max(report["errors"].values()) < TOLERANCE, ((B, D, H, T), format_report(report))


def test_gru_follows_the_release_convention():
    """h' = z*h~ + (1-z)*h with r applied to h before W_hh, written out by hand."""
    rng = np.random.default_rng(1)
    D, H = 3, 4
    p, x, h = random_params("gru", D, H, rng), rng.normal(size=(2, D)), rng.normal(size=(2, H))
    Wxz, Wxr, Wxh = np.split(p["wx"], 3, axis=1)
    bxz, bxr, bxh = np.split(p["bx"], 3)
    Whz, Whr = np.split(p["wh"], 2, axis=1)
    bhz, bhr = np.split(p["bh"], 2)
    z = sigmoid(x @ Wxz + bxz + h @ Whz + bhz)
    r = sigmoid(x @ Wxr + bxr + h @ Whr + bhr)
    cand = np.tanh(x @ Wxh + bxh + (r * h) @ p["whh"] + p["bhh"])
    np.testing.assert_allclose(gru_step_forward(x, h, p)[0], z * cand + (1 - z) * h)
