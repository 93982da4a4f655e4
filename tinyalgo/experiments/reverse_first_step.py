"""Where the reverse runs of Appendix B go wrong: each run's final model on 20
fresh instances of length 3, and the first step at which it leaves the
ground-truth actions (``tinyalgo.evaluation.first_departures``, as ``tinyalgo
evaluate --departures``).  A model in the "guessed write" trap turns back after
its first move right and writes at once, before it has read the digit it must
write first: the reward of a small base (paper Appendix B) pays that guess with
probability 1/base.

    tinyalgo experiment reverse-first-step --out figures/appendix

Reads the run logs (loose or packed) and the final models of an appendix-b
sweep's ``--out``; the rows go to ``<out>/reverse_first_step.csv``.
"""
from __future__ import annotations

import os

from tinyalgo.evaluation import first_departures
from tinyalgo.experiments.runlogs import final_models
from tinyalgo.experiments.table1_report import option_value, results_csv, row_run_name, summarize_directory
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.tasks import TASKS

LENGTH, INSTANCES = 3, 20
CSV = "reverse_first_step.csv"


def appendix_b_reverse_runs(out_dir) -> list:
    """The summarized rows of the Appendix B reverse runs of ``out_dir`` (the full column, the 0/1 reward)."""
    return [r for r in summarize_directory(out_dir)
            if r["task"] == "reverse" and r["column"] == "full" and option_value(r, "reward") == QConfig.reward]


def q_range(name, values) -> dict:
    """{name_min, name_max} rounded to 4 places; empty when there are none."""
    if not values:
        return {f"{name}_min": "", f"{name}_max": ""}
    return {f"{name}_min": round(min(values), 4), f"{name}_max": round(max(values), 4)}


def first_step_row(run, controller) -> dict:
    """One run's row: its instances failed and those failed by a write at step 1 (the trap), with the
    Q-values of that write and of the right move the ground truth takes there."""
    base = option_value(run, "base")
    found = first_departures(controller, "reverse", TASKS["reverse"].factor * LENGTH, INSTANCES, base, seed=0)
    n_moves = TASKS["reverse"](base).n_moves                # a joint action: move + n_moves * write
    trapped = [r["departure"] for r in found if not r["solved"] and r["departure"] is not None
               and r["departure"]["step"] == 1 and r["departure"]["action"] // n_moves == 1]
    return dict(run=row_run_name(run), base=base, seed=run["seed"], solved_in_training=run["solved"],
                instances=INSTANCES, failed=sum(not r["solved"] for r in found), write_at_step_1=len(trapped),
                **q_range("q_write", [d["q_action"] for d in trapped]),
                **q_range("q_right", [d["q_truth"] for d in trapped]))


def reverse_first_step(out_dir, log=print) -> list:
    """A row per Appendix B reverse run of ``out_dir`` (ordered by base, seed), written to
    ``<out_dir>/reverse_first_step.csv``; every model is loaded before the first is run."""
    runs = appendix_b_reverse_runs(out_dir)
    if not runs:
        raise ValueError(f"{out_dir} has no Appendix B reverse runs (reverse-full[-b<base>]-s<seed>) to read")
    models = final_models(out_dir, [row_run_name(r) for r in runs])
    rows = []
    for run in runs:
        rows.append(first_step_row(run, models[row_run_name(run)]))
        log(", ".join(f"{k} {v}" for k, v in rows[-1].items()))
    rows.sort(key=lambda r: (r["base"], r["seed"]))
    atomic_write_bytes(os.path.join(out_dir, CSV), results_csv(rows).encode())
    return rows
