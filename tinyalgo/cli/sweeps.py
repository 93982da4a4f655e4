"""The five sweeps of ``tinyalgo experiment``, each with its own options.

    tinyalgo experiment table1 --tasks copy addition --columns full --seeds 10
    tinyalgo experiment figure3 --tasks reverse --controllers ff gru
    tinyalgo experiment figure5 --seeds 10 --budget 10000000
    tinyalgo experiment appendix-b --bases 2 3 4 --seeds 10
    tinyalgo experiment appendix-c --rewards binary continuous --seeds 10
    tinyalgo experiment figure5 --summarize      # the figure again from the run logs and tests in --out

A sweep is resumable: the same command again skips the runs whose log it
finds, loose or packed (``tinyalgo.experiments.runlogs``), and an interrupted
run resumes from its last saved segment boundary.  ``--summarize`` rebuilds a
sweep's table from what is saved in ``--out``, training and testing nothing;
the sweep's other options then select which of the saved runs it takes (an
option left out takes every value found), so the same command with
``--summarize`` gives the table of the runs that command makes.  Only
``--workers`` (processes that run runs) cannot go with it, which argparse
says (the two are mutually exclusive).

Every option is declared once: the sweep's own options in ``OPTIONS`` (what
it is, its unit, its argparse form), the Q-learning options of the runs in
``QConfig`` (``tinyalgo.runs.options``, ``sweep=True``); each sweep
(``SWEEPS``) names the options it takes, with its defaults, so that its
parser offers only those and its help shows its own defaults.
"""
from __future__ import annotations

import csv
import os
import sys
from dataclasses import dataclass, field

from tinyalgo.cli.args import UsageError, check_writable_folder, int_at_least, output_path
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.cli.train import check_run_memory
from tinyalgo.experiments import appendix, figure3, figure5, table1
from tinyalgo.experiments.table1 import run_sweep, table1_jobs
from tinyalgo.experiments.table1_report import (TABLE1_COLUMNS, TABLE1_ROWS, option_value, saved_rows,
                                                summarize_directory, write_table1)
from tinyalgo.rewards import REWARDS
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.options import add_arguments, overrides_from_args, sweep_options

MERGE_COLUMNS = ("task", "controller", "seed", "complexity", "solved", "char_accuracy", "trained_level",
                 "solved_1000_in_training", "train_seconds", "chars")      # figure3.run_figure3_job's rows


@dataclass(frozen=True)
class SweepOption:
    """A sweep's command-line option: what it is, its unit, its argparse form."""

    help: str
    unit: str = ""
    form: dict = field(default_factory=dict)          # add_argument's keywords


OPTIONS = {
    "tasks": SweepOption("the tasks (paper section 3)",
                         form=dict(nargs="+", choices=list(TABLE1_ROWS), metavar="TASK")),
    "columns": SweepOption("the Q-learning variants, Table 1's columns: " + ", ".join(TABLE1_COLUMNS),
                           form=dict(nargs="+", choices=list(TABLE1_COLUMNS), metavar="COLUMN")),
    "controllers": SweepOption("the controller cores", form=dict(nargs="+", choices=figure3.CONTROLLERS,
                                                                 metavar="CORE")),
    "bases": SweepOption("the bases of the digits (paper Appendix B)",
                         form=dict(nargs="+", type=int, choices=appendix.BASES, metavar="BASE")),
    "rewards": SweepOption("the rewards (paper Appendix C)", form=dict(nargs="+", choices=REWARDS, metavar="REWARD")),
    "complexities": SweepOption("the test complexities (paper section 5)",
                                form=dict(nargs="+", type=int_at_least(1), metavar="C")),
    "instances": SweepOption("fresh test instances at each complexity", unit="instances",
                             form=dict(type=int_at_least(1), metavar="N")),
    "seeds": SweepOption("runs of each cell: seeds S, S+1, ... (S: --first-seed)", unit="runs",
                         form=dict(type=int_at_least(1), metavar="N")),
    "first_seed": SweepOption("the first seed S", form=dict(type=int_at_least(0), metavar="S")),
    "budget": SweepOption("training length of each run", unit="characters (lane-steps)",
                          form=dict(type=int_at_least(1), metavar="CHARS")),
    "workers": SweepOption("worker processes running the runs side by side; the results do not depend on it"
                           " (each run is seeded and runs alone in its process), only the wall time and the"
                           " memory (one run per worker)", unit="processes",
                           form=dict(type=int_at_least(1), metavar="N")),
    "out": SweepOption("output folder", form=dict(type=output_path, metavar="DIR")),
    "merge": SweepOption("keep this CSV's rows (an earlier run's supervised_accuracy.csv) for the (task,"
                         " controller) pairs not run again", form=dict(metavar="CSV")),
    "summarize": SweepOption("train and test nothing: rebuild the table from the runs already saved in --out"
                             " (run logs, loose or packed); the other options select which of them it takes,"
                             " an option left out taking every value found there",
                             form=dict(action="store_const", const=True)),
}
ALL_SIX = list(TABLE1_ROWS)


