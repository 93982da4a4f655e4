"""The paper's Figure 5: test accuracy (the fraction of fresh instances solved
completely) against complexity, from 10 to 20,000, for standard Q-learning
(Table 1's "classic" column: one-step Q, constant discount 1, no penalty) and
the enhanced version ("full": dynamic discount, Watkins Q(lambda), the
penalty), per task, over the runs' seeds (paper section 6.4).  ``--columns`` draws any
of Table 1's columns the same way, e.g. the ablations between the two.

    tinyalgo experiment figure5 --seeds 10 --budget 10000000

The runs are Table 1 runs (``tinyalgo.experiments.table1``: resumable, a
finished run is not trained again, so a Table 1 sweep's ``--out`` with both
columns can be reused); each run's final model (``runs/<name>/checkpoint.npz``)
is then tested at every complexity, and the results are kept in
``runs/<name>/figure5.json``, so a rerun tests only what is missing, and
``--summarize`` rebuilds the figure from the logs and tests alone (no model
needed), loose or packed into ``runs.jsonl.gz`` (``tinyalgo.experiments.runlogs``).
"""
from __future__ import annotations

import functools
import os

import numpy as np

from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.experiments.figure3 import COMPLEXITIES, plot_accuracy
from tinyalgo.experiments.runlogs import run_file
from tinyalgo.experiments.table1 import run_sweep, run_table1_job, table1_jobs
from tinyalgo.experiments.table1_report import (TABLE1_COLUMNS, TABLE1_ROWS, columns_text, common_runs,
                                                option_notes, results_csv, row_run_name, runs_note, runs_text,
                                                summarize_directory)
from tinyalgo.runs.fileio import atomic_write_bytes, atomic_write_json
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.rundir import checkpoint_path, held

COLUMNS = ("classic", "full")                  # the paper's figure: standard against enhanced
STANDARD, ENHANCED = COLUMNS
LABELS = {STANDARD: "standard Q-learning (classic)", ENHANCED: "enhanced (full)"}
STYLES = {STANDARD: ("tab:blue", dict(ls="--", lw=2.5)), ENHANCED: ("tab:red", dict(ls="-", lw=2))}
OTHER_COLORS = ("tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:olive", "tab:cyan")
RESULTS = "figure5.json"
DEFAULT_OUT = os.path.join("figures", "figure5")      # the command's --out unless given


def figure5_jobs(tasks, seeds, budget, out_dir, columns=COLUMNS, **options) -> list:
    """The Table 1 jobs of the figure (``columns``: Table 1's columns, the paper's classic and full by
    default); ``out_dir`` is needed (the models are tested from their saved checkpoints)."""
    if not out_dir:
        raise ValueError("Figure 5 needs an output directory: its runs' final models are tested from there")
    return table1_jobs(tasks, columns, seeds, budget, out_dir, **options)


def accuracy_curve(job, complexities, instances: int) -> list:
    """The fraction of ``instances`` fresh instances the final model of ``job``'s run solves at each
    complexity (seeded by the run's seed and the complexity).  Results already in
    ``runs/<name>/figure5.json`` for the same number of instances are reused; once a complexity is
    failed completely (no instance solved, under 1% of the characters right before the first error)
    the longer ones are recorded as failed without testing."""
    saved = saved_tests(job.folder, instances)
    if not all(c in saved for c in complexities):
        if not os.path.exists(checkpoint_path(job.folder)):
            raise ValueError(f"{checkpoint_path(job.folder)} is missing: the run's final model cannot be tested"
                             " (a sweep with another --out trains the run again)")
        with held(job.folder):                                 # another sweep may be testing it
            saved = add_tests(job, complexities, instances)
    return [saved[c] for c in sorted(complexities)]


def add_tests(job, complexities, instances: int) -> dict:
    """Test the final model of ``job``'s run at the ``complexities`` its ``figure5.json`` lacks and add them;
    all its tests, as ``saved_tests``."""
    saved = saved_tests(job.folder, instances)
    if all(c in saved for c in complexities):
        return saved                                           # another sweep tested it meanwhile
    controller, extra = load_checkpoint(checkpoint_path(job.folder))
    base = QConfig.from_saved(extra["config"]).base
    agent = GreedyAgent(controller)
    hopeless = False
    for c in sorted(complexities):
        if c not in saved and hopeless:
            saved[c] = dict(complexity=c, instances=instances, solved=0.0, char_accuracy=0.0, tested=False)
        elif c not in saved:
            r = evaluate_complexity(agent, job.task, c, instances, base=base, seed=10_000 * (job.seed + 1) + c)
            saved[c] = dict(complexity=c, instances=instances, solved=r["solved"],
                            char_accuracy=round(r["char_accuracy"], 6), tested=True)
        hopeless = saved[c]["solved"] == 0.0 and saved[c]["char_accuracy"] < 0.01
    atomic_write_json(os.path.join(job.folder, RESULTS), [saved[c] for c in sorted(saved)])
    return saved


