"""What a proof says about the network: the proved machine and the network
it was extracted from, run side by side on the same seeded instances
(paper section 6.4, "discretization of state").

A proof is about the machine.  ``agreement`` measures how far the network
is from it at lengths beyond training: at each length (digits; the
complexity is the length times the task's factor, tinyalgo/tasks) the
network acts greedily on ``instances`` fresh instances, and the machine,
fed the same observations from its own state, answers every step
(``extract.fidelity``, all lanes at once).  The machine is run as the
verifier reads it: a pair never recorded moves left without writing (no
network fallback), so the machine compared is the machine proved.  Reported
per length: the fraction of steps where both give the same joint action
(and the same symbol where they write), the fraction of instances where
they agree at every step, the network's solved fraction and the machine's
own solved fraction on the same instances (1.0 for a proved machine).
"""
from __future__ import annotations

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.extract import fidelity
from tinyalgo.environment import Environment
from tinyalgo.evaluation import run_instances
from tinyalgo.tasks import make_task

LENGTHS = (100, 1000, 10000)            # digits (walk: the distance to the arrow)
INSTANCES = {100: 100, 1000: 100, 10000: 20}
SEED = 5000                             # instances of length L are drawn with seed SEED + L


def agreement(machine, controller, lengths=LENGTHS, instances=None, seed: int = SEED, log=None) -> list:
    """One dict per length of ``lengths``: length, complexity, instances (``instances[length]``, default
    ``INSTANCES`` or 20), step and instance (the machine's agreement with ``controller``, see the module doc),
    network_solved and machine_solved (fractions of the same instances)."""
    counts = {**INSTANCES, **(instances or {})}
    factor = make_task(machine.task, machine.base).factor
    rows = []
    for length in lengths:
        c, n = int(length) * factor, counts.get(length, 20)
        f = fidelity(machine, controller, c, n, seed=seed + length, base=machine.base, alone=True)
        env = Environment(machine.task, batch_size=n, base=machine.base, complexity=c, seed=seed + length,
                          extra_curriculum=False)
        alone = run_instances(MachineAgent(machine), env)["solved"]
        rows.append(dict(length=int(length), complexity=c, instances=n, step=round(f["step"], 6),
                         instance=round(f["instance"], 4), network_solved=round(f["network_solved"], 4),
                         machine_solved=round(float(alone.mean()), 4)))
        if log:
            r = rows[-1]
            log(f"  length {length}: agree on {r['step']:.4%} of steps, {r['instance']:.0%} of {n} instances;"
                f" network solves {r['network_solved']:.0%}, machine {r['machine_solved']:.0%}")
    return rows
