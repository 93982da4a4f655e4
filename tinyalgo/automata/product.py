"""The product of a machine with a task's specification, explored
exhaustively (the verifier of an extracted machine; paper section 6.4,
"discretization of state": a discrete controller can be checked for every
input, not only sampled).

A configuration is what decides the rest of an episode, seen from the head:

* the machine's state;
* pointers (tinyalgo/automata/offsets.py): the task's landmarks (its start,
  its end marker, ...), the next target and frontiers, each as an offset from
  the head, exact within ``R`` cells, else only a direction; a landmark whose
  place depends on the length and that the head has not met yet is
  "unplaced" (None);
* the cells the head has read within ``K`` cells of it whose contents can
  still matter (the task's ``relevant``), each as the set of symbols it may
  hold; every other cell is "unknown";
* where the last write left the head and ``psi`` = idle steps - distance from
  there (exact while that place is within range; an upper bound after), from
  which the timeout (complexity + 2 steps without a write) is decided;
* the task's own finite state (the carry, the multiplier, the arrow, ...).

Cells are chosen lazily and adversarially: an unknown cell read, or needed as
a target, branches over every value it may hold, grouped by the machine's
answer; a landmark whose place depends on the length is placed where the
head first may meet it.  Forgetting a cell only adds behaviours, so the
exploration covers every instance of every length the specification admits
(``Spec``); a failure found may be spurious and is checked on concrete
instances (tinyalgo/automata/witness.py).
"""
from __future__ import annotations

import time
from collections import deque
from itertools import product as cartesian
from typing import NamedTuple

import numpy as np

from tinyalgo.automata.offsets import FAR, clip, distance_change, is_far, shift, sticky_shift

MOVES = {2: ((-1, 0), (1, 0)), 4: ((-1, 0), (1, 0), (0, 1), (0, -1))}


class Config(NamedTuple):
    state: int
    ptr: tuple          # one (x, y) offset per pointer of the spec, or None (unplaced)
    cells: tuple        # sorted ((dx, dy), symbols) of the cells known near the head
    w: tuple            # offset of where the last write (or the start) left the head
    psi: int            # idle steps - |w|_1 (exact while w is in range, an upper bound after)
    wrote: bool         # whether the episode has written yet
    spec: tuple         # the task's own state


def effective_tables(machine):
    """(action, symbol, next) as MachineAgent runs them without a controller
    (tinyalgo/automata/agent.py): an unknown action moves left without
    writing, an unknown next state is the state itself, a write of an
    unknown symbol writes 0.  Lists of lists (fast look-ups in the search)."""
    act = np.where(machine.action >= 0, machine.action, 0)
    nxt = np.where(machine.next >= 0, machine.next, np.arange(machine.n_states)[:, None])
    sym = np.where(act >= machine.n_moves, np.maximum(machine.symbol, 0), -1)
    return act.tolist(), sym.tolist(), nxt.tolist()


class Spec:
    """A task as the search sees it (subclasses: tinyalgo/automata/spec_*.py).

    ``pointers``: names; ``axes``: per pointer "x" (a column: y ignored) or
    "xy".  ``length``: None while searching every length >= ``min_length``
    (symbolic), or the one length of an exact search."""

    pointers: tuple = ()
    axes: tuple = ()
    growth = 1                      # patience grows by this much per unit of length

    @staticmethod
    def pointer_rows(task) -> int:
        """The rows the pointers range over (the pointer range R is at least this + 2)."""
        return task.rows

    @staticmethod
    def symbolic_margin(R: int, psi_cap: int) -> int:
        """What the first length explored symbolically adds to 2R + 3 (rules.ranges)."""
        return 0

    def __init__(self, task, length=None, min_length=1):
        self.task, self.length, self.min_length = task, length, min_length
        self.digits = frozenset(range(task.base))
        self.at = {name: i for i, name in enumerate(self.pointers)}

    @property
    def symbolic(self) -> bool:
        return self.length is None

    def ptr(self, cfg, name):
        return cfg.ptr[self.at[name]]

    def with_ptr(self, cfg, **changes):
        ptr = list(cfg.ptr)
        for name, value in changes.items():
            ptr[self.at[name]] = value
        return cfg._replace(ptr=tuple(ptr))

    # what a task defines
    def initial(self, search):                  # -> [(cfg, events)]
        raise NotImplementedError

    def read(self, search, cfg):                # cell under the head, unknown -> [(symbols, cfg, events)]
        raise NotImplementedError

    def target(self, search, cfg, written):     # -> [(ok, cfg, events)]
        raise NotImplementedError

    def advance(self, search, cfg):             # after a right write -> [(all written, cfg, events)]
        raise NotImplementedError

    def relevant(self, search, cfg, off) -> bool:
        return True

    def consistent(self, search, cfg) -> bool:
        return True

    def patience(self, cfg, length) -> int:     # complexity + 2 of an instance of that length
        raise NotImplementedError

    def first_sweep(self, search, cfg):          # (a, b): |head - start|_1 <= a*length + b, or None
        return None

    def after_move(self, search, cfg, dx, dy):   # -> [(cfg, events, failure kind or None)]
        return [(cfg, [], None)]


