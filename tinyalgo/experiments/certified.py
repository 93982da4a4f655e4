"""Certified length generalisation on fresh seeds (paper section 6.4): one row per trained network,
from its training run (the solved fractions of Table 1's re-test at lengths 100 and 1,000) and its
``tinyalgo verify-loop`` folder (the machine's states, the verdict, the rounds of the loop, the training on
counterexamples, the transitions repaired, the censuses of the counterexamples' lengths, the time), and a
table per task.

    tinyalgo experiment certified --runs RUNS.csv [RUNS.csv ...] --loops DIR [DIR ...] --out OUT

writes OUT/certified.csv and OUT/certified.md.  The files read are checked first (loop.json against
``LOOP_SCHEMA``, the CSVs for rows of the header's width): a file that does not fit is one error naming it.

    tinyalgo experiment certified --proofs figures/automata/fresh_seeds/proofs --out OUT

re-checks the proofs kept in the repository, one folder each (machine.json, certificate.json.gz): the
machine is verified again and its certificate checked by the independent checker
(tinyalgo/automata/check.py); OUT/rechecked.csv and rechecked.md say what each gave.
"""
from __future__ import annotations

import csv
import glob
import json
import os
import time
from dataclasses import replace

import numpy as np

from tinyalgo.experiments.table1_report import read_results_csv
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.schema import Field, FileFormatError, check

_SECONDS = Field("number", minimum=0)
_COUNT = Field("int", minimum=0)
# the fields of a verify-loop's loop.json that the table reads (others are allowed)
ROUND_SCHEMA = {"round": _COUNT, "states": Field("int", minimum=1),
                "verdict": Field("str", choices=("proved", "counterexample", "not proved")),
                "length": Field("int", minimum=1, nullable=True, required=False),
                "extract_seconds": _SECONDS, "verify_seconds": _SECONDS,
                "cpu_seconds": Field("number", minimum=0, required=False),
                "extraction": Field("dict", nullable=True, required=False), "training": Field("dict", required=False),
                "short_training": Field("dict", required=False), "census": Field("dict", required=False)}
PART_SCHEMAS = {"extraction": {"repairs": Field("int", minimum=0, required=False)}, "training": {"updates": _COUNT},
                "short_training": {"training": Field("dict", required=False)},
                "census": {"recorded": _COUNT, "machine_fails": _COUNT, "network_solves": _COUNT}}
LOOP_SCHEMA = {"checkpoint": Field("str"),
               "task": Field("str", choices=("copy", "reverse", "walk", "addition", "addition3", "multiplication")),
               "rounds": Field("list", items=Field("dict")),
               "base": Field("int", minimum=2, maximum=10, required=False)}

COLUMNS = ("task", "seed", "solved_100", "solved_1000", "train_minutes", "states", "verdict", "counterexample_length",
           "rounds", "trained_updates", "repaired_transitions", "census_recorded", "census_network_fails",
           "extract_seconds", "verify_seconds", "cpu_minutes")


def _runs(paths) -> dict:
    """{(task, seed): row} of the sweeps' CSVs (``tinyalgo experiment table1``'s columns)."""
    for path in paths:
        check_csv(path)
    return {(row["task"], row["seed"]): row for path in paths for row in read_results_csv(path)}


