"""Counterexample-guided extraction (issue 27, item 2; paper section 6.4,
"discretization of state"): extract a controller's machine, verify it
(tinyalgo/automata/verify.py), and while the verifier answers with an
instance the machine fails, record the network on that instance too and
extract again, until the machine is proved.

Each round: the machine (extracted, or given for the first round); the
verdict; for a counterexample, its length and whether the network itself
solves it.  A counterexample the network solves shows a transition the
recording never needed: recording the network on it adds that transition.
One the network fails shows the network wrong there: with ``train`` (e.g.
``tinyalgo.automata.retrain.retrain`` bound to the run's configuration) the
network is trained on the counterexamples found so far and the curriculum's
instances until it solves them, and the next round extracts the trained
network's machine; without it the loop stops and says so.

Each counterexample is recorded as many times as the fresh instances of one
complexity (``instances``): where the clusters put its steps together with
other episodes', its steps then win the majority that decides a transition,
so the next machine follows the network on it rather than failing it again.
Where a counterexample's length has few instances (at most 1,000: addition's
100 of one digit, multiplication's 80 of one digit), every instance of that
length is recorded too: the counterexample shows the recording missed cases
there, and they can all be covered.  With a census (``census_limit``), the
machine is also run on every instance of the counterexample's length (a
random sample where there are more than the limit) and the next round
records the network on those the machine fails and the network solves
(tinyalgo/automata/census.py): the family of instances the recording
missed, taught at once rather than found one counterexample a round.

Where the machine leaves the network on such an instance, its state held
the network's recurrent state together with others that answer the steps
just run otherwise: a k-means cluster and a behaviour tag that mixed two
memories, which six steps of random recorded paths never told apart.  With
``span`` > 0, after a round that ends with a counterexample the network is
run on it and on the census' failures it solves, and the recorded paths of
up to ``span`` steps that end where the machine leaves it
(``departure.departure_tests``) join the behaviour tests of every later
round: recurrent states that answer such a path differently get different
tags, as L* splits states on a counterexample's suffixes (Rivest and
Schapire's refinement of Angluin's algorithm).

Each round verifies several extractions of one recording, in order, and
keeps the first that is proved, else, of those refuted by a counterexample
(the next round needs one), the one that replays the most recorded episodes:
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

import time

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.behaviour import behaviour_tags, context_tests
from tinyalgo.automata.census import census
from tinyalgo.automata.departure import departure_tests, union
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.extract import CORNER_DIGITS, default_complexities, machines_and_rows, replay
from tinyalgo.automata.record import record, state_size
from tinyalgo.automata.repair import repair
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import describe, every_instance, length_of, make, rebuild, solves
from tinyalgo.tasks.corners import corner_batch
from tinyalgo.tasks.instances import concatenate


# The extractions a round verifies, in order (see the module doc): behaviour tags, and the k-means k's of each.
FEEDBACK = dict(context="feedback", depth=6, tests=8)
PREVIOUS = dict(context="previous", depth=1, tests=1)
K_VALUES = (1, 2, 4, 8, 16, 32)
FINE_K = (64, 128, 256, 512)
EXTRACTIONS = ((FEEDBACK, K_VALUES), (PREVIOUS, K_VALUES), (FEEDBACK, FINE_K))
DEPARTURE_SPAN = 0        # departure tests start up to this many steps before the machine leaves the network; 0: none
KEEP_FRAME = False        # later rounds keep the first extraction's k-means centres and behaviour tests


def recording_with(controller, task, base, complexities, instances, seed, corners, extra):
    """The recording of ``extract.extract`` (fresh instances of each
    complexity, the corner instances if ``corners``) that also runs the
    instances of ``extra`` (a list of batches: counterexamples, each as
    often as it should weigh, and whole lengths)."""
    parts = ([corner_batch(task, CORNER_DIGITS, base)] if corners else []) + list(extra)
    parts = [p for p in parts if p is not None]
    canned = concatenate(parts, make(task, base).vocab.NONE) if parts else None
    return record(controller, task, complexities, instances, base, seed, canned)


def candidates(controller, rec, seed: int = 0, extra=None, frame=None):
    """The machines a round verifies, in order: yields (how it was extracted,
    reduced machine, the fraction of recorded episodes it replays, the
    machine state of each recorded row).  ``extra``: the departure tests of
    the earlier rounds (``departure.departure_tests``), added to every
    variant's behaviour tests.  ``frame``: a dict of the k-means centres of
    each k and the behaviour tests of each variant's contexts
    (``behaviour.context_tests``) to use, which this fills with those it
    draws (see the module doc).  A feed-forward controller has one."""
    frame = {} if frame is None else frame
    if rec.state.shape[1] == 0:
        reduced, rows = machines_and_rows(rec, 1, seed)[2:]
        yield dict(k=1), reduced, replay(reduced, rec), rows
        return
    tags = {}
    for variant, ks in EXTRACTIONS:
        key = tuple(sorted(variant.items()))
        if key not in tags:
            frame[key] = context_tests(rec, variant["depth"], variant["tests"], seed, variant["context"],
                                       kept=frame.get(key))
            tags[key] = behaviour_tags(rec, controller, variant["depth"], variant["tests"], seed,
                                       context=variant["context"], extra=extra, paths=frame[key])
        for k in ks:
            if k not in frame:
                frame[k] = kmeans(rec.state, k, seed=seed)[0]
            reduced, rows = machines_and_rows(rec, k, seed, tags[key], centroids=frame[k])[2:]
            yield dict(variant, k=k), reduced, replay(reduced, rec), rows


def select(controller, rec, seed: int = 0, complete: bool = False, verify_options=None, repairs: int = 0,
           log=None, extra=None, frame=None) -> tuple:
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
    ``frame``: as for ``candidates``."""
    kept, tried = [], 0
    for how, machine, replayed, rows in candidates(controller, rec, seed, extra, frame):
        if complete:
            machine = complete_with_network(machine, controller)
        report = verify(machine, **(verify_options or {}))
        tried += 1
        kept.append(((report["verdict"] == "proved", report["verdict"] == "counterexample", replayed,
                      -machine.n_states), machine, report,
                     dict(how, replay=round(replayed, 4)), rows))
        if report["verdict"] == "proved":
            break
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


