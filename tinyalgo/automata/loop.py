"""Counterexample-guided extraction (paper section 6.4,
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
missed, taught at once rather than found one counterexample a round.  Where
the length has too many instances to run them all, ``census_around`` also
runs the counterexample's neighbours (one column of digits changed), which
a random sample of a large length misses.

Each round records a larger recording than the last, and by default clusters
it and draws its behaviour tests afresh, so a family of instances taught in
one round can be kept while another one breaks.  With ``keep_frame``, the
rounds after the first keep the first extraction's frame: each k's k-means
centres (every row of the larger recording joins its nearest centre's
cluster) and the recorded paths each context is tested on (a context new to
the recording draws its own); the recorded counterexamples then change the
machine through the rows they add, where they are read.  Training the
network changes its states: the round after it draws a new frame.

A round keeps, of the machines it extracts and the verifier refutes, the
one that replays the most recorded episodes; with ``choose`` "census", the
one that fails the fewest instances of the counterexamples' lengths (the
same instances for each, and the failing ones earlier rounds found at
lengths too long to run whole), among candidates that include each fine k's
minimal machine completed by the network.  A round's machines, the one it
keeps and its repairs are tinyalgo/automata/rounds.py's.
"""
from __future__ import annotations

import time

import numpy as np

from tinyalgo.automata.census import LIMIT as CENSUS_LIMIT, RECORDED as CENSUS_RECORDED, batches, census, exhaustive
from tinyalgo.automata.extract import default_complexities
from tinyalgo.automata.rounds import recording_with, select
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import describe, every_instance, length_of, make, rebuild, solves
from tinyalgo.tasks.instances import concatenate

SHORT = 0                 # first train the network on its failures at lengths 1..SHORT, run whole; 0: not
SHORT_TRAINED = 200       # on at most this many of them (a random subset)
KEEP_FRAME = False        # later rounds keep the first extraction's k-means centres and behaviour tests
CHOOSE = "replay"         # a round keeps the refuted candidate replaying the most recorded episodes (rounds.CHOICES)


def refine(controller, task, base=10, complexities=None, instances=50, seed=0, corners=True, rounds=8,
           machine=None, verify_options=None, complete=False, train=None, repairs=0, census_limit=0,
           census_recorded=CENSUS_RECORDED, census_around=False, keep_frame=KEEP_FRAME,
           choose=CHOOSE, short=SHORT, log=None, clock=time.process_time) -> dict:
    """Run the loop (see the module doc) for at most ``rounds`` rounds, from
    ``machine`` if given, else from an extraction.  ``train(controller,
    counterexamples) -> dict`` trains the controller in place when it fails a
    counterexample (its dict has ``fixed``: it now solves them); ``repairs``
    bounds the changes a round's repair makes (0: no repair); with
    ``census_limit`` > 0 each counterexample's length is searched for the
    instances the machine fails (``census.census``, at most ``census_limit``
    instances tested) and the next round records those the network solves
    (at most ``census_recorded``, a random subset; with ``census_around``, a
    length too long to run whole also runs the counterexample's
    ``census.neighbours``);
    with ``keep_frame`` the
    later rounds keep the first extraction's clusters and tests (see the
    module doc); ``choose`` "census" ranks a round's refuted candidates by
    the instances they fail of the counterexamples' lengths (``rounds.select``); with ``short`` > 0 the
    network is first trained (``train``) on the instances of lengths 1 to ``short`` that it fails
    (``short_failures``; round 0's ``short_training``).  ``clock`` gives the CPU seconds each
    round's ``cpu_seconds`` counts.  Returns
    dict(machine (the last), report (its verification), rounds [one dict a
    round, with its CPU seconds, training included], counterexamples (as the
    verifier describes them: ``witness.rebuild`` makes each an instance
    again), trained (whether the controller was changed))."""
    complexities = default_complexities(task) if complexities is None else list(complexities)
    found, rows, trained, failing = [], [], False, []
    frame = {} if keep_frame else None
    cpu0 = clock()
    short_row = {}                              # round 0's short_training
    if short:
        if train is None:
            raise ValueError("training on the short failures needs train")
        got = short_failures(controller, task, base, short, census_limit or CENSUS_LIMIT, seed)
        info = {k: v for k, v in got.items() if k != "instances"}
        if got["instances"] is not None:
            info["training"] = train(controller, [got["instances"]])
            trained = True
        short_row = dict(short_training=info)
        if log:
            log(_short(info))
    for r in range(rounds):
        if rows:                                # round 0's time includes the training on the short failures
            rows[-1]["cpu_seconds"] = round(clock() - cpu0, 1)
            cpu0 = clock()
        t0 = time.perf_counter()
        if machine is None:
            whole = [every_instance(task, base, n) for n in sorted({length_of(task, i) for i in found})]
            rec = recording_with(controller, task, base, complexities, instances, seed, corners,
                                 found * instances + [w for w in whole if w is not None] + failing)
            limit = census_limit or CENSUS_LIMIT
            machine, report, how, tried = select(controller, rec, seed, complete, verify_options, repairs, log,
                                                 frame=frame, choose=choose,
                                                 lengths=[length_of(task, i) for i in found], limit=limit,
                                                 known=_long(task, base, found + failing, limit)
                                                 if choose == "census" else None)
            how = dict(how, candidates=tried)
        else:
            report, how = verify(machine, **(verify_options or {})), {}
        seconds = time.perf_counter() - t0
        row = dict(round=r, states=machine.n_states, verdict=report["verdict"], length=report.get("length"),
                   extract_seconds=round(seconds - report["seconds"], 3), verify_seconds=report["seconds"],
                   extraction=how, **(short_row if r == 0 else {}))
        rows.append(row)
        if report["verdict"] == "counterexample":
            inst = rebuild(report["instance"])
            row["network_solves"] = bool(solves(controller, task, base, inst)[0])
            taught = [inst] if row["network_solves"] else []
            if census_limit:
                c = census(machine, controller, length_of(task, inst), census_limit, seed, census_recorded,
                           inst if census_around else None)
                batch = c.pop("instances")
                if batch is not None:
                    failing.append(batch)
                    taught.append(batch)
                row["census"] = c
        if log:
            log(_line(row))
            if "census" in row:
                log(_census(row["census"]))
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
    rows[-1]["cpu_seconds"] = round(clock() - cpu0, 1)
    return dict(machine=machine, report=report, rounds=rows, counterexamples=[describe(task, i) for i in found],
                trained=trained)