class Search:
    """Breadth-first exploration of the product of ``machine`` and ``spec``.

    window K: cells kept within K of the head; R: pointer range (>= K);
    keep_all: keep every cell read in the window, not only relevant ones;
    psi_cap: idle steps beyond the distance walked that end the exploration
    of a path as a possible timeout; max_configs: give up above that many;
    deadline: give up at this ``time.monotonic()`` (None: no limit).
    ``stopped`` says which budget ended an incomplete search."""

    def __init__(self, machine, spec: Spec, K=1, R=None, keep_all=False, psi_cap=12, max_configs=400_000,
                 deadline=None):
        self.machine, self.spec = machine, spec
        self.K, self.keep_all, self.psi_cap, self.max_configs = K, keep_all, psi_cap, max_configs
        self.deadline, self.stopped = deadline, None
        self.R = (FAR // 2) if not spec.symbolic else (R if R is not None else K + 2)
        self.act, self.sym, self.nxt = effective_tables(machine)
        self.moves = MOVES[machine.n_moves]
        self.n_moves = machine.n_moves
        self.parent, self.failures, self.explored, self.complete = {}, [], 0, False

    # ------------------------------------------------------------ helpers
    def cell(self, cfg, off):
        for o, s in cfg.cells:
            if o == off:
                return s
        return None

    def with_cell(self, cfg, off, symbols):
        """``cfg`` knowing that the cell at ``off`` holds one of ``symbols``
        (intersected with what was known; None if nothing is left).  Cells
        outside the window are not kept."""
        symbols = frozenset(symbols)
        old = self.cell(cfg, off)
        if old is not None:
            symbols &= old
            if not symbols:
                return None
        if max(abs(off[0]), abs(off[1])) > self.K or is_far(off[0]) or is_far(off[1]):
            return cfg
        cells = tuple(sorted([c for c in cfg.cells if c[0] != off] + [(off, symbols)], key=lambda c: c[0]))
        return cfg._replace(cells=cells)

    def tidy(self, cfg):
        """Drop the cells that cannot matter any more (or carry no information)."""
        keep = tuple(c for c in cfg.cells
                     if max(abs(c[0][0]), abs(c[0][1])) <= self.K and not (c[1] >= self.spec.digits and len(c[1]) ==
                                                                           len(self.spec.digits))
                     and (self.keep_all or self.spec.relevant(self, cfg, c[0])))
        return cfg if keep == cfg.cells else cfg._replace(cells=keep)

    # ------------------------------------------------------------ one step
    def successors(self, cfg):
        """Yield (events, outcome) for every way the step from ``cfg`` can go:
        outcome a Config, "done" (all written) or ("fail", kind)."""
        known = self.cell(cfg, (0, 0))
        reads = [(known, cfg, [])] if known is not None else self.spec.read(self, cfg)
        for symbols, c1, ev1 in reads:
            groups, act, sym, nxt = {}, self.act[cfg.state], self.sym[cfg.state], self.nxt[cfg.state]
            for x in sorted(symbols):
                groups.setdefault((act[x], sym[x], nxt[x]), []).append(x)
            for (a, w, q), xs in groups.items():
                c2 = self.with_cell(c1, (0, 0), xs)
                if c2 is None:
                    continue
                ev = ev1 + [("read", frozenset(xs))]
                dx, dy = self.moves[a % self.n_moves]
                if a >= self.n_moves:
                    ev.append(("write", w))
                    for ok, c3, ev3 in self.spec.target(self, c2, w):
                        if not ok:
                            yield ev + ev3, ("fail", "wrong write")
                            continue
                        for done, c4, ev4 in self.spec.advance(self, c3):
                            if done:
                                yield ev + ev3 + ev4, "done"
                            else:
                                yield from self._move(c4._replace(state=q), dx, dy, True, ev + ev3 + ev4)
                else:
                    yield from self._move(c2._replace(state=q), dx, dy, False, ev)

    def _move(self, cfg, dx, dy, wrote, events):
        R, spec = self.R, self.spec
        options = []
        for p, axes in zip(cfg.ptr, spec.axes):
            if p is None:
                options.append([None])
            else:
                ys = shift(p[1], dy, R) if axes == "xy" else [0]
                options.append([(x, y) for x in shift(p[0], dx, R) for y in ys])
        cells = tuple(((o[0] - dx, o[1] - dy), s) for o, s in cfg.cells)
        if wrote:
            w, psi = (0, 0), 0
        else:
            w = (sticky_shift(cfg.w[0], dx, R), sticky_shift(cfg.w[1], dy, R))
            psi = cfg.psi + 1 - distance_change(cfg.w[0], dx) - distance_change(cfg.w[1], dy)
        for ptr in cartesian(*options):
            c = cfg._replace(ptr=ptr, cells=cells, w=w, psi=psi, wrote=cfg.wrote or wrote)
            if not spec.consistent(self, c):
                continue
            for c2, ev, failure in spec.after_move(self, c, dx, dy):
                ev = events + [("move", dx, dy)] + ev
                if failure:
                    yield ev, ("fail", failure)
                    continue
                kind = self.timeout(c2)
                if kind:
                    yield ev, ("fail", kind)
                    continue
                yield ev, self.tidy(c2)

    def timeout(self, cfg):
        """None, or why the episode may time out after this step."""
        spec = self.spec
        length = spec.length if spec.length is not None else spec.min_length
        if not (is_far(cfg.w[0]) or is_far(cfg.w[1])):
            idle = cfg.psi + abs(cfg.w[0]) + abs(cfg.w[1])
            return "timeout" if idle >= spec.patience(cfg, length) else None
        if cfg.psi > self.psi_cap:
            return "possible timeout (the head wanders without writing)"
        bound = None if cfg.wrote else spec.first_sweep(self, cfg)
        if bound is None:
            return "possible timeout (the head goes far without writing)"
        a, b = bound
        if spec.symbolic and a > spec.growth:
            return "possible timeout (a sweep longer than the patience)"
        if cfg.psi + a * length + b >= spec.patience(cfg, length):
            return "possible timeout (a sweep longer than the patience)"
        return None

    # ------------------------------------------------------------ the search
    def run(self, stop_after=1):
        """Explore everything reachable; keep the failures (with their paths),
        stopping after ``stop_after`` of them.  ``complete`` says whether the
        whole product was explored."""
        queue = deque()
        for cfg, ev in self.spec.initial(self):
            cfg = self.tidy(cfg)
            if cfg not in self.parent:
                self.parent[cfg] = (None, ev)
                queue.append(cfg)
        while queue:
            cfg = queue.popleft()
            self.explored += 1
            if self.deadline is not None and self.explored % 1024 == 1 and time.monotonic() > self.deadline:
                self.stopped = "time"
                return self
            for ev, out in self.successors(cfg):
                if isinstance(out, Config):
                    if out not in self.parent:
                        if len(self.parent) >= self.max_configs:
                            self.stopped = "configurations"
                            return self
                        self.parent[out] = (cfg, ev)
                        queue.append(out)
                elif out != "done":
                    self.failures.append((out[1], self.path(cfg) + [ev]))
                    if len(self.failures) >= stop_after:
                        return self
        self.complete = True
        return self

    def path(self, cfg):
        """The events of every step from an initial configuration to ``cfg``
        (the first entry: the initial choices)."""
        steps = []
        while cfg is not None:
            prev, ev = self.parent[cfg]
            steps.append(ev)
            cfg = prev
        return steps[::-1]


__all__ = ["Config", "Search", "Spec", "effective_tables", "FAR", "clip"]
