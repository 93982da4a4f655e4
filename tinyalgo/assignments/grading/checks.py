"""What the grading tests share: the session that calls into a submission, and the comparisons.

A grading test is a function ``test_<name>(g)`` in ``test_<assignment>.py``;
it runs in the grader's process, never in the worker.  ``g`` is a
``Session``:

* ``g.rng``: a generator seeded at grading time from a seed the student
  never sees; tests draw their shapes and values from it, besides the
  hand-worked cases;
* ``g.call(probe, **args)``: the student's answer (``probes.py``), computed
  in the worker on fresh copies of ``args``; an argument the student's
  function changed in place fails the test;
* ``g.timed(probe, reference, **args)``: the same, and the call's CPU time
  must stay within ``Session.SLOWER`` times the reference's on the same
  arguments.

Expected values come from the reference solution (the grader's own
``tinyalgo``), run here on the same inputs.  A test fails with an
``AssertionError`` whose message is what the student reads.
"""
from __future__ import annotations

import time

import numpy as np

from tinyalgo import gradcheck
from tinyalgo.gradcheck import GATE_BLOCKS

TOLERANCE = 1e-7            # the largest difference over the largest entry (gradcheck.rel_error), per gate block
EXACT = 1e-11               # of the whole gate block, relative (2-norm): what analytic formulas reach in float64 and
                            # finite differences (about 1e-10 at best) do not
GRU_BLOCKS, LSTM_BLOCKS = GATE_BLOCKS["gru"], GATE_BLOCKS["lstm"]


def controller_blocks(core: str, layers: int) -> dict:
    """The gate blocks of every core layer's fused arrays, by the controller's parameter names (core0.wx, ...)."""
    return {f"core{l}.{k}": v for l in range(layers) for k, v in GATE_BLOCKS.get(core, {}).items()}


class Session:
    """The grading of one assignment: a worker, a seeded generator and the time budget.

    worker : ``sandbox.Worker``.  rng : ``np.random.Generator``.  timeout :
    seconds a call may take.  budget : ``[seconds left]`` for the whole
    submission, shared by its sessions."""

    SLOWER = 60.0           # a call may take this many times the reference's CPU time ...
    FLOOR = 0.25            # ... or this many CPU seconds, whichever is more

    def __init__(self, worker, rng, timeout: float, budget: list):
        self.worker, self.rng, self.timeout, self.budget = worker, rng, timeout, budget

    def call(self, probe: str, **args):
        """The student's answer to ``probes.<probe>(**args)`` (see the module docstring)."""
        return self._call(probe, args)[0]

    def timed(self, probe: str, reference, **args):
        """``call``, failing if it took more than SLOWER x the CPU time of ``reference()``."""
        answer, seconds = self._call(probe, args)
        ref = min(_cpu(reference) for _ in range(3))
        if seconds > max(self.FLOOR, self.SLOWER * ref):
            ratio = seconds / max(ref, 1e-6)
            raise AssertionError(f"too slow for an analytic backward: {seconds:.2f} s of CPU time, {ratio:,.0f} x"
                                 f" the reference ({ref * 1e3:.2f} ms) on the same arguments; the limit is"
                                 f" {self.SLOWER:g} x (a gradient by finite differences takes O(parameters)"
                                 " forward passes)")
        return answer

    def _call(self, probe, args):
        from tinyalgo.assignments.sandbox import StudentError, WorkerError, printable
        if self.budget[0] <= 0:
            raise AssertionError("not run: the submission has used its whole time budget")
        start = time.monotonic()
        try:
            reply, seconds = self.worker.call(probe, args, min(self.timeout, self.budget[0]))
        except StudentError as err:
            where = f" (raised in {', '.join(err.where)})" if err.where else ""
            raise AssertionError(f"{err.kind}: {err.message}{where}") from None
        except WorkerError as err:
            raise AssertionError(str(err)) from None
        finally:
            self.budget[0] -= time.monotonic() - start
        if not isinstance(reply, dict) or "out" not in reply:
            raise AssertionError("the worker's answer is malformed")
        changed = reply.get("changed") or []
        if changed:                         # the worker's words: shown short and without control characters
            changed = changed if isinstance(changed, list) else [changed]
            names = ", ".join(printable(str(c)[:40], newlines=False) for c in changed[:8])
            raise AssertionError(f"changed its argument{'s' * (len(changed) > 1)} {names} in place: a backward"
                                 " pass reads its inputs and returns new arrays")
        return reply["out"], seconds


