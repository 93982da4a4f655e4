"""What the verifier and the certificate checker know about each task
(tinyalgo/tasks/, paper section 3): its specification (tinyalgo/automata/
spec_*.py), the shortest instance, the window first tried, the pointer range
and the first length explored symbolically, the symbols its boards show, and
the check that a machine fits the task it names.

Lengths are digits, from one digit (every task's ``build`` makes one-digit
boards, although 3-number addition's sampler draws two digits at least);
walk's length is d, the distance from the start to the arrow (complexity 2d
or 2d + 1), from 1.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.machine import MachineError
from tinyalgo.automata.spec_arith import AdditionSpec, MultiplicationSpec
from tinyalgo.automata.spec_tape import CopySpec, ReverseSpec
from tinyalgo.automata.spec_walk import WalkSpec
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import make_task

SPECS = {"copy": CopySpec, "reverse": ReverseSpec, "walk": WalkSpec, "addition": AdditionSpec,
         "addition3": AdditionSpec, "multiplication": MultiplicationSpec}
SMALLEST = {"copy": 1, "reverse": 1, "walk": 1, "addition": 1, "addition3": 1, "multiplication": 1}
WINDOW = {"copy": 1, "reverse": 1, "walk": 1, "addition": 1, "addition3": 2, "multiplication": 1}
LENGTH_MEANS = {"walk": "d, the distance from the start to the arrow (complexity 2d or 2d + 1)"}
# the markers each task's boards show besides its digits (tinyalgo/tasks/; walk: q from its clock on)
MARKERS = {"copy": "q", "reverse": "qp", "walk": "qlud", "addition": "qe", "addition3": "qe", "multiplication": "q"}


def make(task_name: str, base: int):
    """The task as the verifier models it (3-number addition without its extra curriculum)."""
    return make_task(task_name, base, extra_curriculum=False)


def ranges(task_name: str, K: int, psi_cap: int):
    """(R, N0): the pointer range and the first length explored symbolically
    (every length >= N0 at once; the shorter ones one by one)."""
    spec = SPECS[task_name]
    R = max(K + 2, spec.pointer_rows(make(task_name, 10)) + 2)
    N0 = 2 * R + 3 + spec.symbolic_margin(R, psi_cap)
    return R, N0


def board_symbols(task_name: str, base: int) -> set:
    """The class indices a board of the task can show under the head."""
    v = Vocabulary(base)
    return set(range(base)) | {v.chars.index(c) for c in MARKERS[task_name]}


def check_machine(machine, where: str = "machine") -> None:
    """A MachineError (one line: what is wrong, what is allowed) unless the
    machine fits the task it names: a task the verifier knows, a base the task
    allows, the task's moves, one input per symbol of the base's vocabulary,
    written symbols in the vocabulary, and recorded reads only of symbols
    the task's boards show (a machine of another task or base fails here;
    a machine completed by the network answers every symbol, so that last
    check is left out for it)."""
    if machine.task not in SPECS:
        raise MachineError(f"{where}: a machine of task {machine.task!r}, which the verifier does not know;"
                           f" allowed: {', '.join(SPECS)}")
    try:
        task = make(machine.task, machine.base)
    except ValueError as err:
        raise MachineError(f"{where}: base {machine.base} for task {machine.task!r}: {err}") from None
    v = Vocabulary(machine.base)
    if machine.n_moves != task.n_moves:
        raise MachineError(f"{where}: declares {machine.n_moves} moves; task {machine.task} has {task.n_moves}"
                           f" ({'left, right' if task.n_moves == 2 else 'left, right, up, down'})")
    if machine.n_inputs != v.size:
        raise MachineError(f"{where}: {machine.n_inputs} inputs; the vocabulary of base {machine.base} has {v.size}"
                           " symbols (a machine of another base?)")
    if not 0 <= machine.start < machine.n_states:
        raise MachineError(f"{where}: start state {machine.start}; allowed: 0..{machine.n_states - 1}")
    for name, table, low, high in (("action", machine.action, -1, 2 * task.n_moves - 1),
                                   ("symbol", machine.symbol, -1, v.size - 1),
                                   ("next", machine.next, -1, machine.n_states - 1)):
        bad = np.argwhere((table < low) | (table > high))
        if len(bad):
            s, x = bad[0]
            raise MachineError(f"{where}: {name}[{s}][{x}] = {table[s, x]}; allowed: {low}..{high}")
    if machine.info.get("completed_by_network"):
        return                                  # the network answered every pair, read on a board or not
    shown = board_symbols(machine.task, machine.base)
    unseen = [x for x in range(v.size) if x not in shown and (machine.action[:, x] >= 0).any()]
    if unseen:
        raise MachineError(f"{where}: recorded reading {v.chars[unseen[0]]!r}, which no board of task {machine.task}"
                           f" (base {machine.base}) shows (a machine of another task?); its boards show the digits"
                           f" and {', '.join(MARKERS[machine.task])}")
