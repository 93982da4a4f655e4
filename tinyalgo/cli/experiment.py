"""The ``experiment`` command: the paper's Table 1 (Q-learning) and Figure 3
(supervised).

    tinyalgo experiment table1 --tasks copy addition --columns full --seeds 10
    tinyalgo experiment figure3 --tasks reverse --controllers ff gru
    tinyalgo experiment figure5 --seeds 10 --budget 10000000
    tinyalgo experiment appendix-b --bases 2 3 4 --seeds 10
    tinyalgo experiment appendix-c --rewards binary continuous --seeds 10
    tinyalgo experiment figure5 --summarize      # the figure again from the run logs and tests in --out

Rerunning the same ``table1`` command continues an interrupted sweep: runs
whose log is complete are not trained again, an interrupted run resumes from
its last saved segment boundary (``tinyalgo.experiments.table1``).  Options
the chosen experiment does not use, an output folder that cannot be written,
a ``--merge`` CSV that cannot be merged and sizes that would not fit in
memory are refused before the first run starts.
"""
from __future__ import annotations

import csv
import os
import sys

from tinyalgo.cli.args import UsageError, check_writable_folder, int_at_least, output_path, refuse_given
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.cli.train import check_run_memory
from tinyalgo.experiments import appendix, figure3, figure5
from tinyalgo.experiments.table1 import run_sweep, table1_jobs
from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, TABLE1_ROWS, summarize_directory, write_table1
from tinyalgo.runs.options import add_arguments, overrides_from_args, sweep_options
from tinyalgo.runs.config import QConfig
from tinyalgo.rewards import REWARDS

FIGURE3_ONLY = ("controllers", "complexities", "instances", "merge")
MERGE_COLUMNS = ("task", "controller", "seed", "complexity", "solved", "char_accuracy", "trained_level",
                 "solved_1000_in_training", "train_seconds", "chars")      # figure3.run_figure3_job's rows
DEFAULTS = dict(columns=["full"], controllers=list(figure3.CONTROLLERS), complexities=list(figure3.COMPLEXITIES),
                instances=50, seeds=10, first_seed=0, workers=2, bases=list(appendix.BASES), rewards=list(REWARDS))
# defaults of one experiment that differ from DEFAULTS
OWN_DEFAULTS = {"figure5": dict(columns=list(figure5.COLUMNS))}
# the options of figure5 and the appendix tables among those of table1 and figure3 (the sweep options: all)
USED = {"figure5": ("columns", "complexities", "instances"), "appendix-b": ("bases",), "appendix-c": ("rewards",)}
# the experiments with --summarize, and what their table is rebuilt by: every sweep option not named is refused
SUMMARIZED_BY = {"table1": ("budget",), "figure5": ("complexities", "instances"),
                 "appendix-b": ("tasks", "bases", "budget"), "appendix-c": ("tasks", "rewards", "budget")}


def check_merge_csv(path: str) -> None:
    """A UsageError unless ``path`` is a Figure 3 CSV that ``figure3.merge_rows`` reads."""
    if not os.path.isfile(path):
        raise UsageError(f"--merge {path}: {'is a folder' if os.path.isdir(path) else 'no such file'};"
                         " give the supervised_accuracy.csv of an earlier figure3 run")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            header = next(csv.reader(f), [])
    except UnicodeDecodeError:
        raise UsageError(f"--merge {path} is not a text CSV file; give the supervised_accuracy.csv of an earlier"
                         " figure3 run") from None
    missing = [c for c in MERGE_COLUMNS if c not in header]
    if missing:
        raise UsageError(f"--merge {path} lacks the column(s) {', '.join(missing)}; a figure3 CSV has"
                         f" {', '.join(MERGE_COLUMNS)}")
    try:
        figure3.merge_rows(path, [])
    except (ValueError, KeyError, TypeError) as err:
        raise UsageError(f"--merge {path}: a row cannot be read ({err}); a figure3 CSV holds numbers in"
                         " seed, complexity, solved, ...") from None


