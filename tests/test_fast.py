"""Every speed path equals the taught path it replaces, in float64, over
several steps with episode resets: the fast cores against ``tinyalgo.cores``,
the fast step (fold, buffers, raw scores) against ``Controller.step``, the
fast BPTT (one thread and two) against ``tinyalgo.bptt``, and the frozen
inference against ``Controller.infer``."""
import numpy as np
import pytest

from test_controller import CASES, make, random_rollout
from tinyalgo import cores
from tinyalgo.controller import Controller, rollout_forward
from tinyalgo.fast import controller as fast_controller
from tinyalgo.fast import cores as fast_cores
from tinyalgo.fast.buffers import StepBuffers

TIGHT = dict(rtol=1e-10, atol=1e-12)


def assert_same(a, b, what, tol=TIGHT):
    if isinstance(a, dict):
        assert set(a) == set(b), what
        for k in a:
            np.testing.assert_allclose(b[k], a[k], err_msg=f"{what}: {k}", **tol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{what}[{i}]", tol)
    else:
        np.testing.assert_allclose(b, a, err_msg=what, **tol)


def random_core(core, B, D, H, rng):
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in cores.core_param_shapes(core, D, H).items()}
    return p, rng.normal(size=(B, D)), rng.normal(size=(B, H)), rng.normal(size=(B, H))


@pytest.mark.parametrize("B,D,H", [(2, 3, 4), (5, 4, 3)])
def test_fast_gru_step_equals_the_reference(B, D, H):
    rng = np.random.default_rng(B * D * H)
    p, x, h, dh_new = random_core("gru", B, D, H, rng)
    want, ref = cores.gru_step_forward(x, h, p)
    ax = x @ p["wx"] + p["bx"] + np.concatenate([p["bh"], p["bhh"]])    # what a fold gathers
    out = tuple(np.empty((B, w)) for w in (2 * H, H, H, H))
    for kwargs in (dict(), dict(ax=ax, biases_in_ax=True), dict(blocks=fast_cores.gate_columns(p["wh"], H), out=out)):
        got, cache = fast_cores.gru_step_forward(x, h, p, **kwargs)
        assert_same(want, got, f"h' with {sorted(kwargs)}")
        assert_same(ref[:6], cache[:6], f"cache with {sorted(kwargs)}")
    dx, dh, grads = cores.gru_step_backward(dh_new, ref)
    factors = fast_cores.gru_backward_factors(*(a[None] for a in (ref.z, ref.r, ref.h, ref.rh, ref.cand)))
    dax = np.empty((B, 3 * H))
    fdx, fdh = fast_cores.gru_step_backward_factored(dh_new, [f[0] for f in factors], dax,
                                                     fast_cores.transposed(p))
    assert_same((dx, dh), (fdx, fdh), "dx, dh")
    assert_same(grads["wx"], x.T @ dax, "wx from the pre-activation gradients")
    assert_same(grads["wh"], h.T @ dax[:, :2 * H], "wh")
    assert_same(grads["whh"], ref.rh.T @ dax[:, 2 * H:], "whh")


@pytest.mark.parametrize("B,D,H", [(2, 3, 4), (5, 4, 3)])
def test_fast_lstm_step_equals_the_reference(B, D, H):
    rng = np.random.default_rng(B + D + H)
    p, x, h, c = random_core("lstm", B, D, H, rng)
    dh_new, dc_new = rng.normal(size=(B, H)), rng.normal(size=(B, H))
    h1, c1, ref = cores.lstm_step_forward(x, h, c, p)
    ax = x @ p["wx"] + p["bx"] + p["bh"]
    for kwargs in (dict(), dict(ax=ax, biases_in_ax=True), dict(blocks=fast_cores.gate_columns(p["wh"], H))):
        h2, c2, cache = fast_cores.lstm_step_forward(x, h, c, p, **kwargs)
        assert_same((h1, c1), (h2, c2), f"h', c' with {sorted(kwargs)}")
    dx, dh, dc, grads = cores.lstm_step_backward(dh_new, dc_new, ref)
    fdx, fdh, fdc, da = fast_cores.lstm_step_backward_pre(dh_new, dc_new, cache, wt=fast_cores.transposed(p))
    assert_same((dx, dh, dc), (fdx, fdh, fdc), "dx, dh, dc")
    assert_same(grads["wx"], x.T @ da, "wx from the pre-activation gradients")


def fast_rollout(ctrl, obs, resets, state0, fold=None, buffers=None, logits=False):
    outputs, caches, state = [], [], state0
    for t in range(len(obs)):
        q, logp, state, cache = fast_controller.step(ctrl, obs[t], state, resets[t], fold=fold, buffers=buffers,
                                                     logits=logits)
        outputs.append((q, logp))
        caches.append(cache)
    return outputs, caches, state


def log_softmax(scores):
    return scores - scores.max(1, keepdims=True) - np.log(np.exp(scores - scores.max(1, keepdims=True)).sum(1,
                                                                                                        keepdims=True))


