"""How far apart the greedy action's Q-value and the next best one are, for the
final models of figures/figure5_ablations (addition), on fresh instances:
the margin q1 - q2 relative to |q1|, at every step of each lane's first
instance.  A small relative margin is a decision that a little drift in the
state can flip.

    python figures/figure5_ablations/q_margins.py [--out DIR] [--columns ...] [--seeds 5] [--complexity 1000]
        [--instances 20] [--csv PATH]

Reads <out>/runs/addition-<column>-s<seed>/checkpoint.npz, the final models of
the runs (not committed: give the --out of the sweeps that trained them,
Table 1's ablation columns and Figure 5's classic and full); writes the rows
to --csv (default q_margins.csv beside this script) and returns them.
"""
import argparse
import os

import tinyalgo  # noqa: F401  (before NumPy: one BLAS thread)
import numpy as np

from tinyalgo.runs.checkpoint import CheckpointError, load_checkpoint
from tinyalgo.cli.args import int_at_least
from tinyalgo.evaluation import GreedyAgent, fresh_environment, run_instances
from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, results_csv
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.rundir import checkpoint_path

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = tuple(c for c, options in TABLE1_COLUMNS.items() if options["units"] == 200)   # the 200-unit columns


class MarginAgent(GreedyAgent):
    """The greedy agent, keeping (q1 - q2) / |q1| of every lane still in its first instance."""

    def start(self, batch):
        super().start(batch)
        self.first, self.margins, self.time = np.ones(batch, dtype=bool), [], 0

    def act(self, env, obs, reset):
        actions, symbols = super().act(env, obs, reset)
        if self.time:
            self.first &= ~reset
        top2 = np.sort(self.q, axis=1)[:, -2:]
        scale = np.maximum(np.abs(top2[:, 1]), np.finfo(np.float32).tiny)
        self.margins.append(((top2[:, 1] - top2[:, 0]) / scale)[self.first])
        self.time += 1
        return actions, symbols


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE, help="the folder whose runs/ holds the models (default: this one)")
    parser.add_argument("--complexity", type=int_at_least(1), default=1000, help="test complexity (default 1000)")
    parser.add_argument("--instances", type=int_at_least(1), default=20, help="test instances per model (default 20)")
    parser.add_argument("--seeds", type=int_at_least(1), default=5, help="seeds 0 .. N-1 of each column (default 5)")
    parser.add_argument("--columns", nargs="+", choices=COLUMNS, default=list(COLUMNS), metavar="COLUMN",
                        help=f"Table 1's columns: {', '.join(COLUMNS)} (default all)")
    parser.add_argument("--csv", default=os.path.join(HERE, "q_margins.csv"), help="where the rows go")
    args = parser.parse_args(argv)
    rows = []
    for column in args.columns:
        for seed in range(args.seeds):
            name = f"addition-{column}-s{seed}"
            try:
                controller, _ = load_checkpoint(checkpoint_path(os.path.join(args.out, "runs", name)))
            except CheckpointError as err:
                parser.error(f"{err} (give --out, the sweep folder that trained the runs)")
            agent = MarginAgent(controller)
            env = fresh_environment("addition", args.complexity, args.instances, seed=7 + seed)
            run = run_instances(agent, env)
            m = np.concatenate(agent.margins)
            rows.append(dict(column=column, seed=seed, complexity=args.complexity, instances=args.instances,
                             solved=float(run["solved"].mean()), steps=len(m),
                             median=float(np.median(m)), p1=float(np.quantile(m, 0.01)),
                             p01=float(np.quantile(m, 0.001)), below_1pct=float((m < 0.01).mean())))
            r = rows[-1]
            print(f"{name:>28}: solved {r['solved']:.2f}, relative margin median {r['median']:.3f},"
                  f" 1st percentile {r['p1']:.4f}, 0.1th {r['p01']:.5f}, steps under 1%: {r['below_1pct']:.4f}")
    atomic_write_bytes(args.csv, results_csv(rows).encode())
    for column in args.columns:
        rs = [r for r in rows if r["column"] == column]
        print(f"{column:>16}: median of the runs' median margins {np.median([r['median'] for r in rs]):.3f},"
              f" of their 1st percentiles {np.median([r['p1'] for r in rs]):.4f},"
              f" steps under 1 %: {np.mean([r['below_1pct'] for r in rs]):.4f}")
    return rows


if __name__ == "__main__":
    main()
