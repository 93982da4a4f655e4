"""Grading "controller_backward": Controller.step_backward (embedding, cores, the extra layer
and tanh, the Q head and the symbol head's log-softmax) against the reference, on every
parameter and the incoming state, with parameters and states drawn at grading time."""
from tinyalgo.assignments.grading.checks import compare, controller_blocks, parts, random_params, with_states
from tinyalgo.assignments.probes import _controller


def draw(g, core, layers, B=3, H=4):
    """(config, params, obs, state, dq, dlogp, dstate) of one step: every parameter random, biases included."""
    sizes = tuple(int(s) for s in g.rng.integers(2, 5, size=5))
    A, V = int(g.rng.integers(2, 6)), int(g.rng.integers(2, 5))
    config = dict(obs_sizes=list(sizes), n_actions=A, n_symbols=V, core=core, units=H, layers=layers)
    shapes = {k: v.shape for k, v in _controller(config, None).params.items()}
    params = random_params(shapes, g.rng)
    obs = g.rng.integers(0, sizes, size=(B, len(sizes)))
    ctrl = _controller(config, params)
    state = [tuple(g.rng.normal(size=(B, H)) for _ in s) for s in ctrl.initial_state(B)]
    dstate = [tuple(g.rng.normal(size=(B, H)) for _ in s) for s in state]
    return config, params, obs, state, g.rng.normal(size=(B, A)), g.rng.normal(size=(B, V)), dstate


def check_step(g, core, layers, timed=False):
    """One step drawn at grading time (B 2-4, H 3-5; with ``timed`` B 16, H 48 and the CPU time capped
    relative to the reference's)."""
    B, H = (16, 48) if timed else (int(g.rng.integers(2, 5)), int(g.rng.integers(3, 6)))
    config, params, obs, state, dq, dlogp, dstate = draw(g, core, layers, B=B, H=H)
    ctrl = _controller(config, params)
    cache = ctrl.step(obs, state)[3]
    expected, dstate_ref = ctrl.step_backward(dq, dlogp, dstate, cache)
    args = dict(config=config, params=params, obs=obs, state=state, dq=dq, dlogp=dlogp, dstate=dstate)
    got = g.timed("controller_step_backward", lambda: ctrl.step_backward(dq, dlogp, dstate, cache), **args) \
        if timed else g.call("controller_step_backward", **args)
    grads, dstate_in = parts("Controller.step_backward", got, 2)
    got_all, ref_all = with_states("Controller.step_backward", grads, expected, dstate_in, dstate_ref, "state")
    blocks = controller_blocks(core, layers)
    compare(f"Controller.step_backward ({core}, {layers} layer(s))", got_all, ref_all, blocks)


def test_step_backward_gru(g):
    check_step(g, "gru", 1)
    check_step(g, "gru", 2)
    check_step(g, "gru", 1, timed=True)


def test_step_backward_lstm_two_layers(g):
    check_step(g, "lstm", 2)
    check_step(g, "lstm", 2, timed=True)


def test_step_backward_ff(g):
    check_step(g, "ff", 1)
    check_step(g, "ff", 1, timed=True)
