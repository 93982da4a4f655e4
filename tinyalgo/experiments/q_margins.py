"""How far apart the greedy action's Q-value and the next best one are, for
the final addition models of a sweep over Table 1's 200-unit columns, on
fresh instances: the margin q1 - q2 relative to ``|q1|``, at every step of each
lane's first instance.  A small relative margin is a decision that a little
drift in the state can flip (paper section 6: the greedy policy of the
Q-function).

    tinyalgo experiment q-margins --out figures/figure5_ablations

Reads ``<out>/runs/addition-<column>-s<seed>/checkpoint.npz``; a row per
model (solved fraction, steps, median and low quantiles of the margin, the
share of steps under 1 %) goes to ``<out>/q_margins.csv``.
"""
from __future__ import annotations

import os

import numpy as np

from tinyalgo.evaluation import GreedyAgent, fresh_environment, run_instances
from tinyalgo.experiments.departures import TASK
from tinyalgo.experiments.table1_report import results_csv, run_name
from tinyalgo.runs.fileio import atomic_write_bytes

CSV = "q_margins.csv"


class MarginAgent(GreedyAgent):
    """The greedy agent, keeping ``(q1 - q2) / |q1|`` of every lane still in its first instance."""

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


def margins_row(column, seed, controller, complexity: int, instances: int) -> dict:
    """One model's row: ``instances`` fresh instances of ``complexity`` (seeded 7 + seed), the relative
    margins of every step of each lane's first instance."""
    agent = MarginAgent(controller)
    run = run_instances(agent, fresh_environment(TASK, complexity, instances, seed=7 + seed))
    m = np.concatenate(agent.margins)
    return dict(column=column, seed=seed, complexity=complexity, instances=instances,
                solved=float(run["solved"].mean()), steps=len(m), median=float(np.median(m)),
                p1=float(np.quantile(m, 0.01)), p01=float(np.quantile(m, 0.001)), below_1pct=float((m < 0.01).mean()))


def q_margins(models, complexity: int, instances: int, log=print) -> list:
    """A ``margins_row`` per model of ``models`` ({(column, seed): controller}, ``departures.addition_models``)."""
    rows = []
    for (column, seed), controller in models.items():
        rows.append(margins_row(column, seed, controller, complexity, instances))
        r = rows[-1]
        log(f"{run_name(TASK, column, seed):>28}: solved {r['solved']:.2f}, relative margin median {r['median']:.3f},"
            f" 1st percentile {r['p1']:.4f}, 0.1th {r['p01']:.5f}, steps under 1%: {r['below_1pct']:.4f}")
    return rows


def column_summary(rows) -> dict:
    """{column: (median of the runs' median margins, median of their 1st percentiles, mean share of steps
    under 1 %)}."""
    out = {}
    for column in dict.fromkeys(r["column"] for r in rows):
        rs = [r for r in rows if r["column"] == column]
        out[column] = (float(np.median([r["median"] for r in rs])), float(np.median([r["p1"] for r in rs])),
                       float(np.mean([r["below_1pct"] for r in rs])))
    return out


def write_margins(rows, out_dir) -> str:
    """``<out_dir>/q_margins.csv``; its path."""
    path = os.path.join(out_dir, CSV)
    atomic_write_bytes(path, results_csv(rows).encode())
    return path
