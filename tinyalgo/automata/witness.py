"""Counterexamples made concrete: the instances an abstract failing path of
the verifier's search (tinyalgo/automata/product.py) stands for, built by the
task's ``build`` (tinyalgo/tasks/) and run in the real environment
(``Environment.load``) by ``MachineAgent`` without a controller, so that a
counterexample the verifier reports is one the environment confirms (paper
section 6.4: a discretised controller is checked, not trusted).

A path fixes the cells it read or wrote against (as sets of symbols), where
the length-dependent landmarks lie (hence the length) and the task's
parameters; every other cell is free.  Each path is tried with a few choices
of the free cells; walk's cells are the board's random fill, so its
instances are searched over random keys.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.board import random_digits
from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.evaluation import GreedyAgent, run_instances
from tinyalgo.automata.rules import make
from tinyalgo.tasks.instances import Instances, concatenate

ARROWS = ("l", "u", "d")


def replay(path) -> dict:
    """What a path of events says: cells {(x, y): symbols} read, targets
    {index: [payload]}, landmarks placed {name: (x, y)}, parameters."""
    x, y, writes, current = 1, 1, 0, None
    cells, targets, places, params = {}, {}, {}, {}
    for step in path:
        for ev in step:
            kind = ev[0]
            if kind == "read":
                cells[(x, y)] = cells.get((x, y), ev[1]) & ev[1]
            elif kind == "move":
                x, y = x + ev[1], y + ev[2]
            elif kind == "write":
                current, writes = writes, writes + 1
            elif kind == "target":
                targets.setdefault(current, []).append(ev[1])
            elif kind == "place":
                places[ev[1]] = (x + ev[2][0], y + ev[2][1])
            elif kind == "param":
                params[ev[1]] = ev[2]
    return dict(cells=cells, targets=targets, places=places, params=params, writes=writes)


def lengths_of(task_name: str, facts: dict):
    """The length a path's placements fix (None if none do): the input's end
    (``E``, reverse's ``P``, walk's arrow ``A``) at x, read by the task."""
    p = facts["places"]
    for landmark in ("E", "P", "A"):
        if landmark in p:
            return make(task_name, 10).length_from_end(p[landmark][0])
    return None


def _target_cells(task, n, facts):
    """{(x, y): symbols} that the targets of the path demand at length n
    (where each target comes from: the task's ``target_source``)."""
    out = {}
    arrow = facts["params"].get("arrow")
    for j, payloads in facts["targets"].items():
        for payload in payloads:
            source = task.target_source(n, j, arrow)
            if source is None:
                continue
            x, y = source
            cells = {(x, row): s for row, s in payload} if y is None else {(x, y): payload}
            for pos, s in cells.items():
                out[pos] = out.get(pos, s) & s
    return out


def _pick(allowed, rng, free):
    """A symbol from ``allowed`` (or from ``free`` where unconstrained)."""
    choices = sorted(free if allowed is None else allowed)
    return int(choices[rng.integers(len(choices))]) if choices else None


def _with_cells(inst: Instances, forced: dict) -> Instances:
    """``inst`` (one instance on a tape) with the cells ``forced`` {x: symbol}
    set explicitly where the layout leaves the random fill."""
    if not forced:
        return inst
    x0, w = int(inst.x0[0]), inst.cells.shape[2]
    lo, hi = min(x0, min(forced)), max(x0 + w - 1, max(forced))
    row = np.full(hi - lo + 1, -1, dtype=np.int64)
    row[x0 - lo:x0 - lo + w] = inst.cells[0, 0]
    for x, s in forced.items():
        row[x - lo] = s
    return Instances(cells=row[None, None, :], x0=np.array([lo]), key=inst.key, targets=inst.targets,
                     n_outputs=inst.n_outputs, complexity=inst.complexity, actions=inst.actions,
                     n_steps=inst.n_steps, clock=inst.clock)


def realise(task_name: str, base: int, n: int, facts: dict, rng, variants: int = 4):
    """Up to ``variants`` instances of length ``n`` (digits; walk: the distance
    d to the arrow) meeting the path's constraints, as a list."""
    task = make(task_name, base)
    need = dict(facts["cells"])
    for pos, s in _target_cells(task, n, facts).items():
        need[pos] = need.get(pos, s) & s
    if any(not s for s in need.values()):
        return []
    digits = frozenset(range(base))
    out = []
    for _ in range(variants):
        if task.interface == "tape":                  # one number on a random fill
            ds = [_pick(need.get(task.digit_cell(n, 1, j)), rng, digits) for j in range(n)]
            if any(d is None or d >= base for d in ds):
                return out
            inst = task.of_digits(np.array([[ds]]), n, keys=rng.integers(0, 2 ** 40, size=1))
            first, last = task.layout_span(n)         # the layout's cells
            forced = {x: _pick(s & digits, rng, digits) for (x, y), s in need.items()
                      if y == 1 and not first <= x <= last}
            if any(f is None for f in forced.values()):
                return out
            out.append(_with_cells(inst, forced))
        elif not task.number_rows:                    # walk: the digits are the fill
            found = _walk_keys(task, n, facts, need, rng)
            if found is None:
                return out
            out.append(found)
        else:
            rows = task.number_rows
            grid = np.zeros((1, len(rows), n), dtype=np.int64)
            for i, row in enumerate(rows):
                for j in range(n):
                    d = _pick(need.get(task.digit_cell(n, row, j)), rng, digits)
                    if d is None or d >= base:
                        return out
                    grid[0, i, j] = d
            out.append(task.of_digits(grid, n, multipliers=[facts["params"].get("m", 2)]))
    return out


def _walk_keys(task, d, facts, need, rng, tries=200_000):
    """A walk instance with the arrow at distance d whose random cells meet
    ``need``: searched over random keys."""
    arrow, parity = facts["params"].get("arrow"), facts["params"].get("parity")
    arrows = [arrow] if arrow else list(ARROWS)
    parities = [parity] if parity is not None else [0, 1]
    arrow = arrows[rng.integers(len(arrows))]
    c = 2 * d + parities[rng.integers(len(parities))]
    free = {pos: s for pos, s in need.items() if pos != (1 + d, 1)}
    keys = rng.integers(0, 2 ** 40, size=tries)
    ok = np.ones(tries, dtype=bool)
    for (x, y), s in free.items():
        vals = random_digits(keys, x, y, task.base)
        ok &= np.isin(vals, sorted(s))
    hits = np.nonzero(ok)[0]
    if not len(hits):
        return None
    return task.build(np.array([c]), np.array([arrow]), keys[hits[:1]])


def random_instances(task_name: str, base: int, n: int, k: int, rng) -> Instances:
    """k random instances of exactly length n (digits; walk: the distance to the arrow)."""
    task = make(task_name, base)
    keys = rng.integers(0, 2 ** 40, size=k)
    return task.random_of_length(rng, n, keys)


def count_of_length(task_name: str, base: int, n: int):
    """How many instances of length ``n`` (digits) there are (copy and
    reverse: base^n boards; addition and 3-number addition: base^(rows x n);
    multiplication: base^n numbers times the multipliers 2 .. base - 1); None
    for walk, whose boards are a random fill."""
    return make(task_name, base).count_of_length(n)


def numbered_instances(task_name: str, base: int, n: int, numbers) -> Instances:
    """The instances of length ``n`` numbered ``numbers`` (int array, each
    below ``count_of_length``): the digits of a number are its base-``base``
    digits (multiplication: the multiplier 2 + number // base^n)."""
    return make(task_name, base).numbered(n, numbers)


def every_instance(task_name: str, base: int, n: int, limit: int = 1000):
    """Every instance of length ``n`` (digits), as one batch, if there are at
    most ``limit`` of them (``count_of_length``); None otherwise, and for walk."""
    count = count_of_length(task_name, base, n)
    if count is None or count > limit:
        return None
    return numbered_instances(task_name, base, n, np.arange(count))


def length_of(task_name: str, inst: Instances) -> int:
    """An instance's length: digits (walk: the distance from the start to the arrow)."""
    return int(make(task_name, 10).length(inst)[0])


def run_on(machine, instances):
    """Run ``machine`` on ``instances`` in the environment: per instance
    solved, the end reason, correct outputs, as lists."""
    task = make(machine.task, machine.base)
    env = Environment(task, batch_size=len(instances), base=machine.base)
    env.load(instances)
    r = run_instances(MachineAgent(machine), env)
    return r["solved"].tolist(), [END_REASONS[i] for i in r["reason"]], r["n_correct"].tolist()


def solves(controller, task_name: str, base: int, instances) -> np.ndarray:
    """bool (n,): which of ``instances`` the controller solves, acting greedily in the environment."""
    env = Environment(make(task_name, base), batch_size=len(instances), base=base)
    env.load(instances)
    return run_instances(GreedyAgent(controller), env)["solved"].astype(bool)


def describe(task_name: str, inst: Instances) -> dict:
    """A counterexample instance as JSON: what ``build`` takes, and its board."""
    return dict(complexity=int(inst.complexity[0]), n_outputs=int(inst.n_outputs[0]), key=int(inst.key[0]),
                x0=int(inst.x0[0]), cells=inst.cells[0].tolist(), clock=int(inst.clock[0]),
                targets=inst.targets[0, :int(inst.n_outputs[0])].tolist())


def rebuild(d: dict) -> Instances:
    """The instance ``describe`` wrote (without its ground-truth actions), to run again."""
    n = d["n_outputs"]
    return Instances(cells=np.array([d["cells"]]), x0=np.array([d["x0"]]), key=np.array([d["key"]]),
                     targets=np.array([d["targets"]]), n_outputs=np.array([n]), complexity=np.array([d["complexity"]]),
                     actions=np.full((1, 1), -1), n_steps=np.array([0]), clock=np.array([d["clock"]]))


def confirm(machine, instances):
    """The first instance (smallest complexity first) that the machine fails in
    the environment, as (Instances of one, reason, correct outputs), or None."""
    if not instances:
        return None
    task = make(machine.task, machine.base)
    order = np.argsort([int(i.complexity[0]) for i in instances], kind="stable")
    batch = concatenate([instances[i] for i in order], task.vocab.NONE)
    solved, reasons, correct = run_on(machine, batch)
    for lane, ok in enumerate(solved):
        if not ok:
            return batch.take(np.array([lane])), reasons[lane], correct[lane]
    return None