def refine(controller, task, base=10, complexities=None, instances=50, seed=0, corners=True, rounds=8,
           machine=None, verify_options=None, complete=False, train=None, repairs=0, census_limit=0,
           span=DEPARTURE_SPAN, keep_frame=KEEP_FRAME, log=None) -> dict:
    """Run the loop (see the module doc) for at most ``rounds`` rounds, from
    ``machine`` if given, else from an extraction.  ``train(controller,
    counterexamples) -> dict`` trains the controller in place when it fails a
    counterexample (its dict has ``fixed``: it now solves them); ``repairs``
    bounds the changes a round's repair makes (0: no repair); with
    ``census_limit`` > 0 each counterexample's length is searched for the
    instances the machine fails (``census.census``, at most ``census_limit``
    instances tested) and the next round records those the network solves;
    with ``span`` > 0 the later rounds' behaviour tests include the departure
    tests of the earlier rounds' counterexamples; with ``keep_frame`` the
    later rounds keep the first extraction's clusters and tests (see the
    module doc).  Returns
    dict(machine (the last), report (its verification), rounds [one dict a
    round, with its CPU seconds, training included], counterexamples (as the
    verifier describes them: ``witness.rebuild`` makes each an instance
    again), trained (whether the controller was changed))."""
    complexities = default_complexities(task) if complexities is None else list(complexities)
    found, rows, trained, failing, extra = [], [], False, [], None
    frame = {} if keep_frame else None
    cpu0 = time.process_time()
    for r in range(rounds):
        if rows:
            rows[-1]["cpu_seconds"] = round(time.process_time() - cpu0, 1)
        t0, cpu0 = time.perf_counter(), time.process_time()
        if machine is None:
            whole = [every_instance(task, base, n) for n in sorted({length_of(task, i) for i in found})]
            rec = recording_with(controller, task, base, complexities, instances, seed, corners,
                                 found * instances + [w for w in whole if w is not None] + failing)
            machine, report, how, tried = select(controller, rec, seed, complete, verify_options, repairs, log,
                                                 extra, frame=frame)
            how = dict(how, candidates=tried)
        else:
            report, how = verify(machine, **(verify_options or {})), {}
        seconds = time.perf_counter() - t0
        row = dict(round=r, states=machine.n_states, verdict=report["verdict"], length=report.get("length"),
                   extract_seconds=round(seconds - report["seconds"], 3), verify_seconds=report["seconds"],
                   extraction=how)
        rows.append(row)
        if report["verdict"] == "counterexample":
            inst = rebuild(report["instance"])
            row["network_solves"] = bool(solves(controller, task, base, inst)[0])
            taught = [inst] if row["network_solves"] else []
            if census_limit:
                c = census(machine, controller, length_of(task, inst), census_limit, seed)
                batch = c.pop("instances")
                if batch is not None:
                    failing.append(batch)
                    taught.append(batch)
                row["census"] = c
            if span and taught and state_size(controller):
                net = record(controller, task, [], 0, base, canned=concatenate(taught, make(task, base).vocab.NONE))
                new = departure_tests(machine, net, span)
                extra = new if extra is None else union(extra, new)
                row["departure_tests"] = dict(new=int(len(new[0])), total=int(len(extra[0])))
        if log:
            log(_line(row))
            if "census" in row:
                log(_census(row["census"]))
            if "departure_tests" in row:
                log(f"  departure tests: {row['departure_tests']['new']:,} recorded paths into the steps where the"
                    f" machine leaves the network, {row['departure_tests']['total']:,} so far")
        if report["verdict"] != "counterexample":
            break
        found.append(inst)
        if not row["network_solves"]:
            if train is None:
                row["stopped"] = "the network fails the counterexample too: it needs training on it"
                break
            row["training"] = train(controller, found)
            trained = True
            frame = {} if keep_frame else None  # the trained network's states: clusters and tests drawn again
            if log:
                log(_trained(row["training"]))
            if not row["training"]["fixed"]:
                row["stopped"] = "training did not make the network solve the counterexamples and the test"
                break
        if r + 1 == rounds:
            row["stopped"] = f"no proof in {rounds} rounds"
        else:
            machine = None                      # extract again, with the counterexamples recorded
    rows[-1]["cpu_seconds"] = round(time.process_time() - cpu0, 1)
    return dict(machine=machine, report=report, rounds=rows, counterexamples=[describe(task, i) for i in found],
                trained=trained)