@pytest.mark.parametrize("core,layers", CASES)
@pytest.mark.parametrize("variant", ["plain", "fold", "fold+buffers+scores"])
@pytest.mark.parametrize("threads", [1, 2])
def test_fast_rollout_equals_the_reference(core, layers, variant, threads):
    """Outputs, parameter gradients and the initial state's gradient of a
    rollout with resets (one lane at step 2, two at step 9, all at step 14)."""
    rng = np.random.default_rng(len(variant) + 7 * layers)
    ctrl = make(core, layers, units=6, seed=3)
    T, B = 23, 3                                   # three chunks of the two-thread BPTT: 10, 10, 3 steps
    obs, _, state0 = random_rollout(ctrl, T, B, rng)
    resets = np.zeros((T, B), bool)
    resets[2, 0] = resets[9, 1:] = resets[14] = True
    dq, dlogp = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    q, logp, ref_caches, ref_state = rollout_forward(ctrl, obs, resets, state0)
    ref_grads, ref_dstate0 = ctrl.backward(ref_caches, dq, dlogp)

    fold = None if variant == "plain" else ctrl.frozen()
    buffers = StepBuffers(T, B, 6, len(ctrl.layers()), ctrl.dtype, gru=core == "gru") if "buffers" in variant else None
    outputs, caches, state = fast_rollout(ctrl, obs, resets, state0, fold, buffers, logits="scores" in variant)
    for t, (qt, lt) in enumerate(outputs):
        assert_same(q[t], qt, f"q at step {t}")
        assert_same(logp[t], log_softmax(lt) if "scores" in variant else lt, f"logp at step {t}")
    assert_same(ref_state, state, "final state")
    ctrl.set_threads(threads)
    grads, dstate0 = fast_controller.fast_bptt.backward(ctrl, caches, dq, dlogp)
    ctrl.set_threads(1)
    assert_same(ref_grads, grads, "gradients")
    assert_same(ref_dstate0, dstate0, "gradient on the initial state")


@pytest.mark.parametrize("core,layers", CASES)
def test_rollout_objects_of_both_paths_agree(core, layers):
    """``Controller.rollout`` on the fast and the reference path: the same
    actions, symbol distributions, gradients (what the training loops use)."""
    rng = np.random.default_rng(11)
    fast = make(core, layers, units=6, seed=4)
    ref = Controller(fast.config, params=fast.params, reference=True)
    T, B = 7, 3
    obs, resets, state0 = random_rollout(fast, T, B, rng)
    dq, dlogp = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    results = []
    for ctrl in (ref, fast):
        rollout, state, outs = ctrl.rollout(T, B), state0, []
        for t in range(T):
            q, scores, state = rollout.step(obs[t], state, resets[t])
            outs.append((q, log_softmax(scores)))
        outs.append(rollout.infer(obs[0], state, resets[0])[:2])
        results.append((outs, rollout.backward(dq, dlogp)))
    assert_same(results[0], results[1], "reference vs fast rollout")
    assert isinstance(fast.frozen(), fast_controller.FastRollout(fast, 1, 1).fold.__class__)
    assert ref.frozen() is ref


@pytest.mark.parametrize("core,layers", CASES)
def test_frozen_inference_equals_infer(core, layers):
    rng = np.random.default_rng(4)
    ctrl = make(core, layers, units=7)
    obs, resets, _ = random_rollout(ctrl, 6, 4, rng)
    frozen = ctrl.frozen()
    s1, s2 = ctrl.initial_state(4), frozen.initial_state(4)
    for t in range(6):
        q1, l1, s1 = ctrl.infer(obs[t], s1, resets[t])
        q2, l2, s2 = frozen.infer(obs[t], s2, resets[t])
        assert_same((q1, l1, s1), (q2, l2, s2), f"step {t}")


def test_partly_covered_buffers_and_mixed_caches():
    """BPTT over a tail of a buffered rollout stacks the caches (the buffers
    do not cover it) and still equals the reference; caches mixing raw
    scores and log-probabilities, and a buffer past its T steps, are refused."""
    rng = np.random.default_rng(9)
    ctrl = make("gru", 2, units=6)
    obs, resets, state0 = random_rollout(ctrl, 5, 3, rng)
    dq, dlogp = rng.normal(size=(5, 3, 8)), rng.normal(size=(5, 3, 6))
    buffers = StepBuffers(5, 3, 6, 2, ctrl.dtype, gru=True)
    _, caches, _ = fast_rollout(ctrl, obs, resets, state0, ctrl.frozen(), buffers)
    _, ref_caches, _ = fast_rollout(ctrl, obs, resets, state0)
    assert buffers.covers(caches) and not buffers.covers(caches[1:])
    assert_same(fast_controller.fast_bptt.backward(ctrl, ref_caches[1:], dq[1:], dlogp[1:]),
                fast_controller.fast_bptt.backward(ctrl, caches[1:], dq[1:], dlogp[1:]), "tail")
    _, scored, _ = fast_rollout(ctrl, obs, resets, state0, logits=True)
    with pytest.raises(ValueError, match="mix logits=True and logits=False"):
        fast_controller.fast_bptt.backward(ctrl, ref_caches[:2] + scored[2:], dq, dlogp)
    with pytest.raises(ValueError, match="these StepBuffers hold 5 steps"):
        fast_controller.step(ctrl, obs[0], ctrl.initial_state(3), buffers=buffers)


def test_threads_are_checked():
    with pytest.raises(ValueError, match="threads must be 1 or 2; got 3"):
        make("gru", 1).set_threads(3)
