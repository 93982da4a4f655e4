"""The AALpy comparison's table (tinyalgo/automata/aalpy_learn.py): one row
per network, learner and oracle, beside tinyalgo's own proof of the same
network (a kept proof folder ``<task>-s<seed>`` with machine.json and
loop.json, as ``tinyalgo experiment certified --keep`` writes them).

``prepare`` reads and checks, before any learning, OUT/results.csv (rows of
networks compared earlier, in an earlier command too) and each network's
kept proof: a file or folder that does not fit is one ValueError naming it.
``run`` then compares each network in turn and writes OUT/results.csv and
OUT/README.md after each (the earlier rows are kept; a network compared
again replaces its rows).
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import statistics

from tinyalgo.automata.aalpy_learn import LEARNERS, ORACLES, RANDOM_WALK, STATE_PREFIX, W_EXTRA_STATES, compare
from tinyalgo.automata.machine import load_machine
from tinyalgo.experiments.certified import agreement_file, file_sha256, read_loop, seed_of as loop_seed
from tinyalgo.runs.fileio import atomic_write_bytes

CSV = "results.csv"
COLUMNS = ("task", "seed", "learner", "oracle", "states", "verdict", "cex_length", "network_solves_cex",
           "tinyalgo_solves_cex", "stopped", "rounds", "membership_queries", "membership_steps", "equivalence_queries",
           "equivalence_steps", "seconds", "verify_seconds", "agree_step", "agree_instance", "oracle_cexes",
           "cexes_tinyalgo_agrees", "cexes_tinyalgo_recorded", "cexes_tinyalgo_unrecorded", "oracle_on_tinyalgo",
           "tinyalgo_states", "tinyalgo_verdict", "tinyalgo_seconds", "command")
VERDICTS = ("proved", "counterexample", "not proved", "no hypothesis")
# what a cell of results.csv may hold, where it is not any text: (kind, blank allowed); kinds: "int" (an
# integer of at least 0), "number" (a finite number of at least 0), "fraction" (a number in [0, 1], or nan
# where no machine was learned), or the allowed values
CELLS = {"seed": ("int", False), "learner": (LEARNERS, False), "oracle": (ORACLES, False), "states": ("int", False),
         "verdict": (VERDICTS, False), "cex_length": ("int", True), "network_solves_cex": (("True", "False"), True),
         "tinyalgo_solves_cex": (("True", "False"), True), "rounds": ("int", False),
         "membership_queries": ("int", False), "membership_steps": ("int", False),
         "equivalence_queries": ("int", False), "equivalence_steps": ("int", False), "seconds": ("number", False),
         "verify_seconds": ("number", False), "agree_step": ("fraction", False),
         "agree_instance": ("fraction", False), "oracle_cexes": ("int", False),
         "cexes_tinyalgo_agrees": ("int", True), "cexes_tinyalgo_recorded": ("int", True),
         "cexes_tinyalgo_unrecorded": ("int", True), "tinyalgo_states": ("int", True),
         "tinyalgo_seconds": ("number", True)}
_ALLOWED = {"int": "an integer of at least 0", "number": "a finite number of at least 0",
            "fraction": "a number in [0, 1] or nan"}


def seed_of(folder: str) -> int:
    """The seed in a run folder's name (``<task>-<column>-s<seed>``)."""
    m = re.search(r"-s(\d+)$", os.path.basename(os.path.normpath(folder)))
    if m is None:
        raise ValueError(f"{folder}: the folder's name does not end in -s<seed> (a run folder of a sweep)")
    return int(m.group(1))


def tinyalgo_proof(proofs: list, task: str, seed: int, base: int = 10, network: str | None = None):
    """(machine, {states, verdict, seconds}) of the kept proof of ``task`` seed
    ``seed`` in the first folder of ``proofs`` that holds one (a folder
    ``<task>-s<seed>``, or a verify-loop folder ``loop-<task>-s<seed>``), or
    (None, {}) where there is none.
    seconds: the loop's extraction and verification, all rounds.
    The proof is checked first: a machine of ``task`` in base ``base``, a
    loop.json (where there is one) of the same task, base and seed, and, where
    the folder says which network the proof is of (agreement.json's
    network_sha256; a verify-loop's retrained checkpoint.npz), that it is
    ``network`` (a checkpoint's path; not checked without it).  A ValueError
    naming the folder and the problem otherwise."""
    folders = [os.path.join(root, name) for root in proofs for name in (f"{task}-s{seed}", f"loop-{task}-s{seed}")]
    folder = next((f for f in folders if os.path.isfile(os.path.join(f, "machine.json"))), None)
    if folder is None:
        return None, {}
    machine = load_machine(os.path.join(folder, "machine.json"), task)
    if machine.base != base:
        raise ValueError(f"{folder}: its machine is of base {machine.base}; the network is of base {base}")
    ref = dict(tinyalgo_states=machine.n_states)
    if os.path.isfile(os.path.join(folder, "loop.json")):
        loop = read_loop(folder)
        if (loop["task"], loop.get("base", 10), loop_seed(loop)) != (task, base, seed):
            raise ValueError(f"{folder}: its loop.json is of {loop['task']} seed {loop_seed(loop)} in base"
                             f" {loop.get('base', 10)}; the network is {task} seed {seed} in base {base}")
        rounds = loop["rounds"]
        ref.update(tinyalgo_verdict=rounds[-1]["verdict"],
                   tinyalgo_seconds=round(sum(r["extract_seconds"] + r["verify_seconds"] for r in rounds), 1))
    if network is not None:
        recorded = []
        got = agreement_file(folder)                    # checked, None where there is none
        if got:
            recorded.append((got["network_sha256"], f"agreement.json says {got['network']}"))
        if os.path.isfile(os.path.join(folder, "checkpoint.npz")):
            recorded.append((file_sha256(os.path.join(folder, "checkpoint.npz")), "its retrained checkpoint.npz"))
        sha = file_sha256(network) if recorded else None
        for want, which in recorded:
            if want != sha:
                raise ValueError(f"{folder}: its proof is of another network than {network} ({which}, SHA-256"
                                 f" {want[:12]}; given {sha[:12]}); give the network the proof is of, or --proofs"
                                 " folders without this proof")
    return machine, ref