def _cpu(f) -> float:
    """CPU seconds of ``f()`` in this thread (grade-all grades in several threads at once)."""
    start = time.thread_time()
    f()
    return time.thread_time() - start


def rel_error(a, b) -> float:
    """``tinyalgo.gradcheck.rel_error``, quiet on an infinite or undefined answer (nan: never below a bar)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return gradcheck.rel_error(a, b)


def as_array(what: str, got, shape) -> np.ndarray:
    """``got`` as a float64 array of ``shape``, or a failure naming what is wrong."""
    if not isinstance(got, np.ndarray) and not isinstance(got, (int, float)):
        raise AssertionError(f"{what}: got a {type(got).__name__}, expected an array of shape {tuple(shape)}")
    got = np.asarray(got, dtype=np.float64)
    if got.shape != tuple(shape):
        raise AssertionError(f"{what}: shape {got.shape}, expected {tuple(shape)}")
    return got


def parts(what: str, got, n: int) -> tuple:
    """``got`` as a tuple or list of ``n`` results, or a failure."""
    if not isinstance(got, (tuple, list)) or len(got) != n:
        raise AssertionError(f"{what}: expected {n} results, got "
                             + (f"{len(got)}" if isinstance(got, (tuple, list)) else f"a {type(got).__name__}"))
    return tuple(got)


def compare(what: str, got: dict, expected: dict, blocks: dict | None = None, tolerance: float = TOLERANCE):
    """Fail naming every array of ``got`` whose relative error against the
    reference's ``expected`` is not below ``tolerance``; an array named in
    ``blocks`` is reported per gate block along its last axis."""
    if not isinstance(got, dict):
        raise AssertionError(f"{what}: expected a dict of gradients {sorted(expected)}, got {type(got).__name__}")
    missing = [k for k in expected if k not in got]
    if missing:
        raise AssertionError(f"{what}: no gradient for {', '.join(missing)}")
    wrong, right = [], []
    for name, ref in expected.items():
        ref = np.asarray(ref, dtype=np.float64)
        value = as_array(f"{what}, the gradient of {name}", got[name], ref.shape)
        for label, v, r in gradcheck.gate_pieces((blocks or {}).get(name), value, ref):
            key = f"{name}[{label}]" if label else name
            e = rel_error(v, r)
            whole = float(np.linalg.norm(v - r) / max(np.linalg.norm(r), 1e-300))
            (right if e < tolerance and whole < EXACT else wrong).append((key, max(e, whole)))
    if wrong:
        raise AssertionError(f"{what}: wrong gradient of " + ", ".join(f"{k} (relative error {e:.1e})"
                                                                        for k, e in wrong)
                             + f"; right: {', '.join(k for k, _ in right) or 'none'}")


def with_states(what: str, grads, expected: dict, got_states, ref_states, prefix: str) -> tuple:
    """(got, expected) dicts of the parameter gradients plus each layer's state gradients
    ("<prefix>0.h", "<prefix>0.c", ...): ``got_states`` the student's list of per-layer tuples,
    ``ref_states`` the reference's."""
    if not isinstance(got_states, (list, tuple)) or len(got_states) != len(ref_states):
        raise AssertionError(f"{what}: the state gradient must hold one entry per layer ({len(ref_states)})")
    got, ref = dict(grads) if isinstance(grads, dict) else {}, dict(expected)
    for l, (mine, theirs) in enumerate(zip(got_states, ref_states)):
        for i, a in enumerate(theirs):
            ref[f"{prefix}{l}.{'hc'[i]}"] = a
            if isinstance(mine, (list, tuple)) and len(mine) > i:
                got[f"{prefix}{l}.{'hc'[i]}"] = mine[i]
    return got, ref


def random_params(shapes: dict, rng, scale=0.9) -> dict:
    """Every array, biases included, uniform in (-scale, scale): a zero bias hides a wrong gate."""
    return {k: rng.uniform(-scale, scale, size=s) for k, s in shapes.items()}


def sizes(rng, low=2, high=6, n=3) -> list:
    """``n`` random sizes in [low, high]."""
    return [int(v) for v in rng.integers(low, high + 1, size=n)]
