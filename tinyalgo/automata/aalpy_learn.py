"""AALpy's active learners on a trained controller, measured against
tinyalgo's extraction and verifier (paper section 6.4).

The controller is AALpy's system under learning (tinyalgo/automata/
aalpy_sul.py: inputs the symbols a board shows, outputs the joint actions as
tinyalgo's machines label them).  ``learn`` runs one learner (``LEARNERS``:
L* or KV) with one equivalence oracle (``ORACLES``: the W-method with one
state more than the hypothesis, random walks, or walks from every state's
access sequence) under a ``Budget`` of network steps (and, optionally,
seconds) shared by the membership and the equivalence queries.  When the budget runs out the
last hypothesis given to the oracle is kept ("stopped": the budget spent in
an equivalence query, whose hypothesis the oracle had not refuted yet, or in
the membership queries after a counterexample, whose hypothesis it had).
AALpy draws its random tests from Python's ``random``, seeded per run; its
global state is restored afterwards.

``compare`` does, for one network: each learner with each oracle, the learned
machine verified by ``tinyalgo.automata.verify`` (where it is refuted: does
the network solve the counterexample?) and its agreement with the network on
fresh instances; the oracles' counterexamples replayed on tinyalgo's proved
machine (does that machine agree with the network there, or does it differ,
at a (state, input) pair its recording held or at one it never saw?); and
each oracle run once against tinyalgo's proved machine as the hypothesis.
"""
from __future__ import annotations

import random
import time

from tinyalgo.automata.aalpy_sul import (Budget, BudgetSpent, MachineSteps, NetworkSteps, alphabet, make_sul,
                                         require_aalpy, to_machine, to_mealy)
from tinyalgo.automata.extract import fidelity
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import rebuild, run_on, solves

LEARNERS = ("lstar", "kv")
ORACLES = ("w-method", "random-walk", "state-prefix")
# each oracle's settings (every run also has the shared Budget)
W_EXTRA_STATES = 1          # the W-method looks for machines of up to (hypothesis states + 1) states
RANDOM_WALK = dict(num_steps=5000, reset_prob=0.09)        # steps per equivalence query; a reset every ~11 steps
STATE_PREFIX = dict(walks_per_state=10, walk_len=12)       # walks from each state's access sequence, in all


def make_oracle(name: str, inputs: list, sul, n_states: int):
    """AALpy's equivalence oracle ``name`` (one of ``ORACLES``) over ``inputs``
    for a hypothesis of ``n_states`` states."""
    require_aalpy()
    from aalpy.oracles import RandomWalkEqOracle, StatePrefixEqOracle, WMethodEqOracle
    if name == "w-method":
        return WMethodEqOracle(inputs, sul, max_number_of_states=n_states + W_EXTRA_STATES)
    if name == "random-walk":
        return RandomWalkEqOracle(inputs, sul, reset_after_cex=True, **RANDOM_WALK)
    if name == "state-prefix":
        return StatePrefixEqOracle(inputs, sul, **STATE_PREFIX)
    raise ValueError(f"unknown oracle {name!r}; allowed: {', '.join(ORACLES)}")


def _recording_oracle(name, inputs, sul, budget, convert):
    """An oracle that runs ``name`` (the W-method built again for each
    hypothesis's size, the others kept across hypotheses), keeps every
    hypothesis it is given (as ``convert`` makes it) and every counterexample,
    and counts its steps in ``budget``'s equivalence phase."""
    from aalpy.base import Oracle

    class Recording(Oracle):
        def __init__(self):
            super().__init__(inputs, sul)
            self.inner, self.hypotheses, self.counterexamples, self.testing = None, [], [], False

        def find_cex(self, hypothesis):
            self.hypotheses.append(convert(hypothesis))
            if self.inner is None or name == "w-method":
                self.inner = make_oracle(name, inputs, self.sul, len(hypothesis.states))
            self.inner.sul = self.sul
            budget.phase, self.testing = "equivalence", True
            cex = self.inner.find_cex(hypothesis)           # BudgetSpent leaves self.testing True
            budget.phase, self.testing = "membership", False
            if cex is not None:
                self.counterexamples.append(tuple(cex))
            return cex

    return Recording()