def _cell_problem(text: str, kind) -> str | None:
    """What is wrong with a results.csv cell ``text`` of kind ``kind`` (see ``CELLS``); None if nothing."""
    if isinstance(kind, tuple):
        return None if text in kind else "one of " + ", ".join(kind)
    try:
        value = int(text) if kind == "int" else float(text)
    except ValueError:
        return _ALLOWED[kind]
    if kind == "fraction":
        ok = math.isnan(value) or 0 <= value <= 1
    else:
        ok = math.isfinite(value) and value >= 0
    return None if ok else _ALLOWED[kind]


def read_rows(out: str) -> list:
    """The rows of OUT/results.csv ([] without one, or for an empty file), each a dict of ``COLUMNS``,
    read and checked completely: UTF-8 (a byte-order mark is skipped), the header ``COLUMNS``, every row
    (blank lines skipped) as many fields as the header, every cell as ``CELLS`` allows.  A ValueError
    naming the file, the line and the column otherwise."""
    path = os.path.join(out, CSV)
    if not os.path.isfile(path):
        return []
    keep = "; move the file away to start a new table"
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8-sig")
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start}); allowed: the results.csv this command"
                         f" writes{keep}") from None
    if not text:
        return []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows, line = [], 1                                  # the line where the row being read begins
    try:
        header = next(reader)
        if header != list(COLUMNS):
            missing = [c for c in COLUMNS if c not in header]
            extra = [h for h in header if h not in COLUMNS]
            found = (f"it lacks {len(missing)} of the table's columns ({', '.join(missing[:3])}"
                     f"{', ...' if len(missing) > 3 else ''})" if missing else
                     f"it has the column {extra[0][:40]!r}, not one of this table's" if extra else
                     "its columns are not in this table's order")
            raise ValueError(f"{path}, line 1: {found}; allowed: the header {','.join(COLUMNS)}{keep}")
        while True:
            line = reader.line_num + 1
            fields = next(reader, None)
            if fields is None:
                break
            if not fields:                              # a blank line, as csv.DictReader skips it
                continue
            if len(fields) != len(COLUMNS):
                raise ValueError(f"{path}, line {line}: {len(fields)} fields; allowed: {len(COLUMNS)}, one per column"
                                 f" of the header{keep}")
            row = dict(zip(COLUMNS, fields))
            for column, (kind, blank) in CELLS.items():
                problem = None if blank and row[column] == "" else _cell_problem(row[column], kind)
                if problem:
                    raise ValueError(f"{path}, line {line}, column {column}: found {row[column][:40]!r}; allowed:"
                                     f" {problem}{' or blank' if blank else ''}{keep}")
            if not row["task"]:
                raise ValueError(f"{path}, line {line}, column task: found ''; allowed: a task's name{keep}")
            rows.append(row)
    except csv.Error as err:
        raise ValueError(f"{path}, line {line}: not CSV ({err}){keep}") from None
    return rows


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


def prepare(networks: list, proofs: list, out: str) -> tuple:
    """What ``run`` needs, read and checked before any learning: (the rows of OUT/results.csv,
    ``read_rows``; one dict per network, given as (run folder, controller, task, base), with its folder,
    controller, task, base, seed, and ``tinyalgo_proof``'s proved machine and ref, the proof checked against
    the network's checkpoint.npz).  A ValueError naming the file or folder otherwise."""
    rows = read_rows(out)
    plan = []
    for folder, controller, task, base in networks:
        s = seed_of(folder)
        proved, ref = tinyalgo_proof(proofs, task, s, base, os.path.join(folder, "checkpoint.npz"))
        plan.append(dict(folder=folder, controller=controller, task=task, base=base, seed=s, proved=proved,
                         ref=ref))
    return rows, plan


def run(prepared: tuple, out: str, command: str, steps: int, seconds=None, seed: int = 0,
        verify_seconds: float = 60, log=print) -> list:
    """Compare every network of ``prepared`` (``prepare``'s) and write the table after each."""
    rows, plan = prepared
    for p in plan:
        task, s, proved, ref = p["task"], p["seed"], p["proved"], p["ref"]
        log(f"{p['folder']}: {task} seed {s}" + (f", tinyalgo's proof {ref.get('tinyalgo_states')} states" if proved
                                                  else ", no tinyalgo proof kept"))
        new = compare(p["controller"], task, p["base"], proved, steps, seconds, seed, verify_seconds, log=log)
        for r in new:
            r.update(ref, seed=s, command=command)
        rows = [r for r in rows if (r["task"], int(r["seed"])) != (task, s)] + new
        write(rows, out, steps, seconds)
    return rows
