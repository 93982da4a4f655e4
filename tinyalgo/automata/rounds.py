"""One round of the counterexample-guided loop (tinyalgo/automata/loop.py;
paper section 6.4): the recording, the machines extracted
from it, and the one the round keeps.

Each round verifies several extractions of one recording, in order, and
keeps the first that is proved, else, of those refuted by a counterexample
(the next round needs one), the one that replays the most recorded episodes
(``Candidate.rank``):
the behaviour tags of ``tinyalgo automaton`` (feedback fields, six steps) and
the one-step tags of the narrower context (feedback fields and the previous
symbol, tinyalgo/automata/behaviour.py), each with k = 1, 2, 4, ..., 32
k-means clusters, then the first tags again with k = 64, 128, 256, 512:
finer clusters hold fewer recurrent states of different memories, which a
network with many memories to keep apart (a 3-number addition network that
goes back up a column before writing holds a partial sum of up to 29 for
five steps) needs.  A proof is a proof whichever extraction gave it; how
close the machine is to the network is measured apart (``extract.fidelity``).

With ``repairs`` > 0, a round that proves none of them repairs them, best
first, where the network solves the counterexample: one transition at a
time, following the network, verifying after each change
(tinyalgo/automata/repair.py), until one is proved or the round has made
``repairs`` changes in all (each change costs a verification, and a
machine near a proof can take minutes to verify).  If none is, the round
goes on as without repairs (its machine and counterexample are the best
unrepaired candidate's), so the repair can end a loop earlier but never
sends it elsewhere: every seed the loop proves without repairs it proves
with them, in the same round or an earlier one.  With ``faithful``, a repair
makes only the changes that keep every recorded step the machine answered as
the network.

With ``complete``, each extracted machine first has its (state, symbol)
pairs never recorded answered by the network (``complete_with_network``), so
the machine verified is the network's wherever the network is asked, not the
default's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.behaviour import behaviour_tags, context_tests
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.extract import CORNER_DIGITS, machines_and_rows, replay
from tinyalgo.automata.record import record
from tinyalgo.automata.repair import repair
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import make
from tinyalgo.tasks.corners import corner_batch
from tinyalgo.tasks.instances import concatenate


# The extractions a round verifies, in order (see the module doc): behaviour tags, and the k-means k's of each.
FEEDBACK = dict(context="feedback", depth=6, tests=8)
PREVIOUS = dict(context="previous", depth=1, tests=1)
K_VALUES = (1, 2, 4, 8, 16, 32)
FINE_K = (64, 128, 256, 512)
EXTRACTIONS = ((FEEDBACK, K_VALUES), (PREVIOUS, K_VALUES), (FEEDBACK, FINE_K))


def recording_with(controller, task, base, complexities, instances, seed, corners, extra):
    """The recording of ``extract.extract`` (fresh instances of each
    complexity, the corner instances if ``corners``) that also runs the
    instances of ``extra`` (a list of batches: counterexamples, each as
    often as it should weigh, and whole lengths)."""
    parts = ([corner_batch(task, CORNER_DIGITS, base)] if corners else []) + list(extra)
    parts = [p for p in parts if p is not None]
    canned = concatenate(parts, make(task, base).vocab.NONE) if parts else None
    return record(controller, task, complexities, instances, base, seed, canned)


def candidates(controller, rec, seed: int = 0):
    """The machines a round verifies, in order: yields (how it was extracted,
    reduced machine, the fraction of recorded episodes it replays, the
    machine state of each recorded row).  A feed-forward controller has one."""
    if rec.state.shape[1] == 0:
        reduced, rows = machines_and_rows(rec, 1, seed)[2:4]
        yield dict(k=1), reduced, replay(reduced, rec), rows
        return
    tags, clusters = {}, {}
    for variant, ks in EXTRACTIONS:
        key = tuple(sorted(variant.items()))
        if key not in tags:
            paths = context_tests(rec, variant["depth"], variant["tests"], seed, variant["context"])
            tags[key] = behaviour_tags(rec, controller, variant["depth"], variant["tests"], seed,
                                       context=variant["context"], paths=paths)
        for k in ks:
            if k not in clusters:
                clusters[k] = kmeans(rec.state, k, seed=seed)
            reduced, rows = machines_and_rows(rec, k, seed, tags[key], clusters[k])[2:4]
            yield dict(variant, k=k), reduced, replay(reduced, rec), rows


@dataclass
class Candidate:
    """A machine a round verified: how it was extracted (``how``, with its
    replay), the machine, its verification, the fraction of the recorded
    episodes it replays and the machine state of each recorded row."""

    how: dict
    machine: object
    report: dict
    replay: float
    rows: np.ndarray

    def rank(self) -> tuple:
        """The choice rule, larger first: proved; then refuted by a
        counterexample (an undecided machine gives the next round nothing to
        record); then the most recorded episodes replayed; then the fewest
        states."""
        return (self.report["verdict"] == "proved", self.report["verdict"] == "counterexample", self.replay,
                -self.machine.n_states)


def select(controller, rec, seed: int = 0, complete: bool = False, verify_options=None, repairs: int = 0,
           log=None, faithful: bool = False) -> tuple:
    """Verify the ``candidates`` of ``rec`` in order; (machine, its
    verification, how it was extracted, candidates verified) of the first
    proved, else of the best by ``Candidate.rank``.  With ``repairs`` > 0
    and no candidate proved, the candidates whose counterexample the network
    solves are repaired where they leave the network
    (tinyalgo/automata/repair.py, only faithful changes with ``faithful``),
    best first, until one is proved or ``repairs`` changes are made in all;
    the round keeps the first proved, else the best unrepaired one (as
    without repairs), with the repairs tried listed in ``repaired_unproved``."""
    kept, tried = [], 0
    for how, machine, replayed, rows in candidates(controller, rec, seed):
        if complete:
            machine = complete_with_network(machine, controller)
        report = verify(machine, **(verify_options or {}))
        tried += 1
        kept.append(Candidate(dict(how, replay=round(replayed, 4)), machine, report, replayed, rows))
        if report["verdict"] == "proved":
            break
    kept.sort(key=Candidate.rank, reverse=True)
    best = kept[0]
    if not repairs or best.report["verdict"] == "proved":
        return best.machine, best.report, best.how, tried
    attempts, left = [], repairs
    for c in kept:
        if not left:
            break
        if c.report["verdict"] != "counterexample":
            continue
        machine, report, done = repair(c.machine, rec, c.rows, controller, left, verify_options=verify_options,
                                       log=log, faithful=faithful)
        if report["verdict"] == "proved":
            return machine, report, dict(c.how, repairs=len(done["changes"]),
                                         replay_repaired=round(replay(machine, rec), 4)), tried
        left -= len(done["changes"])
        attempts.append(dict(k=c.how.get("k"), context=c.how.get("context"), repairs=len(done["changes"]),
                             stopped=done["stopped"]))
    return best.machine, best.report, dict(best.how, repaired_unproved=attempts), tried


def complete_with_network(machine, controller):
    """A copy of ``machine`` whose unknown entries (never recorded) are the
    network's answers, as ``MachineAgent`` gives them (one step from the
    state's cluster centre, with the state's own feedback fields as the
    observation): a machine without unknown pairs."""
    agent = MachineAgent(machine, controller)
    states, inputs = np.nonzero((machine.action < 0) | (machine.next < 0))
    if len(states):
        agent.resolve(states, inputs, None)
    done = machine.quotient(np.arange(machine.n_states), (agent.action, agent.symbol, agent.next))
    done.info = dict(machine.info, completed_by_network=int(len(states)))
    return done
