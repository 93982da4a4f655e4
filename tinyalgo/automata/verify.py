"""The verifier: does an extracted machine solve its task at every length?
(paper section 6.4: "discretization of state"; a discrete controller can be
checked exhaustively instead of sampled.)

``verify(machine)`` answers with one of

* **proved**: every instance of every length (from the task's smallest)
  ends with all targets written.  Lengths below a threshold N0 are each
  explored exactly (the whole board known up to the cells forgotten outside
  the window), lengths >= N0 all at once by the head-relative exploration of
  tinyalgo/automata/product.py, which covers every instance of every such
  length (the report says which window and range);
* **counterexample**: an instance built by the task's ``build`` that the
  machine fails in the real environment (tinyalgo/automata/witness.py), the
  shortest found (the shortest that exists when every shorter length was
  proved, which the report says);
* **not proved**: the exploration found a failing path that no concrete
  instance reproduced with the largest window tried, or it grew too large;
  the reasons are listed.  Never a proof by default.

The machine is run as ``MachineAgent`` runs it without a controller: an
unknown (state, symbol) pair moves left without writing and keeps the state.
"""
from __future__ import annotations

import time

import numpy as np

from tinyalgo.automata.product import Search
from tinyalgo.automata.spec_arith import AdditionSpec, MultiplicationSpec
from tinyalgo.automata.spec_tape import CopySpec, ReverseSpec
from tinyalgo.automata.spec_walk import WalkSpec
from tinyalgo.automata.witness import (confirm, describe, length_of, lengths_of, make, random_instances, realise,
                                       replay)

SPECS = {"copy": CopySpec, "reverse": ReverseSpec, "walk": WalkSpec, "addition": AdditionSpec,
         "addition3": AdditionSpec, "multiplication": MultiplicationSpec}
# the smallest length of each task's instances as its sampler draws them (tinyalgo/tasks/): digits;
# walk: the distance d from the start to the arrow (complexity 2d or 2d + 1)
SMALLEST = {"copy": 1, "reverse": 1, "walk": 1, "addition": 1, "addition3": 2, "multiplication": 1}
WINDOW = {"copy": 1, "reverse": 1, "walk": 1, "addition": 1, "addition3": 2, "multiplication": 1}
LENGTH_MEANS = {"walk": "d, the distance from the start to the arrow (complexity 2d or 2d + 1)"}


def ranges(task_name: str, K: int, psi_cap: int):
    """(R, N0): the pointer range and the first length explored symbolically."""
    rows = make(task_name, 10).rows if task_name != "walk" else 1
    R = max(K + 2, rows + 2)
    N0 = 2 * R + 3 + (psi_cap + 2 * R if task_name == "walk" else 0)
    return R, N0


def _search(machine, task_name, length, K, keep_all, psi_cap, max_configs, N0):
    task = make(task_name, machine.base)
    spec = SPECS[task_name](task, length, min_length=N0 if length is None else length)
    R, _ = ranges(task_name, K, psi_cap)
    return Search(machine, spec, K=K, R=R, keep_all=keep_all, psi_cap=psi_cap, max_configs=max_configs).run()


def _concretise(machine, failures, lengths, rng, N0):
    """The first failure path that a concrete instance reproduces: (instance, reason, correct outputs)."""
    task_name = machine.task
    for kind, path in failures:
        facts = replay(path)
        fixed = lengths_of(task_name, facts)
        tries = [fixed] if fixed is not None else lengths
        instances = []
        for n in tries:
            if n is not None and n >= SMALLEST[task_name]:
                instances += realise(task_name, machine.base, n, facts, rng)
        found = confirm(machine, instances)
        if found is not None:
            return found + (kind,)
    return None


def _sample(machine, lengths, rng, per_length=64):
    """Random instances of exactly the given lengths: a failing one, or None."""
    batch = [random_instances(machine.task, machine.base, n, per_length, rng) for n in lengths]
    return confirm(machine, [b.take(np.array([i])) for b in batch for i in range(len(b))])


