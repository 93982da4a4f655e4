"""The AALpy comparison's table (tinyalgo/automata/aalpy_learn.py): one row
per network, learner and oracle, beside tinyalgo's own proof of the same
network (a kept proof folder ``<task>-s<seed>`` with machine.json and
loop.json, as ``tinyalgo experiment certified --keep`` writes them).

``run`` compares each network in turn and writes OUT/results.csv and
OUT/README.md after each (rows of networks compared earlier, in an earlier
command too, are kept; a network compared again replaces its rows).
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import statistics

from tinyalgo.automata.aalpy_learn import LEARNERS, ORACLES, RANDOM_WALK, STATE_PREFIX, W_EXTRA_STATES, compare
from tinyalgo.automata.machine import load_machine
from tinyalgo.runs.fileio import atomic_write_bytes

CSV = "results.csv"
COLUMNS = ("task", "seed", "learner", "oracle", "states", "verdict", "cex_length", "network_solves_cex",
           "tinyalgo_solves_cex", "stopped", "rounds", "membership_queries", "membership_steps", "equivalence_queries",
           "equivalence_steps", "seconds", "verify_seconds", "agree_step", "agree_instance", "oracle_cexes",
           "cexes_tinyalgo_agrees", "cexes_tinyalgo_recorded", "cexes_tinyalgo_unrecorded", "oracle_on_tinyalgo",
           "tinyalgo_states", "tinyalgo_verdict", "tinyalgo_seconds", "command")


def seed_of(folder: str) -> int:
    """The seed in a run folder's name (``<task>-<column>-s<seed>``)."""
    m = re.search(r"-s(\d+)$", os.path.basename(os.path.normpath(folder)))
    if m is None:
        raise ValueError(f"{folder}: the folder's name does not end in -s<seed> (a run folder of a sweep)")
    return int(m.group(1))


def tinyalgo_proof(proofs: list, task: str, seed: int):
    """(machine, {states, verdict, seconds}) of the kept proof of ``task`` seed
    ``seed`` in the first folder of ``proofs`` that holds one (a folder
    ``<task>-s<seed>``, or a verify-loop folder ``loop-<task>-s<seed>``), or
    (None, {}) where there is none.
    seconds: the loop's extraction and verification, all rounds."""
    folders = [os.path.join(root, name) for root in proofs for name in (f"{task}-s{seed}", f"loop-{task}-s{seed}")]
    folder = next((f for f in folders if os.path.isfile(os.path.join(f, "machine.json"))), None)
    if folder is None:
        return None, {}
    machine = load_machine(os.path.join(folder, "machine.json"), task)
    ref = dict(tinyalgo_states=machine.n_states)
    try:
        with open(os.path.join(folder, "loop.json")) as f:
            rounds = json.load(f)["rounds"]
        ref.update(tinyalgo_verdict=rounds[-1]["verdict"],
                   tinyalgo_seconds=round(sum(r["extract_seconds"] + r["verify_seconds"] for r in rounds), 1))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    return machine, ref