class _SeededRandom:
    """Python's ``random`` seeded inside the block, its state restored after."""

    def __init__(self, seed):
        self.seed = seed

    def __enter__(self):
        self.saved = random.getstate()
        random.seed(self.seed)

    def __exit__(self, *exc):
        random.setstate(self.saved)


def learn(system, budget: Budget, learner: str, oracle: str, seed: int = 0) -> dict:
    """Learn the machine of ``system`` (NetworkSteps or MachineSteps, counting
    its steps in ``budget``) with ``learner`` and ``oracle`` (see the module
    doc).  Returns machine (a tinyalgo Machine; None where the budget ran out
    before the first hypothesis), stopped ("learned", "budget in equivalence
    query", "budget in membership queries"), rounds (hypotheses given to the
    oracle), counterexamples (tuples of input characters), the membership and
    equivalence queries and steps that reached the system, seconds."""
    aalpy = require_aalpy()
    from aalpy.learning_algs import run_KV, run_Lstar
    run = {"lstar": run_Lstar, "kv": run_KV}.get(learner)
    if run is None:
        raise ValueError(f"unknown learner {learner!r}; allowed: {', '.join(LEARNERS)}")
    task_name, base, n_moves = system.task_name, system.base, system.n_moves
    inputs = alphabet(task_name, base)
    sul = make_sul(system)
    info = dict(learned_by=f"aalpy {getattr(aalpy, '__version__', '')} {learner} + {oracle}".replace("  ", " "))
    convert = lambda mealy: to_machine(mealy, task_name, base, n_moves, info)   # noqa: E731
    eq = _recording_oracle(oracle, inputs, sul, budget, convert)
    started = time.perf_counter()
    budget.start()
    with _SeededRandom(seed):
        try:
            model = run(inputs, sul, eq, automaton_type="mealy", print_level=0)
            machine, stopped = convert(model), "learned"
        except BudgetSpent:
            machine = eq.hypotheses[-1] if eq.hypotheses else None
            stopped = f"budget in {'equivalence query' if eq.testing else 'membership queries'}"
    (mq, mq_steps), (eqq, eq_steps) = budget.counts["membership"], budget.counts["equivalence"]
    return dict(machine=machine, stopped=stopped, rounds=len(eq.hypotheses), counterexamples=eq.counterexamples,
                membership_queries=mq, membership_steps=mq_steps, equivalence_queries=eqq, equivalence_steps=eq_steps,
                seconds=round(time.perf_counter() - started, 2))


def first_difference(controller, machine, word):
    """Where ``machine`` (run without a controller) first answers ``word``
    otherwise than the network: None where it agrees on every step, else
    (step, whether its recording held that (state, input) pair)."""
    net = NetworkSteps(controller, machine.task, machine.base)
    mach = MachineSteps(machine)
    for i, char in enumerate(word):
        if net.step(char) != mach.step(char):
            return i, mach.recorded
    return None


def describe_difference(d) -> str:
    return "agrees" if d is None else f"step {d[0] + 1}, {'a recorded' if d[1] else 'an unrecorded'} pair"


def oracle_on_machine(controller, machine, oracle: str, steps: int, seconds=None, seed: int = 0) -> dict:
    """One equivalence query of ``oracle`` with ``machine`` (tinyalgo's) as the
    hypothesis and the network as the SUL: the counterexample (or None) and
    where the machine first differs on it, within the budget."""
    inputs = alphabet(machine.task, machine.base)
    budget = Budget(steps, seconds)
    sul = make_sul(NetworkSteps(controller, machine.task, machine.base, budget))
    eq = make_oracle(oracle, inputs, sul, machine.n_states)
    started = time.perf_counter()
    budget.start()
    with _SeededRandom(seed):
        try:
            cex, stopped = eq.find_cex(to_mealy(machine, inputs)), "done"
        except BudgetSpent as spent:
            cex, stopped = None, f"budget ({spent})"
    where = first_difference(controller, machine, cex) if cex is not None else None
    return dict(counterexample=None if cex is None else "".join(cex), stopped=stopped, where=where,
                steps=budget.used(), seconds=round(time.perf_counter() - started, 2))


