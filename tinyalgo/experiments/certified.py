"""Certified length generalisation on fresh seeds (paper section 6.4): one row per trained network,
from its training run (the solved fractions of Table 1's re-test at lengths 100 and 1,000) and its
``tinyalgo verify-loop`` folder (the machine's states, the verdict, the rounds of the loop, the training on
counterexamples, the transitions repaired, the censuses of the counterexamples' lengths, the time), and a
table per task.

    tinyalgo experiment certified --runs RUNS.csv [RUNS.csv ...] --loops DIR [DIR ...] --out OUT

writes OUT/certified.csv and OUT/certified.md.
"""
from __future__ import annotations

import json
import os

from tinyalgo.experiments.table1_report import read_results_csv
from tinyalgo.runs.fileio import atomic_write_bytes

COLUMNS = ("task", "seed", "solved_100", "solved_1000", "train_minutes", "states", "verdict", "counterexample_length",
           "rounds", "trained_updates", "repaired_transitions", "census_recorded", "census_network_fails",
           "extract_seconds", "verify_seconds", "cpu_minutes")


def _runs(paths) -> dict:
    """{(task, seed): row} of the sweeps' CSVs (``tinyalgo experiment table1``'s columns)."""
    return {(row["task"], row["seed"]): row for path in paths for row in read_results_csv(path)}


def loop_row(folder: str) -> dict:
    """What a ``verify-loop`` folder established: the last machine's states and verdict, the rounds, the
    updates of training on counterexamples, the transitions repaired, the censuses' instances recorded (the
    machine failed them, the network solves them) and those the network fails too, and the time spent (the
    loop's CPU minutes: empty for a loop.json without them).  The updates count the training on the
    network's failures at short lengths (``verify-loop --train-short``) too."""
    with open(os.path.join(folder, "loop.json")) as f:
        loop = json.load(f)
    rounds, last = loop["rounds"], loop["rounds"][-1]
    return dict(states=last["states"], verdict=last["verdict"],
                counterexample_length=last["length"] if last["verdict"] == "counterexample" else "",
                rounds=len(rounds), trained_updates=sum(r.get("training", {}).get("updates", 0)
                                                     + r.get("short_training", {}).get("training", {}).get("updates", 0)
                                                     for r in rounds),
                repaired_transitions=sum((r.get("extraction") or {}).get("repairs", 0) for r in rounds),
                census_recorded=sum(r["census"]["recorded"] for r in rounds if "census" in r),
                census_network_fails=sum(r["census"]["machine_fails"] - r["census"]["network_solves"]
                                         for r in rounds if "census" in r),
                extract_seconds=round(sum(r["extract_seconds"] for r in rounds), 1),
                verify_seconds=round(sum(r["verify_seconds"] for r in rounds), 2),
                cpu_minutes=round(sum(r["cpu_seconds"] for r in rounds) / 60, 1)
                if all("cpu_seconds" in r for r in rounds) else "",
                task=loop["task"], checkpoint=loop["checkpoint"])


def certified_rows(run_csvs, loop_folders) -> list:
    """One row (``COLUMNS``) per loop folder, joined with its training run by (task, seed); the seed is read
    from the checkpoint's run folder name (``<task>-<column>-s<seed>``)."""
    runs, rows = _runs(run_csvs), []
    for folder in loop_folders:
        got = loop_row(folder)
        seed = int(os.path.basename(os.path.dirname(got["checkpoint"])).rsplit("-s", 1)[1])
        run = runs.get((got["task"], seed), {})
        fields = dict(solved_100="solved_fraction_100", solved_1000="solved_fraction_1000", train_minutes="minutes")
        rows.append(dict(task=got["task"], seed=seed,
                         **{k: "" if run.get(v) is None else run[v] for k, v in fields.items()},
                         **{k: got[k] for k in COLUMNS[5:]}))
    return sorted(rows, key=lambda r: (r["task"], r["seed"]))


def markdown(rows) -> str:
    """A table per task, a line per seed, and the count of seeds proved."""
    out = []
    for task in sorted({r["task"] for r in rows}):
        mine = [r for r in rows if r["task"] == task]
        proved = sum(r["verdict"] == "proved" for r in mine)
        out += [f"### {task}: {proved} of {len(mine)} seeds proved", "",
                "| seed | network solved @100 | @1000 | training, min | machine states | proved | rounds"
                " | trained on counterexamples (updates) | transitions repaired | census: recorded"
                " | census: network fails | extraction, s | verification, s | loop CPU, min |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            verdict = {"proved": "yes", "counterexample": f"counterexample, length {r['counterexample_length']}"}
            out.append(f"| {r['seed']} | {r['solved_100']} | {r['solved_1000']} | {r['train_minutes']} | {r['states']}"
                       f" | {verdict.get(r['verdict'], r['verdict'])} | {r['rounds']} | {r['trained_updates'] or '-'}"
                       f" | {r['repaired_transitions'] or '-'} | {r['census_recorded'] or '-'}"
                       f" | {r['census_network_fails'] or '-'} | {r['extract_seconds']} | {r['verify_seconds']}"
                       f" | {r['cpu_minutes'] if r['cpu_minutes'] != '' else '-'} |")
        out.append("")
    return "\n".join(out)


def write(run_csvs, loop_folders, out: str) -> list:
    """Write OUT/certified.csv and OUT/certified.md; returns the rows."""
    rows = certified_rows(run_csvs, loop_folders)
    lines = [",".join(COLUMNS)] + [",".join(str(r[c]) for c in COLUMNS) for r in rows]
    os.makedirs(out, exist_ok=True)
    atomic_write_bytes(os.path.join(out, "certified.csv"), ("\n".join(lines) + "\n").encode())
    atomic_write_bytes(os.path.join(out, "certified.md"), markdown(rows).encode())
    return rows