def saved_tests(folder, instances: int) -> dict:
    """{complexity: test} of the final model in run folder ``folder`` (its ``figure5.json``, loose or packed
    with the run: ``tinyalgo.experiments.runlogs``), for tests of ``instances`` instances; empty if it was
    never tested."""
    return {r["complexity"]: r for r in run_file(folder, RESULTS) or [] if r["instances"] == instances}


def run_figure5_job(job, complexities=COMPLEXITIES, instances: int = 50) -> dict:
    """Train (or read) one run, then test its final model: its Table 1 row with ``curve``, the tests."""
    row = run_table1_job(job)
    return dict(row, curve=accuracy_curve(job, complexities, instances))


def curve_rows(rows) -> list:
    """One CSV row per (run, complexity)."""
    out = []
    for r in rows:
        for point in r["curve"]:
            out.append(dict(task=r["task"], column=r["column"], controller=r["controller"], units=r["units"],
                            seed=r["seed"], budget=r["budget"], chars=r["chars"], solved_100_in_training=r["solved"],
                            complexity=point["complexity"], instances=point["instances"], solved=point["solved"],
                            char_accuracy=point["char_accuracy"], tested=point["tested"]))
    return out


def mean_solved(runs, complexity):
    """The mean over ``runs`` of the fraction solved at ``complexity``; None if none was tested there."""
    acc = [p["solved"] for r in runs for p in r["curve"] if p["complexity"] == complexity]
    return float(np.mean(acc)) if acc else None


def series(columns) -> list:
    """``plot_accuracy``'s (column, color, style, label) for ``columns``: the paper's two as it draws them,
    any other column in a colour of its own."""
    others = iter(OTHER_COLORS)
    return [(c, *(STYLES[c] if c in STYLES else (next(others), dict(ls="-", lw=1.5))), LABELS.get(c, c))
            for c in columns]


def comparison_text(groups, tasks, complexities) -> str:
    """The paper's claim of Figure 5, checked per task: is the enhanced version's mean at least the
    standard one's at every complexity?  ``groups``: {(task, column): runs}; "" without both columns."""
    parts = []
    for t in tasks:
        if not groups.get((t, ENHANCED)) or not groups.get((t, STANDARD)):
            continue
        pairs = [(k, mean_solved(groups[t, ENHANCED], k), mean_solved(groups[t, STANDARD], k)) for k in complexities]
        pairs = [(k, a, b) for k, a, b in pairs if a is not None and b is not None]
        if not pairs:
            continue
        below = [f"{k:,} ({a:.3f} < {b:.3f})" for k, a, b in pairs if a < b]
        above = sum(a > b for _, a, b in pairs)
        verdict = "below at " + ", ".join(below) if below else "never below"
        parts.append(f"{t}: enhanced above standard at {above} of {len(pairs)} complexities, {verdict}")
    return ("Enhanced against standard (the paper: enhanced is better at every complexity): "
            + "; ".join(parts) + ".") if parts else ""


def present_columns(rows) -> list:
    """The columns of ``rows`` in Table 1's order."""
    return [c for c in TABLE1_COLUMNS if any(r["column"] == c for r in rows)]