def read_rows(out: str) -> list:
    path = os.path.join(out, CSV)
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(rows: list, out: str, steps: int, seconds=None) -> None:
    """OUT/results.csv and OUT/README.md, atomically."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_bytes(os.path.join(out, CSV), buf.getvalue().encode())
    atomic_write_bytes(os.path.join(out, "README.md"), markdown(rows, steps, seconds).encode())


def _median(values, spec: str = "g") -> str:
    """The median of the given values (blanks left out) formatted with ``spec``; "-" if there are none."""
    values = [float(v) for v in values if v not in ("", None) and float(v) == float(v)]     # no blanks, no NaN
    return format(statistics.median(values), spec) if values else "-"


def markdown(rows: list, steps: int, seconds=None) -> str:
    """The summary by task, learner and oracle, then every row."""
    commands = list(dict.fromkeys(r.get("command", "") for r in rows))
    lines = ["# AALpy's L* and KV on the trained networks, against tinyalgo's extraction and verifier", "",
             "Made by", ""] + [f"    {c}" for c in commands] + ["",
             f"Budget of every learning run: {steps:,} network steps (membership and equivalence queries together)"
             + (f" or {seconds:g} s, whichever ends first" if seconds else " (no wall-clock limit)")
             + "; the same for each oracle run against tinyalgo's machine."
             f" Oracles: the W-method with {W_EXTRA_STATES} state more than the hypothesis; random walks of"
             f" {RANDOM_WALK['num_steps']:,} steps per equivalence query (reset probability"
             f" {RANDOM_WALK['reset_prob']}); {STATE_PREFIX['walks_per_state']} walks of"
             f" {STATE_PREFIX['walk_len']} steps from each state's access sequence (state-prefix coverage).", "",
             "## Summary", "",
             "States: the median over the runs that gave a hypothesis. tinyalgo: its kept proof of the same networks"
             " (states; extraction and verification seconds of its loop, all rounds).", "",
             "| task | learner | oracle | networks | proved by tinyalgo's verifier | refuted (network solves the"
             " counterexample) | no hypothesis | states (median) | network steps (median) | seconds (median) |"
             " stopped by the budget | tinyalgo: states, seconds (median) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for task in dict.fromkeys(r["task"] for r in rows):
        for learner in LEARNERS:
            for oracle in ORACLES:
                group = [r for r in rows if (r["task"], r["learner"], r["oracle"]) == (task, learner, oracle)]
                if not group:
                    continue
                steps_used = [int(r["membership_steps"]) + int(r["equivalence_steps"]) for r in group]
                refuted = [r for r in group if r["verdict"] == "counterexample"]
                lines.append(f"| {task} | {learner} | {oracle} | {len(group)} |"
                             f" {sum(r['verdict'] == 'proved' for r in group)} |"
                             f" {len(refuted)} ({sum(str(r['network_solves_cex']) == 'True' for r in refuted)}) |"
                             f" {sum(r['verdict'] == 'no hypothesis' for r in group)} |"
                             f" {_median([r['states'] for r in group if int(r['states']) > 0])} |"
                             f" {_median(steps_used, ',.0f')} | {_median([r['seconds'] for r in group], '.1f')} |"
                             f" {sum(str(r['stopped']).startswith('budget') for r in group)} |"
                             f" {_median([r.get('tinyalgo_states', '') for r in group])},"
                             f" {_median([r.get('tinyalgo_seconds', '') for r in group], '.0f')} |")
    lines += ["", "## Counterexamples, both ways", "",
              "tinyalgo's verifier on AALpy's machines: how many it refutes, and on how many of those boards the"
              " network and tinyalgo's proved machine are right (a board where AALpy's machine leaves the network,"
              " which AALpy's oracle did not find). AALpy's oracles' counterexamples during learning, replayed on"
              " tinyalgo's proved machine: where it agrees with the network on the whole word, or first differs at"
              " a (state, input) pair its recording held, or at one it never recorded (answered by the default)."
              " Each oracle once on tinyalgo's proved machine as the hypothesis: where the counterexample first"
              " differs.", "",
              "| task | AALpy machines refuted / learned | network solves the refuting board | tinyalgo's machine"
              " solves it | oracle counterexamples: agrees / recorded / unrecorded | oracle on tinyalgo's machine:"
              " none / recorded / unrecorded |", "|---|---|---|---|---|---|"]
    for task in dict.fromkeys(r["task"] for r in rows):
        group = [r for r in rows if r["task"] == task]
        learned = [r for r in group if r["verdict"] != "no hypothesis"]
        refuted = [r for r in learned if r["verdict"] == "counterexample"]
        count = lambda key: sum(int(r.get(key) or 0) for r in group)      # noqa: E731
        once = {(r["seed"], r["oracle"]): str(r.get("oracle_on_tinyalgo", "")) for r in group}
        lines.append(f"| {task} | {len(refuted)} / {len(learned)} |"
                     f" {sum(str(r['network_solves_cex']) == 'True' for r in refuted)} |"
                     f" {sum(str(r['tinyalgo_solves_cex']) == 'True' for r in refuted)} |"
                     f" {count('cexes_tinyalgo_agrees')} / {count('cexes_tinyalgo_recorded')} /"
                     f" {count('cexes_tinyalgo_unrecorded')} | {sum(v == 'none' for v in once.values())} /"
                     f" {sum('a recorded' in v for v in once.values())} /"
                     f" {sum('unrecorded' in v for v in once.values())} |")
    lines += ["", "## Every run", "",
              "verdict: tinyalgo's verifier on AALpy's machine (counterexample: its length, and whether the network"
              " and tinyalgo's proved machine solve it). MQ / EQ: membership / equivalence queries and steps that"
              " reached the network. agree@100: AALpy's machine against the network on 20 fresh instances of"
              " complexity 100 (per step, per instance). oracle cexes: the oracle's counterexamples during learning;"
              " on how many tinyalgo's proved machine agrees with the network / first differs at a (state, input)"
              " pair its recording held / at one it never recorded. oracle on tinyalgo: the same oracle with"
              " tinyalgo's proved machine as the hypothesis, where it first differs from the network.", "",
              "| task | seed | learner | oracle | states | tinyalgo states | verdict | stopped | hypotheses | MQ |"
              " EQ | s | agree@100 | oracle cexes (agrees/recorded/unrecorded) | oracle on tinyalgo |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = r["verdict"] + (f" (length {r['cex_length']}; network solves: {r['network_solves_cex']},"
                                  f" tinyalgo's machine: {r['tinyalgo_solves_cex']})" if r["cex_length"] != "" else "")
        lines.append(f"| {r['task']} | {r['seed']} | {r['learner']} | {r['oracle']} | {r['states']} |"
                     f" {r.get('tinyalgo_states', '')} | {verdict} | {r['stopped']} | {r['rounds']} |"
                     f" {int(r['membership_queries']):,} / {int(r['membership_steps']):,} |"
                     f" {int(r['equivalence_queries']):,} / {int(r['equivalence_steps']):,} | {r['seconds']} |"
                     f" {_median([r['agree_step']], '.3f')} / {_median([r['agree_instance']], '.2f')} |"
                     f" {r['oracle_cexes']}"
                     f" ({r.get('cexes_tinyalgo_agrees', '')}/{r.get('cexes_tinyalgo_recorded', '')}/"
                     f"{r.get('cexes_tinyalgo_unrecorded', '')}) | {r.get('oracle_on_tinyalgo', '')} |")
    return "\n".join(lines) + "\n"


def run(networks: list, proofs: list, out: str, command: str, steps: int, seconds=None, seed: int = 0,
        verify_seconds: float = 60, log=print) -> list:
    """Compare every network, given as (run folder, controller, task, base),
    and write the table after each."""
    rows = read_rows(out)
    for folder, controller, task, base in networks:
        s = seed_of(folder)
        proved, ref = tinyalgo_proof(proofs, task, s)
        log(f"{folder}: {task} seed {s}" + (f", tinyalgo's proof {ref.get('tinyalgo_states')} states" if proved
                                             else ", no tinyalgo proof kept"))
        new = compare(controller, task, base, proved, steps, seconds, seed, verify_seconds, log=log)
        for r in new:
            r.update(ref, seed=s, command=command)
        rows = [r for r in rows if (r["task"], str(r["seed"])) != (task, str(s))] + new
        write(rows, out, steps, seconds)
    return rows
