"""A trained controller as AALpy's system under learning (SUL), and AALpy's
Mealy machines as tinyalgo machines (paper section 5, Figure 4; section 6.4).

The alphabet is that of tinyalgo's extracted machines (tinyalgo/automata/
machine.py): an input is the symbol under the head, a character of the
task's boards (the digits and the task's markers: ``rules.board_symbols``);
an output is the joint action as tinyalgo/automata/export.py labels it, the
move, with ``+w`` and the character written when the action writes
(``left``, ``right+w7``).  What else the controller observes, the feedback
fields 1..4 (symbol written at the previous step, explored, previous move,
previous write flag), follows from its own outputs, so the greedy controller
is a Mealy machine over these inputs and outputs:

* ``reset``: the controller's initial recurrent state and the feedback
  fields of an episode's first step;
* ``step(symbol)``: one greedy step on the observation (symbol, feedback);
  the output label; the feedback fields of the next step.

``NetworkSteps`` runs a controller so, ``MachineSteps`` a tinyalgo machine
(as ``MachineAgent`` runs it without a controller); ``make_sul`` wraps either
as an ``aalpy.base.SUL``.  ``to_machine`` turns AALpy's learned
``MealyMachine`` into a ``Machine`` that ``verify`` checks; ``to_mealy`` the
other way.  AALpy is imported only by the functions that need it.
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from tinyalgo.automata.machine import Machine
from tinyalgo.automata.minimise import minimise
from tinyalgo.automata.product import effective_tables
from tinyalgo.automata.rules import board_symbols
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import MOVE_NAMES

MISSING = "the AALpy comparison needs the aalpy package, which is not installed (pip install -e '.[aalpy]')"


def require_aalpy():
    """The ``aalpy`` module, or an ImportError whose message is one line saying how to install it."""
    try:
        import aalpy
        from aalpy.base import SUL  # noqa: F401
    except ImportError:
        raise ImportError(MISSING) from None
    return aalpy


def alphabet(task_name: str, base: int) -> list:
    """The inputs: the characters a board of the task shows, in vocabulary order."""
    chars = Vocabulary(base).chars
    return [chars[i] for i in sorted(board_symbols(task_name, base))]


def label(action: int, symbol: int, n_moves: int, chars) -> str:
    """The output of one step: the move, ``+w`` and the character where the action writes."""
    return MOVE_NAMES[action % n_moves] + (f"+w{chars[symbol]}" if action >= n_moves else "")


def parse_label(text: str, n_moves: int, chars) -> tuple:
    """(joint action, symbol written or -1) of an output label."""
    move, _, written = text.partition("+w")
    a = MOVE_NAMES.index(move)
    return (a + n_moves, chars.index(written)) if written else (a, -1)


class BudgetSpent(Exception):
    """Raised by a step once a budget of steps or seconds is used up."""


class Budget:
    """At most ``steps`` steps of the system and, unless ``seconds`` is None,
    ``seconds`` of wall time from ``start()``; ``phase`` ("membership" or
    "equivalence") says which count a reset and a step go to."""

    def __init__(self, steps: int, seconds=None):
        self.steps, self.seconds = int(steps), None if seconds is None else float(seconds)
        self.counts = {"membership": [0, 0], "equivalence": [0, 0]}   # [queries, steps]
        self.phase, self.deadline, self.spent = "membership", None, None

    def start(self):
        self.deadline = None if self.seconds is None else time.monotonic() + self.seconds

    def used(self) -> int:
        return sum(c[1] for c in self.counts.values())

    def reset(self):
        self.counts[self.phase][0] += 1

    def step(self):
        if self.used() >= self.steps:
            self.spent = "steps"
        elif self.deadline is not None and time.monotonic() > self.deadline:
            self.spent = "seconds"
        if self.spent:
            raise BudgetSpent(self.spent)
        self.counts[self.phase][1] += 1


class NetworkSteps:
    """A controller acting greedily on ``task_name``, one step at a time (see
    the module doc); ``budget`` (a Budget, or None) counts and limits the steps."""

    def __init__(self, controller, task_name: str, base: int, budget: Budget | None = None):
        self.task_name, self.base, self.n_moves = task_name, int(base), controller.config.n_actions // 2
        self.model, self.budget = controller.rollout(), budget
        self.vocab = Vocabulary(base)
        self.fresh = (self.vocab.NONE, 0, self.n_moves, 2)    # the feedback fields of an episode's first step
        self.reset()

    def reset(self):
        self.state, self.feedback = self.model.initial_state(1), self.fresh
        if self.budget is not None:
            self.budget.reset()

    def step(self, char: str) -> str:
        if self.budget is not None:
            self.budget.step()
        obs = np.array([(self.vocab.chars.index(char),) + self.feedback], dtype=np.int64)
        q, scores, self.state = self.model.infer(obs, self.state, None)
        a, y = int(q[0].argmax()), int(scores[0].argmax())
        writes = a >= self.n_moves
        self.feedback = (y if writes else self.vocab.NONE, 0, a % self.n_moves, int(writes))
        return label(a, y, self.n_moves, self.vocab.chars)


class MachineSteps:
    """A tinyalgo machine run as ``MachineAgent`` runs it without a
    controller, one step at a time; ``recorded`` says whether the last step's
    (state, input) pair was recorded (its action known)."""

    def __init__(self, machine: Machine, budget: Budget | None = None):
        self.machine, self.budget = machine, budget
        self.task_name, self.base, self.n_moves = machine.task, machine.base, machine.n_moves
        self.tables = effective_tables(machine)
        self.chars = Vocabulary(machine.base).chars
        self.reset()

    def reset(self):
        self.state, self.recorded = self.machine.start, True
        if self.budget is not None:
            self.budget.reset()

    def step(self, char: str) -> str:
        if self.budget is not None:
            self.budget.step()
        act, sym, nxt = self.tables
        s, x = self.state, self.chars.index(char)
        self.recorded = bool(self.machine.action[s, x] >= 0)
        self.state = nxt[s][x]
        return label(act[s][x], sym[s][x], self.machine.n_moves, self.chars)


def make_sul(steps):
    """``steps`` (NetworkSteps or MachineSteps) as an ``aalpy.base.SUL``: ``pre`` resets it."""
    require_aalpy()
    from aalpy.base import SUL

    class StepsSUL(SUL):
        def pre(self):
            steps.reset()

        def post(self):
            pass

        def step(self, letter):
            return steps.step(letter)

    return StepsSUL()


def to_machine(mealy, task_name: str, base: int, n_moves: int, info: dict | None = None) -> Machine:
    """AALpy's ``MealyMachine`` over ``alphabet(task_name, base)`` as a
    tinyalgo ``Machine`` (state 0 the initial one; inputs no board shows are
    unknown pairs), with the bare fields of a machine that was not extracted
    from a recording (no cluster centres, no raw states)."""
    chars = Vocabulary(base).chars
    states = [mealy.initial_state] + [s for s in mealy.states if s is not mealy.initial_state]
    index = {id(s): i for i, s in enumerate(states)}
    S, V = len(states), len(chars)
    action, symbol, nxt = (np.full((S, V), -1, dtype=np.int64) for _ in range(3))
    for i, s in enumerate(states):
        for char, out in s.output_fun.items():
            x = chars.index(str(char))
            action[i, x], symbol[i, x] = parse_label(str(out), n_moves, chars)
            nxt[i, x] = index[id(s.transitions[char])]
    return Machine(task_name, int(base), int(n_moves), action, symbol, nxt, 0, np.zeros((1, 0)),
                   np.zeros(S, dtype=np.int64), np.zeros((S, 4), dtype=np.int64), np.zeros((0, 6), dtype=np.int64),
                   np.zeros(S, dtype=np.int64), dict(info or {}))


def to_mealy(machine: Machine, inputs: list):
    """A tinyalgo machine as AALpy's ``MealyMachine`` over the characters
    ``inputs``, run as ``MachineAgent`` runs it without a controller, and
    minimised (AALpy's W-method needs a machine without equivalent states:
    it computes a characterization set of the hypothesis)."""
    require_aalpy()
    from aalpy.automata import MealyMachine, MealyState
    act, sym, nxt = (np.array(t) for t in effective_tables(machine))
    machine = minimise(replace(machine, action=act, symbol=sym, next=nxt))[0]     # no unknown entries left
    act, sym, nxt = machine.action.tolist(), machine.symbol.tolist(), machine.next.tolist()
    chars = Vocabulary(machine.base).chars
    states = [MealyState(f"s{s}") for s in range(machine.n_states)]
    for s, state in enumerate(states):
        for char in inputs:
            x = chars.index(char)
            state.output_fun[char] = label(act[s][x], sym[s][x], machine.n_moves, chars)
            state.transitions[char] = states[nxt[s][x]]
    mealy = MealyMachine(states[machine.start], states)
    mealy.compute_prefixes()                # the access sequences the W-method and the state-prefix oracle use
    mealy.states = [state for state in states if state.prefix is not None]      # the reachable ones
    return mealy
