"""Which decision fails at long lengths, for the final models of
figures/figure5_ablations (addition): each model on fresh instances of one
complexity, and for each instance it fails, the first step at which it
leaves the ground-truth actions (``tinyalgo.evaluation.first_departures``,
as ``tinyalgo evaluate --departures``), named "truth -> taken".

    python figures/figure5_ablations/departures.py [--out DIR] [--columns ...] [--seeds 10] [--complexity 3000]
        [--instances 50] [--csv PATH]

Reads <out>/runs/addition-<column>-s<seed>/checkpoint.npz (not committed:
give the --out of the sweeps that trained them); writes a row per column and
kind of departure (runs, instances, failed, count) to --csv (default
departures.csv beside this script), prints the counts per kind of discount
(constant or dynamic, Table 1's columns), and returns the rows.
"""
import argparse
import collections
import os

import tinyalgo  # noqa: F401  (before NumPy: one BLAS thread)

from tinyalgo.runs.checkpoint import CheckpointError, load_checkpoint
from tinyalgo.cli.args import int_at_least
from tinyalgo.evaluation import first_departures
from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, discount_kind, results_csv
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.inspection.render import action_name
from tinyalgo.runs.rundir import checkpoint_path
from tinyalgo.tasks import TASKS

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = tuple(c for c, options in TABLE1_COLUMNS.items() if options["units"] == 200)   # the 200-unit columns


def departure_name(departure, n_moves: int) -> str:
    """"truth -> taken" of a ``first_departures`` departure; "none" if the instance followed the ground truth."""
    if departure is None:
        return "none"
    return f"{action_name(departure['truth'], n_moves)} -> {action_name(departure['action'], n_moves)}"


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE, help="the folder whose runs/ holds the models (default: this one)")
    parser.add_argument("--columns", nargs="+", choices=COLUMNS, default=list(COLUMNS), metavar="COLUMN",
                        help=f"Table 1's columns: {', '.join(COLUMNS)} (default all)")
    parser.add_argument("--seeds", type=int_at_least(1), default=10, help="seeds 0 .. N-1 of each column (default 10)")
    parser.add_argument("--complexity", type=int_at_least(1), default=3000, help="test complexity (default 3000)")
    parser.add_argument("--instances", type=int_at_least(1), default=50, help="test instances per model (default 50)")
    parser.add_argument("--csv", default=os.path.join(HERE, "departures.csv"), help="where the rows go")
    args = parser.parse_args(argv)
    n_moves = TASKS["addition"]().n_moves
    rows = []
    for column in args.columns:
        counts, failed = collections.Counter(), 0
        for seed in range(args.seeds):
            path = checkpoint_path(os.path.join(args.out, "runs", f"addition-{column}-s{seed}"))
            try:
                controller, _ = load_checkpoint(path)
            except CheckpointError as err:
                parser.error(f"{err} (give --out, the sweep folder that trained the runs)")
            found = first_departures(controller, "addition", args.complexity, args.instances, seed=1000 + seed)
            lost = [d for d in found if not d["solved"]]
            failed += len(lost)
            counts.update(departure_name(d["departure"], n_moves) for d in lost)
        rows += [dict(column=column, discount=TABLE1_COLUMNS[column]["discount"], runs=args.seeds,
                      complexity=args.complexity, instances=args.instances * args.seeds, failed=failed,
                      departure=name, count=n) for name, n in counts.most_common()]
        print(f"{column:>16}: {failed} of {args.instances * args.seeds} failed; "
              + ", ".join(f"{name} {n}" for name, n in counts.most_common()))
    atomic_write_bytes(args.csv, results_csv(rows).encode())
    for kind in ("constant", "dynamic"):
        mine = [r for r in rows if discount_kind(r["column"]) == kind]
        failed = {r["column"]: r["failed"] for r in mine}                   # one count per column
        total = collections.Counter()
        for r in mine:
            total[r["departure"]] += r["count"]
        if failed:
            print(f"{kind} discount ({', '.join(failed)}): {sum(failed.values())} failed; "
                  + ", ".join(f"{name} {n}" for name, n in total.most_common()))
    return rows


if __name__ == "__main__":
    main()
