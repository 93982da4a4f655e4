"""The Q-learning assignments' shared check: the student's function against the reference
on the same arguments, entry by entry, with the (step t, lane b) of every difference."""
import numpy as np

from tinyalgo import qlearning as ref


def check(g, function: str, what: str, **arguments):
    """The student's ``qlearning.<function>(**arguments)`` equals the reference's, or a failure."""
    expected = np.asarray(getattr(ref, function)(**arguments), dtype=np.float64)
    got = g.call("qlearning", function=function, arguments=arguments)
    if not isinstance(got, np.ndarray) or got.shape != expected.shape:
        shape = got.shape if isinstance(got, np.ndarray) else type(got).__name__
        raise AssertionError(f"{what}: got {shape}, expected an array of shape {expected.shape}")
    got = got.astype(np.float64)
    bad = np.argwhere(~np.isclose(got, expected, rtol=1e-9, atol=1e-12))
    lines = [f"step t {t}, lane b {b}: got {got[t, b]:.6g}, expected {expected[t, b]:.6g}" for t, b in bad[:4]]
    assert not lines, f"{what}: wrong at " + "; ".join(lines)


def rollout(g, T=None, B=None) -> dict:
    """Random rewards, q_max, V-hat, terminal and exploratory flags of a rollout drawn at grading time:
    episodes of random lengths (V-hat counts the outputs left), 0/1 rewards, Q-hat in [0, 1]."""
    T = T or int(g.rng.integers(3, 9))
    B = B or int(g.rng.integers(2, 5))
    v = np.zeros((T + 1, B))
    terminal = np.zeros((T, B), bool)
    for b in range(B):
        t = 0
        while t <= T:
            n = int(g.rng.integers(1, 6))
            v[t:t + n, b] = np.arange(n, 0, -1)[:T + 1 - t]
            if t + n - 1 < T:
                terminal[t + n - 1, b] = True
            t += n
    return {"rewards": (g.rng.random((T, B)) < 0.7) * 1.0, "q_max": g.rng.random((T + 1, B)), "v_hat": v,
            "terminal": terminal, "exploratory": g.rng.random((T + 1, B)) < 0.2}
