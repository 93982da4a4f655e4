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
there, and they can all be covered.  With a census (``census``), the
machine is also run on every instance of the counterexample's length (a
random sample where there are more than the limit) and the next round
records the network on those the machine fails and the network solves
(tinyalgo/automata/census.py): the family of instances the recording
missed, taught at once rather than found one counterexample a round.

A round keeps, of the machines it extracts and the verifier refutes, the
one that replays the most recorded episodes (``rounds.Candidate.rank``).
With ``repairs``, a round that proves none repairs them where they leave the
network (tinyalgo/automata/repair.py); with ``faithful``, no repair answers
a recorded step of the network otherwise than the network did.  A round's
machines, the one it keeps and its repairs are tinyalgo/automata/rounds.py's.

The loop's options are one record, ``LoopOptions``: the ``verify-loop``
command's options and loop.json's ``options`` follow from its fields.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from tinyalgo.automata.census import LIMIT as CENSUS_LIMIT, census
from tinyalgo.automata.extract import default_complexities
from tinyalgo.automata.rounds import recording_with, select
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import describe, every_instance, length_of, rebuild, solves


@dataclass(frozen=True)
class LoopOptions:
    """The options of the loop, each declared once (``tinyalgo verify-loop``'s options are these fields).

    complexities: the recording's complexities (None: ``extract.default_complexities``, 12 up to 100);
    instances: fresh instances recorded per complexity, and how often each counterexample is recorded;
    seed: of the recorded instances, k-means and the census' sample;
    corners: record the task's corner instances;
    rounds: at most this many rounds;
    train_updates: where the network fails a counterexample, train it for at most this many updates (0: stop
        there; read by whoever builds ``refine``'s ``train``, e.g. tinyalgo/cli/verify.py with retrain.py);
    repairs: changes a round's repairs make at most, over all its machines (0: no repair);
    faithful: no repair answers a recorded step of the network otherwise than the network (repair.py);
    census: instances of each counterexample's length run on the machine (all, or this many random ones
        where there are more; 0: only the counterexample);
    complete: answer each machine's pairs never recorded by the network before verifying it.
    """

    complexities: tuple | None = None
    instances: int = 50
    seed: int = 0
    corners: bool = True
    rounds: int = 8
    train_updates: int = 2000
    repairs: int = 100
    faithful: bool = False
    census: int = CENSUS_LIMIT
    complete: bool = False

    def as_dict(self) -> dict:
        d = asdict(self)
        return dict(d, complexities=None if self.complexities is None else list(self.complexities))


def refine(controller, task, base=10, options: LoopOptions = LoopOptions(), machine=None, train=None,
           verify_options=None, log=None, clock=time.process_time) -> dict:
    """Run the loop (see the module doc) with ``options``, from ``machine``
    if given, else from an extraction.  ``train(controller, counterexamples)
    -> dict`` trains the controller in place when it fails a counterexample
    (its dict has ``fixed``: it now solves them; None: the loop stops there).
    ``clock`` gives the CPU seconds each round's ``cpu_seconds`` counts.
    Returns dict(machine (the last), report (its verification), rounds [one
    dict a round, with its CPU seconds, training included], counterexamples
    (as the verifier describes them: ``witness.rebuild`` makes each an
    instance again), trained (whether the controller was changed))."""
    o = options
    complexities = default_complexities(task) if o.complexities is None else list(o.complexities)
    found, rows, trained, failing = [], [], False, []
    cpu0 = clock()
    for r in range(o.rounds):
        if rows:
            rows[-1]["cpu_seconds"] = round(clock() - cpu0, 1)
            cpu0 = clock()
        t0 = time.perf_counter()
        if machine is None:
            whole = [every_instance(task, base, n) for n in sorted({length_of(task, i) for i in found})]
            rec = recording_with(controller, task, base, complexities, o.instances, o.seed, o.corners,
                                 found * o.instances + [w for w in whole if w is not None] + failing)
            machine, report, how, tried = select(controller, rec, o.seed, o.complete, verify_options, o.repairs,
                                                 log, faithful=o.faithful)
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
            if o.census:
                c = census(machine, controller, length_of(task, inst), o.census, o.seed)
                batch = c.pop("instances")
                if batch is not None:
                    failing.append(batch)
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
            if log:
                log(_trained(row["training"]))
            if not row["training"]["fixed"]:
                row["stopped"] = "training did not make the network solve the counterexamples and the test"
                break
        if r + 1 == o.rounds:
            row["stopped"] = f"no proof in {o.rounds} rounds"
        else:
            machine = None                      # extract again, with the counterexamples recorded
    rows[-1]["cpu_seconds"] = round(clock() - cpu0, 1)
    return dict(machine=machine, report=report, rounds=rows, counterexamples=[describe(task, i) for i in found],
                trained=trained)


def _census(c) -> str:
    kind = "instances (all of them)" if c["exhaustive"] else "random instances"
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
              ","
              f" {how['candidates']} machines verified" if "context" in how else "")
    if "repairs" in how:
        chosen += f"; {how['repairs']} transitions repaired"
    if how.get("repaired_unproved"):
        chosen += f"; {len(how['repaired_unproved'])} repaired without a proof"
    return (f"round {row['round']}: {row['states']} states; {what} (extraction {row['extract_seconds']:.1f} s,"
            f" verification {row['verify_seconds']:.2f} s{chosen})")
