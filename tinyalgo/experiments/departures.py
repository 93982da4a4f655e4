"""Which decision fails at long lengths, for the final addition models of a
sweep over Table 1's 200-unit columns (Figure 5 over the ablation columns):
each model on fresh instances of one complexity, and for each instance it
fails, the first step at which it leaves the ground-truth actions
(``tinyalgo.evaluation.first_departures``, as ``tinyalgo evaluate
--departures``), named "truth -> taken".

    tinyalgo experiment departures --out figures/figure5_ablations

Reads ``<out>/runs/addition-<column>-s<seed>/checkpoint.npz``; a row per
column and kind of departure (runs, instances, failed, count) goes to
``<out>/departures.csv``.
"""
from __future__ import annotations

import collections
import os

from tinyalgo.evaluation import first_departures
from tinyalgo.experiments.runlogs import final_models
from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, discount_kind, results_csv, run_name
from tinyalgo.inspection.render import action_name
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.tasks import TASKS

COLUMNS = tuple(c for c, options in TABLE1_COLUMNS.items() if options["units"] == 200)   # the 200-unit columns
CSV = "departures.csv"
TASK = "addition"
DEFAULT_OUT = os.path.join("figures", "figure5_ablations")      # the command's --out unless given


def check_columns(columns) -> None:
    """A ValueError naming the first of ``columns`` that is not a 200-unit column of Table 1."""
    for column in columns:
        if column not in COLUMNS:
            raise ValueError(f"unknown column {column!r}; allowed: {', '.join(COLUMNS)}")


def addition_models(out_dir, columns, seeds) -> dict:
    """{(column, seed): controller} of the final addition models of ``out_dir``, all loaded first."""
    check_columns(columns)
    names = {(c, s): run_name(TASK, c, s) for c in columns for s in seeds}
    models = final_models(out_dir, list(names.values()))
    return {key: models[name] for key, name in names.items()}


def departure_name(departure, n_moves: int) -> str:
    """"truth -> taken" of a ``first_departures`` departure; "none" if the instance followed the ground truth."""
    if departure is None:
        return "none"
    return f"{action_name(departure['truth'], n_moves)} -> {action_name(departure['action'], n_moves)}"


def departures(models, complexity: int, instances: int, log=print) -> list:
    """A row per column of ``models`` ({(column, seed): controller}) and kind of departure of its failed
    instances (each model on ``instances`` fresh instances of ``complexity``, seeded 1000 + seed), the
    most frequent first."""
    n_moves = TASKS[TASK]().n_moves
    rows = []
    for column in dict.fromkeys(c for c, _ in models):
        seeds = [s for c, s in models if c == column]
        counts, failed = collections.Counter(), 0
        for seed in seeds:
            found = first_departures(models[column, seed], TASK, complexity, instances, seed=1000 + seed)
            lost = [d for d in found if not d["solved"]]
            failed += len(lost)
            counts.update(departure_name(d["departure"], n_moves) for d in lost)
        rows += [dict(column=column, discount=TABLE1_COLUMNS[column]["discount"], runs=len(seeds),
                      complexity=complexity, instances=instances * len(seeds), failed=failed,
                      departure=name, count=n) for name, n in counts.most_common()]
        log(f"{column:>16}: {failed} of {instances * len(seeds)} failed; "
            + ", ".join(f"{name} {n}" for name, n in counts.most_common()))
    return rows


def by_discount(rows) -> dict:
    """{kind: (columns, instances failed, Counter of departures)} over the columns of each kind of discount
    (constant or dynamic, ``table1_report.discount_kind``)."""
    out = {}
    for kind in ("constant", "dynamic"):
        mine = [r for r in rows if discount_kind(r["column"]) == kind]
        failed = {r["column"]: r["failed"] for r in mine}                   # one count per column
        total = collections.Counter()
        for r in mine:
            total[r["departure"]] += r["count"]
        if failed:
            out[kind] = (list(failed), sum(failed.values()), total)
    return out


def write_departures(rows, out_dir) -> str:
    """``<out_dir>/departures.csv``; its path."""
    path = os.path.join(out_dir, CSV)
    atomic_write_bytes(path, results_csv(rows).encode())
    return path