def compare(controller, task_name: str, base: int, proved=None, steps: int = 50_000, seconds=None,
            seed: int = 0, verify_seconds: float = 60, complexity: int = 100, instances: int = 20, log=print) -> list:
    """The rows of one network (see the module doc): one per learner and
    oracle.  ``proved``: tinyalgo's proved machine of the network, or None."""
    against = {}
    if proved is not None:
        for oracle in ORACLES:
            against[oracle] = oracle_on_machine(controller, proved, oracle, steps, seconds, seed)
            log(f"  {oracle} on tinyalgo's machine: " + ("no counterexample" if against[oracle]["counterexample"]
                is None else f"{describe_difference(against[oracle]['where'])} of a word of"
                f" {len(against[oracle]['counterexample'])}") + f" ({against[oracle]['stopped']})")
    rows = []
    for learner in LEARNERS:
        for oracle in ORACLES:
            budget = Budget(steps, seconds)
            got = learn(NetworkSteps(controller, task_name, base, budget), budget, learner, oracle, seed)
            m = got["machine"]
            report = (verify(m, max_seconds=verify_seconds, seed=seed) if m is not None else
                      dict(verdict="no hypothesis", seconds=0))
            row = dict(task=task_name, learner=learner, oracle=oracle, states=m.n_states if m is not None else 0,
                       verdict=report["verdict"], stopped=got["stopped"], rounds=got["rounds"],
                       membership_queries=got["membership_queries"], membership_steps=got["membership_steps"],
                       equivalence_queries=got["equivalence_queries"], equivalence_steps=got["equivalence_steps"],
                       seconds=got["seconds"], verify_seconds=report["seconds"], cex_length="", network_solves_cex="",
                       tinyalgo_solves_cex="")
            if report["verdict"] == "counterexample":
                inst = rebuild(report["instance"])
                row.update(cex_length=report["length"],
                           network_solves_cex=bool(solves(controller, task_name, base, inst)[0]))
                if proved is not None:
                    row["tinyalgo_solves_cex"] = bool(run_on(proved, inst)[0][0])
            fid = (fidelity(m, controller, complexity, instances, seed=seed + 1) if m is not None else
                   dict(step=float("nan"), instance=float("nan")))
            row.update(agree_step=round(fid["step"], 4), agree_instance=round(fid["instance"], 4),
                       oracle_cexes=len(got["counterexamples"]))
            if proved is not None:
                diffs = [first_difference(controller, proved, w) for w in got["counterexamples"]]
                row.update(cexes_tinyalgo_agrees=sum(d is None for d in diffs),
                           cexes_tinyalgo_recorded=sum(d is not None and d[1] for d in diffs),
                           cexes_tinyalgo_unrecorded=sum(d is not None and not d[1] for d in diffs),
                           oracle_on_tinyalgo=("none" if against[oracle]["counterexample"] is None else
                                               describe_difference(against[oracle]["where"])),
                           tinyalgo_states=proved.n_states)
            rows.append(row)
            log(f"  {learner} + {oracle}: {row['states']} states, {report['verdict']}"
                + (f" (length {row['cex_length']}, network solves it: {row['network_solves_cex']})"
                   if row["cex_length"] != "" else "")
                + f"; {got['stopped']}, {got['rounds']} hypotheses, {got['membership_queries']:,} + "
                f"{got['equivalence_queries']:,} queries, {got['membership_steps'] + got['equivalence_steps']:,}"
                f" steps, {got['seconds']} s; agrees with the network on {fid['instance']:.0%} of length"
                f" {complexity}")
    return rows
