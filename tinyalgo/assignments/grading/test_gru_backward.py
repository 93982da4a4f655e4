"""Grading "gru_backward": gru_step_backward against the reference, with random biases and
states, on shapes and values drawn at grading time; fused matrices are reported per gate
block (wx[z], wx[r], wx[h~], ...)."""
from tinyalgo import cores as ref
from tinyalgo.assignments.grading.checks import GRU_BLOCKS, compare, parts, random_params, sizes


def draw(g, B, D, H):
    p = random_params(ref.core_param_shapes("gru", D, H), g.rng)
    return p, g.rng.normal(size=(B, D)), g.rng.normal(size=(B, H)), g.rng.normal(size=(B, H))


def step(g, p, x, h, dout, timed=False):
    """The student's (dx, dh, grads) of one step, checked to be three results."""
    cache = ref.gru_step_forward(x, h, p)[1]
    args = dict(x=x, h=h, p=p, dout=dout)
    got = g.timed("gru_step_backward", lambda: ref.gru_step_backward(dout, cache), **args) if timed else \
        g.call("gru_step_backward", **args)
    return parts("gru_step_backward", got, 3), ref.gru_step_backward(dout, cache)


def at_size(g):
    """One step at B, D, H = 16, 32, 64, timed against the reference: every gradient compared."""
    p, x, h, dout = draw(g, 16, 32, 64)
    (dx, dh, grads), (ex, eh, expected) = step(g, p, x, h, dout, timed=True)
    compare("gru_step_backward (B, D, H = 16, 32, 64)", dict(grads, x=dx, h=dh), dict(expected, x=ex, h=eh),
            GRU_BLOCKS)


def test_gru_step_parameter_gradients(g):
    for _ in range(2):
        p, x, h, dout = draw(g, *sizes(g.rng, 2, 6))
        (_, _, grads), (_, _, expected) = step(g, p, x, h, dout)
        compare(f"gru_step_backward, parameters (B, D, H = {x.shape[0]}, {x.shape[1]}, {h.shape[1]})", grads,
                expected, GRU_BLOCKS)
    at_size(g)


def test_gru_step_input_and_state_gradients(g):
    for _ in range(2):
        p, x, h, dout = draw(g, *sizes(g.rng, 2, 6))
        (dx, dh, _), (ex, eh, _) = step(g, p, x, h, dout)
        compare("gru_step_backward, input x and state h", {"x": dx, "h": dh}, {"x": ex, "h": eh})
    at_size(g)


def test_gru_three_steps(g):
    """T >= 3 steps, B >= 2 lanes: the state gradient the student returns is carried back by the grader."""
    T = int(g.rng.integers(3, 6))
    B, D, H = sizes(g.rng, 2, 5)
    p = random_params(ref.core_param_shapes("gru", D, H), g.rng)
    xs, h = g.rng.normal(size=(T, B, D)), g.rng.normal(size=(B, H))
    hs = [h]
    for t in range(T):
        hs.append(ref.gru_step_forward(xs[t], hs[-1], p)[0])
    douts = g.rng.normal(size=(T, B, H))
    dh_student, dh_ref = 0.0 * h, 0.0 * h
    for t in range(T - 1, -1, -1):
        (dx, dh_student, grads), _ = step(g, p, xs[t], hs[t], douts[t] + dh_student)
        ex, dh_ref, expected = ref.gru_step_backward(douts[t] + dh_ref, ref.gru_step_forward(xs[t], hs[t], p)[1])
        compare(f"gru_step_backward over {T} steps, step {t}", dict(grads, x=dx, h=dh_student),
                dict(expected, x=ex, h=dh_ref), GRU_BLOCKS)
    at_size(g)
