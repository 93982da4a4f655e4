"""The ``experiment`` command: the paper's Table 1, Figure 5 and Appendices B
and C (Q-learning) and Figure 3 (supervised).

    tinyalgo experiment table1 --tasks copy addition --columns full --seeds 10
    tinyalgo experiment figure3 --tasks reverse --controllers ff gru
    tinyalgo experiment figure5 --seeds 10 --budget 10000000
    tinyalgo experiment appendix-b --bases 2 3 4 --seeds 10
    tinyalgo experiment appendix-c --rewards binary continuous --seeds 10

Rerunning the same ``table1`` command continues an interrupted sweep: runs
whose log is complete are not trained again, an interrupted run resumes from
its last saved segment boundary (``tinyalgo.experiments.table1``).
"""
from __future__ import annotations

import os
import sys

from tinyalgo.cli.args import int_at_least
from tinyalgo.experiments import appendix, figure3, figure5
from tinyalgo.experiments.table1 import run_sweep, table1_jobs
from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, TABLE1_ROWS, summarize_directory, write_table1
from tinyalgo.options import add_arguments, overrides_from_args
from tinyalgo.qconfig import QConfig
from tinyalgo.rewards import REWARDS


def cmd_experiment(args) -> int:

    command = "tinyalgo " + " ".join(sys.argv[1:])
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.name in ("figure5", *appendix.TABLES):
        run = figure5.command if args.name == "figure5" else appendix.command
        return run(args, command, overrides_from_args(QConfig, args))
    if args.name == "figure3":
        tasks = args.tasks or list(figure3.TASKS)
        out = args.out or "figures"
        print(f"Figure 3: {len(tasks) * len(args.controllers) * args.seeds} supervised runs,"
              f" {args.workers} worker processes -> {out}")
        rows = figure3.run_figure3(tasks, args.controllers, seeds, args.budget or 3_000_000,
                                   args.complexities, args.instances, args.workers)
        if args.merge:
            rows = figure3.merge_rows(args.merge, rows)
        figure3.write_figure3(rows, out)
        print(f"wrote {out}/supervised_accuracy.png and .csv ({command})")
        return 0
    out, budget = args.out or "figures/table1", args.budget or QConfig.budget
    if args.summarize:
        rows = summarize_directory(out)
        if not rows:
            raise ValueError(f"no run logs in {out}/runs to summarize")
        write_table1(rows, out, budget, command)
        print(open(os.path.join(out, "table1.md")).read())
        return 0
    jobs = table1_jobs(args.tasks or list(TABLE1_ROWS), args.columns, seeds, budget, out,
                       **overrides_from_args(QConfig, args))
    print(f"Table 1: {len(jobs)} runs, {args.workers} worker processes -> {out}"
          f" (each run's progress: {out}/runs/<task>-<column>-s<seed>.log; rerun the same command to continue)")
    rows = run_sweep(jobs, workers=args.workers, on_result=lambda rows: write_table1(rows, out, budget, command))
    write_table1(rows, out, budget, command)
    print(open(os.path.join(out, "table1.md")).read())
    return 0


def register(sub) -> None:

    ex = sub.add_parser("experiment", help="reproduce the paper's Table 1, Figure 5, Appendices B and C (Q-learning)"
                                           " or Figure 3 (supervised)")
    ex.add_argument("name", choices=("table1", "figure3", "figure5", *appendix.TABLES))
    ex.add_argument("--tasks", nargs="+", choices=list(TABLE1_ROWS), default=None, help="default: all six")
    ex.add_argument("--columns", nargs="+", choices=list(TABLE1_COLUMNS), default=["full"], help="table1 columns")
    ex.add_argument("--controllers", nargs="+", choices=("ff", "gru", "lstm"), default=["ff", "gru", "lstm"],
                    help="figure3 controllers")
    ex.add_argument("--bases", nargs="+", type=int, choices=appendix.BASES, default=list(appendix.BASES),
                    metavar="BASE", help="appendix-b: the bases (paper Appendix B), 2..10 (default all)")
    ex.add_argument("--rewards", nargs="+", choices=REWARDS, default=list(REWARDS),
                    help="appendix-c: the rewards (paper Appendix C) (default all)")
    ex.add_argument("--complexities", nargs="+", type=int_at_least(1),
                    default=[10, 30, 100, 300, 1000, 3000, 10000, 20000], help="figure3, figure5 test complexities")
    ex.add_argument("--instances", type=int_at_least(1), default=50, help="figure3, figure5 test instances")
    ex.add_argument("--seeds", type=int_at_least(1), default=10)
    ex.add_argument("--first-seed", type=int, default=0)
    ex.add_argument("--budget", type=int_at_least(1), default=None,
                    help="characters per run (default 3e7 for Q-learning, 3e6 for figure3)")
    add_arguments(ex, {"table1": QConfig}, sweep=True)
    ex.add_argument("--workers", type=int_at_least(1), default=2)
    ex.add_argument("--out", default=None, help="default figures/table1 (table1), figures (figure3),"
                                                 f" {figure5.DEFAULT_OUT} (figure5), {appendix.DEFAULT_OUT} (appendix-b,"
                                                 " appendix-c)")
    ex.add_argument("--merge", default=None, metavar="CSV",
                    help="figure3: keep this CSV's rows for the (task, controller) pairs not re-run")
    ex.add_argument("--summarize", action="store_true",
                    help="table1, appendix-b, appendix-c: only rebuild the table (.csv/.md) from the run logs"
                         " already in --out")
    ex.set_defaults(func=cmd_experiment)