def verify(machine, window: int | None = None, max_window: int = 3, psi_cap: int = 12, max_configs: int = 400_000,
           seed: int = 0, log=None) -> dict:
    """Prove ``machine`` right at every length, or find an instance it fails
    (see the module doc).  ``window``: the first window K tried (default per
    task); larger ones up to ``max_window`` are tried while a failing path
    is not reproduced.  Returns a JSON-able report."""
    started = time.perf_counter()
    task_name = machine.task
    if task_name not in SPECS:
        raise ValueError(f"machine of unknown task {task_name!r}")
    rng = np.random.default_rng(seed)
    K0 = WINDOW[task_name] if window is None else window
    levels = [(K, keep) for K in range(K0, max(K0, max_window) + 1) for keep in (False, True)]
    smallest = SMALLEST[task_name]
    proved_lengths, reasons, report, best = {}, [], None, None
    for K, keep_all in levels:
        R, N0 = ranges(task_name, K, psi_cap)
        if best is None:
            todo = [n for n in range(smallest, N0) if n not in proved_lengths] + [None]
        else:                                   # a counterexample is known: look for a shorter one only
            todo = [n for n in range(smallest, length_of(task_name, best[0])) if n not in proved_lengths]
            if not todo:
                break
        reasons, configs = [], 0
        for n in todo:
            s = _search(machine, task_name, n, K, keep_all, psi_cap, max_configs, N0)
            configs += len(s.parent)
            if s.complete and not s.failures:
                if n is not None:
                    proved_lengths[n] = len(s.parent)
                continue
            where = f"length {n}" if n is not None else f"lengths >= {N0}"
            if not s.failures:
                reasons.append(f"{where}: more than {max_configs} configurations (window {K})")
                continue
            lengths = [n] if n is not None else list(range(N0, N0 + 48))
            counter = _concretise(machine, s.failures, lengths, rng, N0)
            if counter is None and n is not None:
                counter = _sample(machine, [n], rng)
            if counter is not None:
                if best is None or length_of(task_name, counter[0]) < length_of(task_name, best[0]):
                    best = counter
                break                           # lengths go up: nothing shorter at this level
            reasons.append(f"{where}: the exploration reached a {s.failures[0][0]} that no concrete instance"
                           f" reproduced (window {K}{', every cell kept' if keep_all else ''}, range {R})")
        if best is None and not reasons:
            report = dict(verdict="proved", window=K, every_cell_kept=keep_all, range=R, exact_below=N0,
                          configurations=configs + sum(proved_lengths.values()),
                          established=f"every instance of every length >= {smallest}"
                                      f" ({LENGTH_MEANS.get(task_name, 'digits')}) ends with all its targets written:"
                                      f" lengths {smallest}..{N0 - 1} explored one by one, every length >= {N0} at"
                                      f" once (cells remembered within {K} of the head, landmarks exact within {R})")
            break
        if log and reasons:
            log(f"window {K}{' (every cell kept)' if keep_all else ''}: " + "; ".join(reasons))
    if best is not None:
        report = _counterexample(machine, best, proved_lengths, smallest, rng)
    if report is None:
        report = dict(verdict="not proved", reasons=reasons, window=levels[-1][0])
    report.update(task=task_name, base=machine.base, states=machine.n_states,
                  unknown_pairs=int((machine.action < 0).sum()), seconds=round(time.perf_counter() - started, 3),
                  semantics="as MachineAgent without a controller: an unknown (state, symbol) pair moves left"
                            " without writing and keeps its state")
    return report


def _counterexample(machine, counter, proved_lengths, smallest, rng) -> dict:
    inst, reason, correct, kind = counter if len(counter) == 4 else counter + ("sampled",)
    task_name = machine.task
    n = length_of(task_name, inst)
    shorter = range(smallest, n)
    return dict(verdict="counterexample", length=n, complexity=int(inst.complexity[0]), reason=reason,
                correct_outputs=int(correct), found_as=kind, instance=describe(task_name, inst),
                shortest=all(m in proved_lengths for m in shorter),
                note="every shorter length was proved" if all(m in proved_lengths for m in shorter) else
                "the shortest found; not every shorter length was proved")