def check_options(args) -> None:
    """Refuse what the chosen experiment does not use; fill in the defaults."""
    if args.name in USED:
        refuse_given(args, [n for n in ("columns", *FIGURE3_ONLY, "bases", "rewards")
                            if n not in USED[args.name]], f"is not an option of {args.name}")
    elif args.name == "table1":
        refuse_given(args, [*FIGURE3_ONLY, "bases", "rewards"], "is not an option of table1")
    else:
        refuse_given(args, ["columns", "summarize", "bases", "rewards", *sweep_options(QConfig)],
                     "is an option of table1; figure3 does not use it")
    if args.summarize:
        swept = ["tasks", "columns", "bases", "rewards", "complexities", "instances", "seeds", "first_seed",
                 "workers", "budget", *sweep_options(QConfig)]
        refuse_given(args, [n for n in swept if n not in SUMMARIZED_BY[args.name]],
                     "is not used by --summarize, which only rebuilds the table from what is saved in --out")
    for name, value in {**DEFAULTS, **OWN_DEFAULTS.get(args.name, {})}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def cmd_experiment(args) -> int:

    check_options(args)
    command = "tinyalgo " + " ".join(sys.argv[1:])
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.name in USED:
        check_writable_folder(args.out or (figure5 if args.name == "figure5" else appendix).DEFAULT_OUT, "--out")
        run = figure5.command if args.name == "figure5" else appendix.command
        return run(args, command, overrides_from_args(QConfig, args))
    if args.name == "figure3":
        tasks = args.tasks or list(figure3.TASKS)
        out = args.out or "figures"
        check_writable_folder(out, "--out")
        if args.merge:
            check_merge_csv(args.merge)
        c = max(args.complexities)
        check_memory([(environment_bytes(args.instances, c), f"--instances {args.instances} at complexity {c}",
                       f"{args.instances} test instances of complexity {c} drawn at once")])
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
            raise UsageError(f"--out {out}: no run logs in {out}/runs to summarize")
        check_writable_folder(out, "--out")
        write_table1(rows, out, budget, command)
        print(open(os.path.join(out, "table1.md")).read())
        return 0
    check_writable_folder(out, "--out")
    jobs = table1_jobs(args.tasks or list(TABLE1_ROWS), args.columns, seeds, budget, out,
                       **overrides_from_args(QConfig, args))
    for job in jobs:
        check_run_memory(job.config())
    print(f"Table 1: {len(jobs)} runs, {args.workers} worker processes -> {out}"
          f" (each run's progress: {out}/runs/<task>-<column>-s<seed>.log; rerun the same command to continue)")
    rows = run_sweep(jobs, workers=args.workers, on_result=lambda rows: write_table1(rows, out, budget, command))
    write_table1(rows, out, budget, command)
    print(open(os.path.join(out, "table1.md")).read())
    return 0


def register(sub) -> None:

    ex = sub.add_parser("experiment", help="reproduce a result of the paper: table1, figure3, figure5, appendix-b,"
                                           " appendix-c",
                        description="table1: Q-learning runs of the paper's Table 1 (tasks x columns x seeds);"
                                    " figure3: supervised runs of FF, GRU and LSTM controllers tested at growing"
                                    " complexities (the paper's Figure 3); figure5: standard against enhanced"
                                    " Q-learning tested at growing complexities (Figure 5); appendix-b: the time to"
                                    " solve in bases 2 to 10 (Appendix B); appendix-c: the time to solve with the"
                                    " 0/1, discretized and continuous rewards (Appendix C).  Every sweep is"
                                    " resumable: the same command again continues it.")
    ex.add_argument("name", choices=("table1", "figure3", *USED), help="which experiment")
    ex.add_argument("--tasks", nargs="+", choices=list(TABLE1_ROWS), default=None, metavar="TASK",
                    help=f"tasks to run: {', '.join(TABLE1_ROWS)} (default: all six)")
    ex.add_argument("--columns", nargs="+", choices=list(TABLE1_COLUMNS), default=None, metavar="COLUMN",
                    help=f"table1 and figure5: the Q-learning variants: {', '.join(TABLE1_COLUMNS)} (default: full;"
                         f" figure5: {' '.join(figure5.COLUMNS)}, the paper's standard and enhanced)")
    ex.add_argument("--controllers", nargs="+", choices=figure3.CONTROLLERS, default=None, metavar="CORE",
                    help="figure3: controller cores: ff, gru, lstm (default all three)")
    ex.add_argument("--bases", nargs="+", type=int, choices=appendix.BASES, default=None, metavar="BASE",
                    help="appendix-b: the bases (paper Appendix B), 2..10 (default all)")
    ex.add_argument("--rewards", nargs="+", choices=REWARDS, default=None, metavar="REWARD",
                    help=f"appendix-c: the rewards (paper Appendix C): {', '.join(REWARDS)} (default all)")
    ex.add_argument("--complexities", nargs="+", type=int_at_least(1), default=None, metavar="C",
                    help="figure3, figure5: test complexities (default 10 30 100 300 1000 3000 10000 20000)")
    ex.add_argument("--instances", type=int_at_least(1), default=None, metavar="N",
                    help="figure3, figure5: test instances at each complexity (default 50)")
    ex.add_argument("--seeds", type=int_at_least(1), default=None, metavar="N",
                    help="runs per task and column (table1) or controller (figure3) (default 10)")
    ex.add_argument("--first-seed", type=int_at_least(0), default=None, metavar="S",
                    help="the seeds are S, S+1, ... (default 0)")
    ex.add_argument("--budget", type=int_at_least(1), default=None, metavar="CHARS",
                    help="training length of each run in characters (lane-steps) (default 30,000,000 for"
                         " table1, figure5 and the appendix tables, 3,000,000 for figure3)")
    add_arguments(ex, {"table1": QConfig}, sweep=True)
    ex.add_argument("--workers", type=int_at_least(1), default=None, metavar="N",
                    help="worker processes running the runs side by side (default 2)")
    ex.add_argument("--out", type=output_path, default=None, metavar="DIR",
                    help="output folder (default figures/table1 for table1, figures for figure3,"
                         f" {figure5.DEFAULT_OUT} for figure5, {appendix.DEFAULT_OUT} for appendix-b and appendix-c)")
    ex.add_argument("--merge", default=None, metavar="CSV",
                    help="figure3: keep this CSV's rows for the (task, controller) pairs not re-run (default: none)")
    ex.add_argument("--summarize", action="store_const", const=True, default=None,
                    help="table1, figure5, appendix-b, appendix-c: only rebuild the table (.csv/.md; figure5's"
                         " .png too) from the run logs (figure5: and the final models' tests) already in --out,"
                         " training and testing nothing (default off)")
    ex.set_defaults(func=cmd_experiment)