def figure5_markdown(rows) -> str:
    """The mean fraction solved per task, column and complexity, with each cell's seeds and budget."""
    tasks = [t for t in TABLE1_ROWS if any(r["task"] == t for r in rows)]
    columns = present_columns(rows)
    groups = {(t, c): [r for r in rows if r["task"] == t and r["column"] == c] for t in tasks for c in columns}
    common = common_runs(groups.values())
    complexities = sorted({p["complexity"] for r in rows for p in r["curve"]})
    head = ["task", "Q-learning", "solved @100 in training", *[f"@{c:,}" for c in complexities]]
    if not common:
        head.append("runs")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (t, c), rs in groups.items():
        if not rs:
            continue
        cells = [f"{t} ({TABLE1_ROWS[t].upper()})", c, f"{sum(r['solved'] for r in rs)}/{len(rs)}"]
        for k in complexities:
            mean = mean_solved(rs, k)
            cells.append("" if mean is None else f"{mean:.2f}")
        if not common:
            cells.append(runs_text(rs))
        lines.append("| " + " | ".join(cells) + " |")
    instances = sorted({p["instances"] for r in rows for p in r["curve"]})
    comparison = comparison_text(groups, tasks, complexities)
    lines += ["", comparison] if comparison else []
    lines += ["", f"Each cell @N: the mean over the runs of the fraction of {' or '.join(map(str, instances))} fresh"
                  " instances of complexity N the run's final model solves completely (greedy actions). A run"
                  " that did not solve in training is tested as it ended (it counts, as a failed run).",
              "", runs_note(common), "",
              columns_text(columns) + " The paper (section 6): standard (classic) against enhanced (full) only,"
              " 10 runs, 3 x 10^7 characters each."]
    notes = option_notes(rows)
    if notes:
        lines += ["", "Options that differ from their defaults (value: tasks):", "", *notes]
    return "\n".join(lines) + "\n"


def write_figure5(rows, out_dir, command: str) -> str:
    """``figure5.csv`` (a row per run and complexity), ``figure5.png`` and ``figure5.md``; the table's text."""
    points = curve_rows(rows)
    atomic_write_bytes(os.path.join(out_dir, "figure5.csv"), results_csv(points).encode())
    columns = present_columns(rows)
    plot_accuracy(points, os.path.join(out_dir, "figure5.png"), "column", series(columns),
                  "Q-learning (paper Fig. 5): accuracy against test complexity, "
                  + ("standard against enhanced" if set(columns) == set(COLUMNS) else "Table 1's columns"))
    text = f"# Figure 5, reproduced\n\nCommand: `{command}`\n\n" + figure5_markdown(rows)
    atomic_write_bytes(os.path.join(out_dir, "figure5.md"), text.encode())
    return text


def run_figure5(tasks, seeds, budget, out_dir, options, command, complexities=COMPLEXITIES, instances=50,
                workers=2, executor=None, log=print, columns=COLUMNS) -> str:
    """Train (or reuse) the runs, test them, write the figure; the table's text."""
    for c in complexities:
        if c < 1:
            raise ValueError(f"complexities must be at least 1; got {c}")
    jobs = figure5_jobs(tasks, seeds, budget, out_dir, columns, **options)         # bad names stop here, before any run
    log(f"Figure 5: {len(jobs)} runs, {workers} worker processes -> {out_dir}"
        f" (each run's progress: {out_dir}/runs/<name>.log; rerun the same command to continue)")
    run = functools.partial(run_figure5_job, complexities=tuple(complexities), instances=instances)
    rows = run_sweep(jobs, executor=executor, workers=workers, log=log, run=run,
                     on_result=lambda rows: write_figure5(rows, out_dir, command))
    return write_figure5(rows, out_dir, command)


def summarize_figure5(out_dir, command, complexities=COMPLEXITIES, instances=50, log=print, select=None) -> str:
    """Rebuild the figure and the table from the run logs (``runs/<name>.json``) and the final models' tests
    (``runs/<name>/figure5.json``) in ``out_dir``, loose or packed, training and testing nothing; a run whose
    model has no test at one of ``complexities`` is left out, and named.  ``select(row)``: which runs (a
    ``summarize_run`` row each) to take (default all).  The table's text."""
    rows, untested = [], []
    for row in summarize_directory(out_dir):
        if select is not None and not select(row):
            continue
        name = row_run_name(row)
        saved = saved_tests(os.path.join(out_dir, "runs", name), instances)
        if all(c in saved for c in complexities):
            rows.append(dict(row, curve=[saved[c] for c in sorted(complexities)]))
        else:
            untested.append(name)
    if untested:
        log(f"left out, not tested at every complexity with {instances} instances: {', '.join(untested)}")
    if not rows:
        raise ValueError(f"no run in {out_dir}/runs has its final model's tests ({RESULTS}) at complexities"
                         f" {' '.join(map(str, complexities))} with {instances} instances to summarize")
    return write_figure5(rows, out_dir, command)


def command(args, command_line, options) -> int:
    """``tinyalgo experiment figure5`` from the parsed arguments (its runs; ``--summarize`` is the CLI's)."""
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(run_figure5(args.tasks or list(TABLE1_ROWS), seeds, args.budget or QConfig.budget,
                      args.out or DEFAULT_OUT, options, command_line, args.complexities, args.instances,
                      args.workers, columns=args.columns))
    return 0