@dataclass(frozen=True)
class Sweep:
    """One sweep: its help, its options with their defaults ({name: default},
    in the order of its help), whether it has ``--summarize``, the options
    that say what a summary shows rather than which runs it takes
    (``shown_by``: they keep their defaults), whether its runs take the
    Q-learning sweep options of ``QConfig`` (but ``set_by_column``, which each
    column of its table sets)."""

    short: str
    description: str
    defaults: dict
    summarizes: bool = False
    shown_by: tuple = ()
    q_options: bool = True
    set_by_column: tuple = ()

    @property
    def names(self) -> list:
        """Every option of the sweep (attribute names), the Q-learning ones included."""
        q = [n for n, (_, opt) in sweep_options(QConfig).items() if opt.cli and n not in self.set_by_column]
        q = q if self.q_options else []
        return [*self.defaults, *q] + (["summarize"] if self.summarizes else [])


COMMON = dict(seeds=10, first_seed=0, budget=QConfig.budget, workers=2)
SWEEPS = {
    "table1": Sweep(
        "Q-learning runs of the paper's Table 1 (tasks x columns x seeds)",
        "Q-learning runs of the paper's Table 1: tasks x columns (the Q-learning variants) x seeds, each run"
        " tested at lengths 100 and 1000.",
        dict(tasks=ALL_SIX, columns=["full"], **COMMON, out=table1.DEFAULT_OUT),
        summarizes=True),
    "figure3": Sweep(
        "supervised runs of FF, GRU and LSTM controllers tested at growing complexities (Figure 3)",
        "Supervised runs of FF, GRU and LSTM controllers, each tested at growing complexities (the paper's"
        " Figure 3).",
        dict(tasks=list(figure3.TASKS), controllers=list(figure3.CONTROLLERS),
             complexities=list(figure3.COMPLEXITIES), instances=50, **dict(COMMON, budget=3_000_000),
             out="figures", merge=None),
        q_options=False),
    "figure5": Sweep(
        "standard against enhanced Q-learning tested at growing complexities (Figure 5)",
        "Table 1 runs of the classic and full columns (or any --columns), each final model tested at growing"
        " complexities (the paper's Figure 5).",
        dict(tasks=ALL_SIX, columns=list(figure5.COLUMNS), complexities=list(figure3.COMPLEXITIES), instances=50,
             **COMMON, out=figure5.DEFAULT_OUT),
        summarizes=True, shown_by=("complexities", "instances")),
    "appendix-b": Sweep(
        "the time to solve in bases 2 to 10 (Appendix B)",
        "Full-method runs in bases 2 to 10, stopped at the paper's solve: the time to solve per base (the"
        " paper's Appendix B).",
        dict(tasks=ALL_SIX, bases=list(appendix.BASES), **COMMON, out=appendix.DEFAULT_OUT),
        summarizes=True, set_by_column=("base",)),
    "appendix-c": Sweep(
        "the time to solve with the 0/1, discretized and continuous rewards (Appendix C)",
        "Full-method runs with the 0/1, discretized and continuous rewards, stopped at the paper's solve"
        " (the paper's Appendix C).",
        dict(tasks=ALL_SIX, rewards=list(REWARDS), **COMMON, out=appendix.DEFAULT_OUT),
        summarizes=True, set_by_column=("reward",)),
}