def short_too_long(task, base, up_to: int, limit: int = CENSUS_LIMIT):
    """The shortest length from 1 to ``up_to`` with more than ``limit`` instances (or none counted), or None."""
    return next((n for n in range(1, up_to + 1) if not exhaustive(task, base, n, limit)), None)


def short_failures(controller, task, base, up_to: int, limit: int = CENSUS_LIMIT, seed: int = 0) -> dict:
    """The network run on every instance of lengths 1 to ``up_to`` (each
    must have at most ``limit``): dict(lengths, network_fails (of each
    length), trained_on, instances (at most ``SHORT_TRAINED`` of those it
    fails, a random subset drawn with ``seed``, in order; None if it fails
    none))."""
    n = short_too_long(task, base, up_to, limit)
    if n is not None:
        raise ValueError(f"training on the short failures runs every instance of lengths 1 to {up_to}; length {n}"
                         f" has more than {limit:,}")
    failed, fails = [], []
    for n in range(1, up_to + 1):
        got = [b.take(np.nonzero(~solves(controller, task, base, b))[0]) for b in batches(task, base, n, limit, True,
                                                                                          None)]
        fails.append(sum(len(b) for b in got))
        failed += [b for b in got if len(b)]
    out = dict(lengths=list(range(1, up_to + 1)), network_fails=fails, trained_on=0, instances=None)
    if failed:
        every = concatenate(failed, make(task, base).vocab.NONE)
        chosen = np.random.default_rng(seed).choice(len(every), min(SHORT_TRAINED, len(every)), replace=False)
        out.update(trained_on=len(chosen), instances=every.take(np.sort(chosen)))
    return out


def _long(task, base, parts, limit):
    """The instances of ``parts`` (batches, each of one length) at lengths with more
    than ``limit`` instances, as one batch, or None."""
    long = [b for b in parts if not exhaustive(task, base, length_of(task, b), limit)]
    return concatenate(long, make(task, base).vocab.NONE) if long else None


def _short(info) -> str:
    fails = ", ".join(f"{f:,} of length {n}" for n, f in zip(info["lengths"], info["network_fails"]))
    line = f"short lengths: the network fails {fails}"
    return line + ("; " + _trained(info["training"]).strip() if "training" in info else "")


def _census(c) -> str:
    kind = ("instances (all of them)" if c["exhaustive"] else
            f"instances ({c['neighbours']:,} next to the counterexample, the others random)" if c.get("neighbours") else
            "random instances")
    return (f"  census of length {c['length']}: the machine fails {c['machine_fails']:,} of {c['tested']:,} {kind},"
            f" the network solves {c['network_solves']:,} of those; {c['recorded']:,} recorded next round")


def _trained(info) -> str:
    return (f"  trained {info['updates']} updates ({info['chars']} characters): {info['solved_counterexamples']} of"
            f" {info['counterexamples']} counterexamples solved, the test {info['test_solved']:.0%}")


def _line(row) -> str:
    what = {"proved": "proved", "not proved": "not proved"}.get(row["verdict"])
    if what is None:
        what = (f"counterexample of length {row['length']}, which the network "
                f"{'solves' if row.get('network_solves') else 'fails too'}")
    how = row.get("extraction") or {}
    chosen = (f"; tags {how['context']} x {how['depth']} steps, k {how['k']}"
              f"{', minimal machine completed by the network' if how.get('machine') == 'minimal' else ''},"
              f" {how['candidates']} machines verified" if "context" in how else "")
    if how.get("census_failures") is not None:
        chosen += (f"; fails {how['census_failures']:,} instances of length"
                   f" {', '.join(map(str, how['census_lengths']))}"
                   + (f" and of the {how['census_known']:,} failing ones found before" if how.get("census_known")
                      else ""))
    if "repairs" in how:
        chosen += f"; {how['repairs']} transitions repaired"
    if how.get("repaired_unproved"):
        chosen += f"; {len(how['repaired_unproved'])} repaired without a proof"
    return (f"round {row['round']}: {row['states']} states; {what} (extraction {row['extract_seconds']:.1f} s,"
            f" verification {row['verify_seconds']:.2f} s{chosen})")
