"""Where the reverse runs of Appendix B that did not solve go wrong: each
run's final model on 20 fresh instances of length 3, and the first step at
which it leaves the ground-truth actions (tinyalgo.evaluation.first_departures,
as `tinyalgo evaluate --departures`).  A model in the "guessed write" trap
turns back after its first move right and writes at once, before it has
read the digit it must write first.

    python figures/appendix/reverse_first_step.py [--out figures/appendix] [--csv PATH]

Reads the run logs and final models of an appendix-b sweep's --out (the
models, runs/<name>/checkpoint.npz, are not committed: give the --out of a
sweep that trained them); writes the rows to --csv (default
reverse_first_step.csv beside this script) and returns them.
"""
import argparse
import os

import tinyalgo  # noqa: F401  (before NumPy: one BLAS thread)

from tinyalgo.runs.checkpoint import CheckpointError, load_checkpoint
from tinyalgo.evaluation import first_departures
from tinyalgo.experiments.table1_report import option_value, results_csv, row_run_name, summarize_directory
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.rundir import checkpoint_path
from tinyalgo.tasks import TASKS

HERE = os.path.dirname(os.path.abspath(__file__))
LENGTH, INSTANCES = 3, 20


def q_range(name, values) -> dict:
    """{name_min, name_max} rounded to 4 places; empty when there are none."""
    return {f"{name}_min": round(min(values), 4) if values else "", f"{name}_max": round(max(values), 4) if values else ""}


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE, help="the appendix-b sweep's --out (default: this folder)")
    parser.add_argument("--csv", default=os.path.join(HERE, "reverse_first_step.csv"), help="where the rows go")
    args = parser.parse_args(argv)
    rows = []
    for run in summarize_directory(args.out):
        if run["task"] != "reverse" or run["column"] != "full" or option_value(run, "reward") != QConfig.reward:
            continue                                       # Appendix B's reverse runs only
        base, name = option_value(run, "base"), row_run_name(run)
        try:
            controller, _ = load_checkpoint(checkpoint_path(os.path.join(args.out, "runs", name)))
        except CheckpointError as err:
            parser.error(f"{err} (give --out, the sweep folder that trained the runs)")
        found = first_departures(controller, "reverse", TASKS["reverse"].factor * LENGTH, INSTANCES, base, seed=0)
        n_moves = TASKS["reverse"](base).n_moves                # a joint action: move + n_moves * write
        trapped = [r["departure"] for r in found if not r["solved"] and r["departure"] is not None
                   and r["departure"]["step"] == 1 and r["departure"]["action"] // n_moves == 1]
        rows.append(dict(run=name, base=base, seed=run["seed"], solved_in_training=run["solved"],
                         instances=INSTANCES, failed=sum(not r["solved"] for r in found),
                         write_at_step_1=len(trapped),
                         **q_range("q_write", [d["q_action"] for d in trapped]),
                         **q_range("q_right", [d["q_truth"] for d in trapped])))
        print(", ".join(f"{k} {v}" for k, v in rows[-1].items()))
    rows.sort(key=lambda r: (r["base"], r["seed"]))
    atomic_write_bytes(args.csv, results_csv(rows).encode())
    return rows


if __name__ == "__main__":
    main()