def default_text(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return " ".join(map(str, value))
    return f"{value:,}" if isinstance(value, int) else str(value)


def add_sweep_parser(names, name: str, sweep: Sweep):
    """The parser of one sweep: its options alone, each help with its unit and this sweep's default;
    ``--workers`` and ``--summarize`` mutually exclusive.  Values are None unless given (``fill_defaults``),
    so that ``--summarize`` takes every value of an option left out."""
    p = names.add_parser(name, help=sweep.short, description=sweep.description, allow_abbrev=False)
    either = p.add_mutually_exclusive_group() if sweep.summarizes else p
    for option, default in sweep.defaults.items():
        spec = OPTIONS[option]
        unit = f" {spec.unit}" if spec.unit and default is not None else ""
        (either if option == "workers" else p).add_argument(
            "--" + option.replace("_", "-"), default=None, **spec.form,
            help=f"{spec.help} (default {default_text(default)}{unit})")
        if option == "workers" and sweep.summarizes:         # next to --workers, so the usage shows [A | B]
            shown = " and ".join("--" + n for n in sweep.shown_by)
            shows = f"; {shown} say which saved tests it draws" if shown else ""
            either.add_argument("--summarize", default=None, **OPTIONS["summarize"].form,
                                help=f"{OPTIONS['summarize'].help}{shows} (default off)")
    if sweep.q_options:
        add_arguments(p, {name: QConfig}, sweep=True, skip=sweep.set_by_column)
    p.set_defaults(func=RUN[name], sweep=sweep)
    return p


def fill_defaults(args) -> None:
    """Fill in the sweep's defaults of the options not given; with ``--summarize`` only those that say what
    the summary shows (``Sweep.shown_by``), the others selecting the runs (``chosen_runs``)."""
    sweep = args.sweep
    for name, value in sweep.defaults.items():
        if getattr(args, name) is None and (not getattr(args, "summarize", None) or name in (*sweep.shown_by, "out")):
            setattr(args, name, value)


def run_filter(args):
    """With ``--summarize``: (keep, said), ``keep(row)`` True for a saved run's row that the options given
    select, ``said`` those options as given.  Each option given keeps the runs made with one of its values
    (``--seeds N``: seeds S to S + N - 1, S = ``--first-seed`` or 0; a row without a budget, from an old
    table1.csv, is kept by any ``--budget``); an option left out keeps every value."""
    given = {name: value for name in args.sweep.names if name not in ("out", "summarize", *args.sweep.shown_by)
             for value in [getattr(args, name, None)] if value is not None}
    first = given.get("first_seed", 0)
    last = first + given["seeds"] if "seeds" in given else None

    def matches(row, name, value) -> bool:
        if name in ("tasks", "columns"):
            return row[name[:-1]] in value
        if name in ("bases", "rewards"):
            return option_value(row, name[:-1]) in value
        if name in ("seeds", "first_seed"):
            return row["seed"] >= first and (last is None or row["seed"] < last)
        if name == "budget":
            return row.get("budget") in (value, None)
        if "column" in row and not table1.applies(name, row["column"]):
            return True                                     # e.g. --gamma: a constant-discount column's runs
        return option_value(row, name) == value

    def keep(row) -> bool:
        return all(matches(row, name, value) for name, value in given.items())
    return keep, " ".join(f"--{n.replace('_', '-')} {default_text(v)}" for n, v in given.items())


def chosen_runs(args, rows) -> list:
    """The rows (saved runs) that the options given with ``--summarize`` select (``run_filter``); a
    UsageError if they leave none of ``rows``."""
    keep, said = run_filter(args)
    chosen = [row for row in rows if keep(row)]
    if rows and not chosen:
        raise UsageError(f"--out {args.out}: none of its {len(rows)} saved runs is one that {said} selects;"
                         " leave an option out to take every value")
    return chosen


def command_line() -> str:
    return "tinyalgo " + " ".join(sys.argv[1:])


def check_test_memory(args) -> None:
    c = max(args.complexities)
    check_memory([(environment_bytes(args.instances, c), f"--instances {args.instances} at complexity {c}",
                   f"{args.instances} test instances of complexity {c} drawn at once")])


def table_text(out: str) -> str:
    """The ``table1.md`` just written to ``out``."""
    with open(os.path.join(out, "table1.md"), encoding="utf-8") as f:
        return f.read()


def cmd_table1(args) -> int:
    fill_defaults(args)
    out, budget, command = args.out, args.budget, command_line()
    if args.summarize:
        rows = saved_rows(out)
        if not rows:
            raise UsageError(f"--out {out}: no run logs in {out}/runs or {out}/runs.jsonl.gz, and no table1.csv,"
                             " to summarize")
        rows = chosen_runs(args, rows)
        check_writable_folder(out, "--out")
        write_table1(rows, out, budget or QConfig.budget, command)       # budget: of the rows without one
        print(table_text(out))
        return 0
    check_writable_folder(out, "--out")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = table1_jobs(args.tasks, args.columns, seeds, budget, out, **overrides_from_args(QConfig, args))
    for job in jobs:
        check_run_memory(job.config())
    print(f"Table 1: {len(jobs)} runs, {args.workers} worker processes -> {out}"
          f" (each run's progress: {out}/runs/<task>-<column>-s<seed>.log; rerun the same command to continue)")
    rows = run_sweep(jobs, workers=args.workers, on_result=lambda rows: write_table1(rows, out, budget, command))
    write_table1(rows, out, budget, command)
    print(table_text(out))
    return 0


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


def cmd_figure3(args) -> int:
    fill_defaults(args)
    out = args.out
    check_writable_folder(out, "--out")
    if args.merge:
        check_merge_csv(args.merge)
    check_test_memory(args)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(f"Figure 3: {len(args.tasks) * len(args.controllers) * args.seeds} supervised runs,"
          f" {args.workers} worker processes -> {out}")
    rows = figure3.run_figure3(args.tasks, args.controllers, seeds, args.budget, args.complexities, args.instances,
                               args.workers)
    if args.merge:
        rows = figure3.merge_rows(args.merge, rows)
    figure3.write_figure3(rows, out)
    print(f"wrote {out}/supervised_accuracy.png and .csv ({command_line()})")
    return 0


def cmd_figure5(args) -> int:
    fill_defaults(args)
    check_writable_folder(args.out, "--out")
    if args.summarize:
        chosen_runs(args, summarize_directory(args.out))          # a UsageError if the options select none
        print(figure5.summarize_figure5(args.out, command_line(), args.complexities, args.instances,
                                        select=run_filter(args)[0]))
        return 0
    check_test_memory(args)
    return figure5.command(args, command_line(), overrides_from_args(QConfig, args))


def cmd_appendix(args) -> int:
    fill_defaults(args)
    check_writable_folder(args.out, "--out")
    if args.summarize:
        rows = summarize_directory(args.out)
        if not rows:
            raise UsageError(f"--out {args.out}: no run logs in {args.out}/runs or {args.out}/runs.jsonl.gz to"
                             " summarize")
        columns = args.bases if args.name == "appendix-b" else args.rewards
        default = args.sweep.defaults["bases" if args.name == "appendix-b" else "rewards"]
        print(appendix.write_appendix(args.name, chosen_runs(args, rows), args.out, command_line(),
                                      args.tasks or ALL_SIX, columns or default, args.budget or QConfig.budget))
        return 0
    if args.name == "appendix-b":
        if not any(appendix.valid(t, b) for t in args.tasks for b in args.bases):
            raise UsageError(f"--tasks {' '.join(args.tasks)} with --bases {' '.join(map(str, args.bases))}: no task"
                             " is valid in these bases (multiplication and 3-number addition need a base of at"
                             " least 3)")
    return appendix.command(args, command_line(), overrides_from_args(QConfig, args))


RUN = {"table1": cmd_table1, "figure3": cmd_figure3, "figure5": cmd_figure5, "appendix-b": cmd_appendix,
       "appendix-c": cmd_appendix}


def register_sweeps(names) -> None:
    for name, sweep in SWEEPS.items():
        add_sweep_parser(names, name, sweep)
