"""Grading "lstm_backward": lstm_step_backward against the reference, with random biases and
states, on shapes and values drawn at grading time; fused matrices are reported per gate
block (wx[i], wx[f], wx[o], wx[g], ...)."""
from tinyalgo import cores as ref
from tinyalgo.assignments.grading.checks import LSTM_BLOCKS, compare, parts, random_params, sizes


def draw(g, B, D, H):
    p = random_params(ref.core_param_shapes("lstm", D, H), g.rng)
    n = g.rng.normal
    return p, n(size=(B, D)), n(size=(B, H)), n(size=(B, H)), n(size=(B, H)), n(size=(B, H))


def step(g, p, x, h, c, dh, dc, timed=False):
    """The student's (dx, dh, dc, grads) of one step, and the reference's."""
    cache = ref.lstm_step_forward(x, h, c, p)[2]
    args = dict(x=x, h=h, c=c, p=p, dh=dh, dc=dc)
    got = g.timed("lstm_step_backward", lambda: ref.lstm_step_backward(dh, dc, cache), **args) if timed else \
        g.call("lstm_step_backward", **args)
    return parts("lstm_step_backward", got, 4), ref.lstm_step_backward(dh, dc, cache)


def at_size(g):
    """One step at B, D, H = 16, 32, 64, timed against the reference: every gradient compared."""
    (dx, dh, dc, grads), (ex, eh, ec, expected) = step(g, *draw(g, 16, 32, 64), timed=True)
    compare("lstm_step_backward (B, D, H = 16, 32, 64)", dict(grads, x=dx, h=dh, c=dc),
            dict(expected, x=ex, h=eh, c=ec), LSTM_BLOCKS)


def test_lstm_step_parameter_gradients(g):
    for _ in range(2):
        args = draw(g, *sizes(g.rng, 2, 6))
        (*_, grads), (*_, expected) = step(g, *args)
        compare("lstm_step_backward, parameters", grads, expected, LSTM_BLOCKS)
    at_size(g)


def test_lstm_step_input_and_state_gradients(g):
    for _ in range(2):
        (dx, dh, dc, _), (ex, eh, ec, _) = step(g, *draw(g, *sizes(g.rng, 2, 6)))
        compare("lstm_step_backward, input x and states h, c", {"x": dx, "h": dh, "c": dc},
                {"x": ex, "h": eh, "c": ec})
    at_size(g)


def test_lstm_three_steps(g):
    """T >= 3 steps, B >= 2 lanes: the state gradients the student returns are carried back by the grader."""
    T = int(g.rng.integers(3, 6))
    B, D, H = sizes(g.rng, 2, 5)
    p = random_params(ref.core_param_shapes("lstm", D, H), g.rng)
    xs = g.rng.normal(size=(T, B, D))
    states = [(g.rng.normal(size=(B, H)), g.rng.normal(size=(B, H)))]
    for t in range(T):
        h, c, _ = ref.lstm_step_forward(xs[t], *states[-1], p)
        states.append((h, c))
    dhs, dcs = g.rng.normal(size=(T, B, H)), g.rng.normal(size=(T, B, H))
    sh, sc, rh, rc = (0.0 * states[0][0] for _ in range(4))
    for t in range(T - 1, -1, -1):
        (dx, sh, sc, grads), _ = step(g, p, xs[t], *states[t], dhs[t] + sh, dcs[t] + sc)
        ex, rh, rc, expected = ref.lstm_step_backward(dhs[t] + rh, dcs[t] + rc,
                                                      ref.lstm_step_forward(xs[t], *states[t], p)[2])
        compare(f"lstm_step_backward over {T} steps, step {t}", dict(grads, x=dx, h=sh, c=sc),
                dict(expected, x=ex, h=rh, c=rc), LSTM_BLOCKS)
    at_size(g)