def _census(c) -> str:
    return (f"  census of length {c['length']}: the machine fails {c['machine_fails']:,} of {c['tested']:,}"
            f" {'instances (all of them)' if c['exhaustive'] else 'random instances'}, the network solves"
            f" {c['network_solves']:,} of those; {c['recorded']:,} recorded next round")


def _trained(info) -> str:
    return (f"  trained {info['updates']} updates ({info['chars']} characters): {info['solved_counterexamples']} of"
            f" {info['counterexamples']} counterexamples solved, the test {info['test_solved']:.0%}")


def _line(row) -> str:
    what = {"proved": "proved", "not proved": "not proved"}.get(row["verdict"])
    if what is None:
        what = (f"counterexample of length {row['length']}, which the network "
                f"{'solves' if row.get('network_solves') else 'fails too'}")
    how = row.get("extraction") or {}
    chosen = (f"; tags {how['context']} x {how['depth']} steps, k {how['k']}, {how['candidates']} machines verified"
              if "context" in how else "")
    if "repairs" in how:
        chosen += f"; {how['repairs']} transitions repaired"
    if how.get("repaired_unproved"):
        chosen += f"; {len(how['repaired_unproved'])} repaired without a proof"
    return (f"round {row['round']}: {row['states']} states; {what} (extraction {row['extract_seconds']:.1f} s,"
            f" verification {row['verify_seconds']:.2f} s{chosen})")