def check_csv(path) -> None:
    """A ValueError naming the line unless every row of the CSV has the header's number of fields."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.reader(f)
            header = next(rows, None)
            if not header:
                raise ValueError(f"{path}: empty; expected a CSV with a header line")
            for n, row in enumerate(rows, 2):
                if len(row) != len(header):
                    raise ValueError(f"{path} line {n}: {len(row)} fields; the header has {len(header)}")
    except (UnicodeDecodeError, csv.Error) as err:
        raise ValueError(f"{path}: not a readable CSV ({err})") from None


def read_loop(folder: str) -> dict:
    """A verify-loop folder's loop.json, checked against ``LOOP_SCHEMA``: a ValueError naming the file and the
    field otherwise."""
    path = os.path.join(folder, "loop.json")
    try:
        with open(path, encoding="utf-8") as f:
            loop = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path}: not readable JSON ({str(err)[:80] or 'nested too deeply'})") from None
    try:
        check(loop, LOOP_SCHEMA, path, extra_fields=True)
        if not loop["rounds"]:
            raise FileFormatError(f"{path}: field rounds: found []; allowed: a list of at least one round")
        for i, r in enumerate(loop["rounds"]):
            check(r, ROUND_SCHEMA, path, f"rounds[{i}]", extra_fields=True)
            for part, schema in PART_SCHEMAS.items():
                if isinstance(r.get(part), dict):
                    check(r[part], schema, path, f"rounds[{i}].{part}", extra_fields=True)
            if isinstance(r.get("short_training", {}).get("training"), dict):
                check(r["short_training"]["training"], {"updates": _COUNT}, path,
                      f"rounds[{i}].short_training.training", extra_fields=True)
    except FileFormatError as err:
        raise ValueError(str(err)) from None
    if not os.path.basename(os.path.dirname(loop["checkpoint"])).rsplit("-s", 1)[-1].isdigit():
        raise ValueError(f"{path}: field checkpoint: found {loop['checkpoint'][:60]!r}; allowed: a path in a run folder"
                         " named <task>-<column>-s<seed>")
    return loop


def loop_row(folder: str) -> dict:
    """What a ``verify-loop`` folder established: the last machine's states and verdict, the rounds, the
    updates of training on counterexamples, the transitions repaired, the censuses' instances recorded (the
    machine failed them, the network solves them) and those the network fails too, and the time spent (the
    loop's CPU minutes: empty for a loop.json without them).  The updates count the training on the
    network's failures at short lengths (``verify-loop --train-short``) too."""
    loop = read_loop(folder)
    rounds, last = loop["rounds"], loop["rounds"][-1]
    return dict(states=last["states"], verdict=last["verdict"],
                counterexample_length=last.get("length") or "" if last["verdict"] == "counterexample" else "",
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


# ------------------------------------------------------------ the proofs kept in the repository
RECHECK_COLUMNS = ("proof", "task", "states", "verdict", "verify_seconds", "certificate", "configurations",
                   "check_seconds")


def keep_proof(loop_folder: str, root: str) -> str | None:
    """Keep a proved verify-loop's machine in ``root``/<task>-s<seed>: the machine's tables (machine.json,
    without the recording's rows and cluster centres, which only the network's fallback uses), the
    verifier's certificate (certificate.json.gz), its report (verify.json) and the loop's loop.json.  Returns
    the folder, or None where the loop did not end in a proof."""
    from tinyalgo.automata.machine import load_machine
    from tinyalgo.automata.verify import verify, write_certificate
    loop = read_loop(loop_folder)
    if loop["rounds"][-1]["verdict"] != "proved":
        return None
    seed = int(os.path.basename(os.path.dirname(loop["checkpoint"])).rsplit("-s", 1)[1])
    folder = os.path.join(root, f"{loop['task']}-s{seed}")
    machine = load_machine(os.path.join(loop_folder, "machine.json"))
    bare = replace(machine, raw=np.zeros((0, 6), dtype=np.int64), centroids=np.zeros((1, 0)),
                   info=dict(machine.info, kept="the tables only: the recording's rows and the cluster centres are"
                                            " in the loop's machine.json"))
    report = verify(bare, certify=True)
    if report["verdict"] != "proved":
        raise ValueError(f"{loop_folder}: its machine is {report['verdict']} by this verifier; not kept")
    os.makedirs(folder, exist_ok=True)
    bare.save(os.path.join(folder, "machine.json"))
    write_certificate(os.path.join(folder, "certificate.json.gz"), report.pop("certificate"))
    atomic_write_bytes(os.path.join(folder, "verify.json"), (json.dumps(report, indent=1) + "\n").encode())
    atomic_write_bytes(os.path.join(folder, "loop.json"), (json.dumps(loop, indent=1) + "\n").encode())
    return folder


def proof_folders(root: str) -> list:
    """The folders of ``root`` holding a proof (machine.json and certificate.json.gz), sorted."""
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(root, "*", "machine.json"))
                  if os.path.isfile(os.path.join(os.path.dirname(p), "certificate.json.gz")))


def recheck(folder: str) -> dict:
    """Verify a kept machine again and check its certificate with the independent checker."""
    from tinyalgo.automata.check import CertificateError, check_certificate, read_certificate
    from tinyalgo.automata.machine import load_machine
    from tinyalgo.automata.verify import verify
    machine = load_machine(os.path.join(folder, "machine.json"))
    t = time.process_time()
    report = verify(machine)
    verify_seconds = time.process_time() - t
    t = time.process_time()
    try:
        summary = check_certificate(machine, read_certificate(os.path.join(folder, "certificate.json.gz")))
        verdict, configs = "accepted", summary["configurations"]
    except CertificateError as err:
        verdict, configs = f"rejected: {err}", ""
    return dict(proof=os.path.basename(folder), task=machine.task, states=machine.n_states,
                verdict=report["verdict"], verify_seconds=round(verify_seconds, 2), certificate=verdict,
                configurations=configs, check_seconds=round(time.process_time() - t, 2))


def write_recheck(root: str, out: str, log=print) -> list:
    """Re-check every proof under ``root``; OUT/rechecked.csv and rechecked.md; the rows."""
    folders = proof_folders(root)
    if not folders:
        raise ValueError(f"--proofs {root}: no proof folders there (each with machine.json and certificate.json.gz)")
    rows = []
    for folder in folders:
        rows.append(recheck(folder))
        r = rows[-1]
        log(f"{r['proof']}: {r['verdict']} again ({r['verify_seconds']} s); certificate {r['certificate']}"
            f" ({r['configurations']} configurations, {r['check_seconds']} s)")
    buf = [",".join(RECHECK_COLUMNS)] + [",".join(str(r[c]).replace(",", ";") for c in RECHECK_COLUMNS)
                                         for r in rows]
    good = sum(r["verdict"] == "proved" and r["certificate"] == "accepted" for r in rows)
    md = [f"{good} of {len(rows)} kept proofs re-verified and their certificates accepted", "",
          "| proof | task | states | verified again | s | certificate | configurations | s |", "|---" * 8 + "|"]
    md += [f"| {r['proof']} | {r['task']} | {r['states']} | {r['verdict']} | {r['verify_seconds']} | {r['certificate']}"
           f" | {r['configurations']} | {r['check_seconds']} |" for r in rows]
    atomic_write_bytes(os.path.join(out, "rechecked.csv"), ("\n".join(buf) + "\n").encode())
    atomic_write_bytes(os.path.join(out, "rechecked.md"), ("\n".join(md) + "\n").encode())
    return rows
