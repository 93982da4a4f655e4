"""One round of the counterexample-guided loop (tinyalgo/automata/loop.py;
paper section 6.4): the recording, the machines extracted
from it, and the one the round keeps.

Each round verifies several extractions of one recording, in order, and
keeps the first that is proved, else, of those refuted by a counterexample
(the next round needs one), the one that replays the most recorded episodes
(or, choosing by census, that fails the fewest instances: ``select``):
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
(tinyalgo/automata/repair.py), until one is proved.  If none is, the round
goes on as without repairs (its machine and counterexample are the best
unrepaired candidate's), so the repair can end a loop earlier but never
sends it elsewhere: every seed the loop proves without repairs it proves
with them, in the same round or an earlier one.

With ``complete``, each extracted machine first has its (state, symbol)
pairs never recorded answered by the network (``complete_with_network``), so
the machine verified is the network's wherever the network is asked, not the
default's.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.behaviour import behaviour_tags, context_tests
from tinyalgo.automata.census import LIMIT, failing, machine_failures
from tinyalgo.automata.discretise import kmeans, nearest_clusters
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
CHOICES = ("replay", "census")      # what ranks the refuted candidates first (``select``)


def recording_with(controller, task, base, complexities, instances, seed, corners, extra):
    """The recording of ``extract.extract`` (fresh instances of each
    complexity, the corner instances if ``corners``) that also runs the
    instances of ``extra`` (a list of batches: counterexamples, each as
    often as it should weigh, and whole lengths)."""
    parts = ([corner_batch(task, CORNER_DIGITS, base)] if corners else []) + list(extra)
    parts = [p for p in parts if p is not None]
    canned = concatenate(parts, make(task, base).vocab.NONE) if parts else None
    return record(controller, task, complexities, instances, base, seed, canned)


def candidates(controller, rec, seed: int = 0, extra=None, frame=None, minimal_too: bool = False):
    """The machines a round verifies, in order: yields (how it was extracted,
    reduced machine, the fraction of recorded episodes it replays, the
    machine state of each recorded row).  ``extra``: the departure tests of
    the earlier rounds (``departure.departure_tests``), added to every
    variant's behaviour tests.  ``frame``: a dict of the k-means centres of
    each k and the behaviour tests of each variant's contexts
    (``behaviour.context_tests``) to use, which this fills with those it
    draws (``loop.refine``'s ``keep_frame``).  With ``minimal_too``, each
    fine k's machine is followed by its minimal machine (before the
    don't-care reduction) completed by the network
    (``complete_with_network``), described with machine "minimal".  A
    feed-forward controller has one."""
    frame = {} if frame is None else frame
    if rec.state.shape[1] == 0:
        reduced, rows = machines_and_rows(rec, 1, seed)[2:4]
        yield dict(k=1), reduced, replay(reduced, rec), rows
        return
    tags, clusters = {}, {}
    for variant, ks in EXTRACTIONS:
        key = tuple(sorted(variant.items()))
        if key not in tags:
            frame[key] = context_tests(rec, variant["depth"], variant["tests"], seed, variant["context"],
                                       kept=frame.get(key))
            tags[key] = behaviour_tags(rec, controller, variant["depth"], variant["tests"], seed,
                                       context=variant["context"], extra=extra, paths=frame[key])
        for k in ks:
            if k not in clusters:
                clusters[k] = nearest_clusters(rec.state, frame[k]) if k in frame else kmeans(rec.state, k, seed=seed)
                frame.setdefault(k, clusters[k][0])
            _, minimal, reduced, rows, minimal_rows = machines_and_rows(rec, k, seed, tags[key], clusters[k])
            yield dict(variant, k=k), reduced, replay(reduced, rec), rows
            if minimal_too and ks is FINE_K:
                done = complete_with_network(minimal, controller)
                yield dict(variant, k=k, machine="minimal"), done, replay(done, rec), minimal_rows


def select(controller, rec, seed: int = 0, complete: bool = False, verify_options=None, repairs: int = 0,
           log=None, extra=None, frame=None, choose: str = "replay", lengths=(), limit: int = LIMIT,
           known=None) -> tuple:
    """Verify the ``candidates`` of ``rec`` in order; (machine, its
    verification, how it was extracted, candidates verified) of the first
    proved, else of the one replaying the most recorded episodes (then the
    fewest states) among those refuted by a counterexample, which the next
    round can use (among all if none is).  With ``repairs`` > 0 and no
    candidate proved, the candidates whose counterexample the network solves
    are repaired where they leave the network (tinyalgo/automata/repair.py,
    at most ``repairs`` changes each), best first, until one is proved; the
    round keeps the first proved, else the best unrepaired one (as without
    repairs), with the repairs tried listed in ``repaired_unproved``.
    ``frame``: as for ``candidates``.  With ``choose`` "census", the
    candidates include the fine k's minimal machines completed by the
    network (``candidates``' ``minimal_too``: a census ranks a machine the
    network completed as it ranks any other), and the refuted candidates
    are ranked by the instances they fail first
    (``census.machine_failures`` of every length in ``lengths`` and of every
    candidate's counterexample, ``limit`` instances a length at most, the
    same for each candidate, and those of ``known``, the failing instances
    of earlier rounds at lengths too long to run whole), then as above."""
    kept, tried = [], 0
    for how, machine, replayed, rows in candidates(controller, rec, seed, extra, frame, choose == "census"):
        if complete:
            machine = complete_with_network(machine, controller)
        report = verify(machine, **(verify_options or {}))
        tried += 1
        kept.append(((report["verdict"] == "proved", report["verdict"] == "counterexample", replayed,
                      -machine.n_states), machine, report,
                     dict(how, replay=round(replayed, 4)), rows))
        if report["verdict"] == "proved":
            break
    if choose == "census" and report["verdict"] != "proved":
        kept = _by_census(kept, lengths, limit, seed, known)
    kept.sort(key=lambda c: c[0], reverse=True)
    best = kept[0][1:4]
    if not repairs or best[1]["verdict"] == "proved":
        return best + (tried,)
    attempts = []
    for _, machine, report, how, rows in kept:
        if report["verdict"] != "counterexample":
            continue
        machine, report, done = repair(machine, rec, rows, controller, repairs, verify_options=verify_options, log=log)
        if report["verdict"] == "proved":
            return machine, report, dict(how, repairs=len(done["changes"]), replay_repaired=round(replay(machine, rec),
                                                                                               4)), tried
        attempts.append(dict(k=how.get("k"), context=how.get("context"), repairs=len(done["changes"]),
                             stopped=done["stopped"]))
    return best[:2] + (dict(best[2], repaired_unproved=attempts),) + (tried,)


def _by_census(kept, lengths, limit, seed, known=None):
    """``kept`` (``select``'s entries) with each refuted candidate's key led
    by minus the instances it fails of ``lengths``, of every candidate's
    counterexample length and of ``known`` (Instances, or None), and that
    count in its description."""
    lengths = sorted(set(lengths) | {c[2]["length"] for c in kept if c[2]["verdict"] == "counterexample"})
    out = []
    for key, machine, report, how, rows in kept:
        if key[1]:
            fails = sum(machine_failures(machine, n, limit, seed) for n in lengths)
            fails += len(failing(machine, known)) if known is not None else 0
            key, how = (key[:2] + (-fails,) + key[2:],
                        dict(how, census_failures=fails, census_lengths=lengths,
                             census_known=0 if known is None else len(known)))
        else:
            key = key[:2] + (0,) + key[2:]
        out.append((key, machine, report, how, rows))
    return out


def complete_with_network(machine, controller):
    """A copy of ``machine`` whose unknown entries (never recorded) are the
    network's answers, as ``MachineAgent`` gives them (one step from the
    state's cluster centre, with the state's own feedback fields as the
    observation): a machine without unknown pairs."""
    agent = MachineAgent(machine, controller)
    states, inputs = np.nonzero((machine.action < 0) | (machine.next < 0))
    if len(states):
        agent._resolve(states, inputs, None)
    done = machine.quotient(np.arange(machine.n_states), (agent.action, agent.symbol, agent.next))
    done.info = dict(machine.info, completed_by_network=int(len(states)))
    return done
