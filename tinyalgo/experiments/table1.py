"""Sweeps of runs: the paper's Table 1 (Q-learning variants x tasks x seeds).

Runs go through any ``concurrent.futures.Executor``: a process pool on this
machine by default; a Dask (``distributed.Client().get_executor()``) or Ray
(``ray.util.multiprocessing`` / ``ray.util.ActorPool``-backed) executor
spreads a sweep over a cluster, since a run is one picklable function call,
``run_table1_job(job)``, returning a small dict.
"""
from __future__ import annotations

import csv
import io
import json
import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from tinyalgo.fileio import atomic_write_bytes, atomic_write_json

# Table 1's columns: (name, units, discount, Q kind, penalty)
TABLE1_COLUMNS = {
    "classic-600": (600, "1", "one-step", False),
    "classic-400": (400, "1", "one-step", False),
    "classic": (200, "1", "one-step", False),
    "gamma-0.99": (200, "0.99", "one-step", False),
    "gamma-0.95": (200, "0.95", "one-step", False),
    "dynamic": (200, "dynamic", "one-step", False),
    "dynamic-watkins": (200, "dynamic", "watkins", False),
    "full": (200, "dynamic", "watkins", True),
}
# Table 1's rows (task, controller): reverse and walk with the FF controller
TABLE1_ROWS = {"copy": "gru", "reverse": "ff", "walk": "ff", "addition": "gru", "addition3": "gru",
               "multiplication": "gru"}
# The paper's Table 1 at length 100, success out of 10 seeds, per column (reverse and walk: FF; 3-number
# addition: with the extra curriculum)
PAPER_AT_100 = {
    "classic-600": dict(copy=3, reverse=0, walk=0, addition=1, addition3=0, multiplication=0),
    "classic-400": dict(copy=6, reverse=0, walk=0, addition=7, addition3=5, multiplication=0),
    "classic": dict(copy=9, reverse=0, walk=0, addition=7, addition3=8, multiplication=0),
    "gamma-0.99": dict(copy=5, reverse=0, walk=0, addition=7, addition3=4, multiplication=0),
    "gamma-0.95": dict(copy=7, reverse=0, walk=0, addition=8, addition3=5, multiplication=0),
    "dynamic": dict(copy=9, reverse=0, walk=0, addition=6, addition3=5, multiplication=10),
    "dynamic-watkins": dict(copy=10, reverse=10, walk=10, addition=6, addition3=8, multiplication=10),
    "full": dict(copy=10, reverse=9, walk=10, addition=10, addition3=8, multiplication=10),
}
PAPER_FULL = {"copy": (10, 10, 0.6), "reverse": (9, 9, 3.1), "walk": (10, 10, 11.1), "addition": (10, 10, 21.1),
              "addition3": (8, 6, 81.9), "multiplication": (10, 0, 24.7)}   # solved@100, @1000 (of 10), minutes


@dataclass(frozen=True)
class Job:
    task: str
    column: str
    seed: int
    budget: int
    out_dir: str = ""
    gamma: float = 1.0            # the dynamic discount's gamma (QConfig.gamma)
    solved_lr: float = 0.0        # QConfig.solved_lr
    solved_lr_after: str = "solve"  # QConfig.solved_lr_after
    confirm_length: int = 1000    # QConfig.confirm_length
    confirm_passes: int = 5       # QConfig.confirm_passes
    greedy_lanes: int = 0         # QConfig.greedy_lanes


def table1_jobs(tasks, columns, seeds, budget, out_dir="", **options):
    """Every (task, column, seed) as a Job; ``options``: gamma, confirm_length, confirm_passes, solved_lr(_after),
    greedy_lanes."""
    for name in columns:
        if name not in TABLE1_COLUMNS:
            raise ValueError(f"unknown Table 1 column {name!r}; allowed: {', '.join(TABLE1_COLUMNS)}")
    for task in tasks:
        if task not in TABLE1_ROWS:
            raise ValueError(f"unknown task {task!r}; allowed: {', '.join(TABLE1_ROWS)}")
    # seeds outside tasks: a sweep cut short still covers every task
    return [Job(t, c, s, budget, out_dir, **options) for c in columns for s in seeds for t in tasks]


def run_table1_job(job: Job) -> dict:
    """Train one Table 1 run and evaluate it at lengths 100 and 1000."""
    from tinyalgo.qtraining import QConfig, QTrainer

    units, discount, q, penalty = TABLE1_COLUMNS[job.column]
    cfg = QConfig(task=job.task, controller=TABLE1_ROWS[job.task], units=units, discount=discount, q=q,
                  penalty=penalty, seed=job.seed, budget=job.budget, gamma=job.gamma,
                  confirm_length=job.confirm_length, confirm_passes=job.confirm_passes, solved_lr=job.solved_lr,
                  solved_lr_after=job.solved_lr_after, greedy_lanes=job.greedy_lanes)
    lines, name = [], f"{job.task}-{job.column}-s{job.seed}"
    if job.out_dir:
        os.makedirs(os.path.join(job.out_dir, "runs"), exist_ok=True)
    # progress as it goes: tail -f <out>/runs/<name>.log
    with open(os.path.join(job.out_dir, "runs", name + ".log") if job.out_dir else os.devnull, "w",
              buffering=1) as live:
        def log(line):
            lines.append(line)
            live.write(line + "\n")

        trainer = QTrainer(cfg, log=log)
        trainer.run()
        report = compact_report(trainer.final_report(), lines)
    if job.out_dir:
        atomic_write_json(os.path.join(job.out_dir, "runs", name + ".json"), report)
    return summarize_run(job.task, job.column, job.seed, report)


def compact_report(report, lines=None) -> dict:
    """A run's report small enough to commit: the curriculum's advances (and
    the last validation) instead of every validation, the log's last lines."""
    report = dict(report)
    history = report.get("history") or []
    report["history"] = [h for h in history[:-1] if h["advanced"]] + history[-1:]
    report["validations"] = len(history)
    report["run"] = {k: v for k, v in report["run"].items() if k not in ("curriculum", "rng")}
    log = lines if lines is not None else report.get("log", [])
    report["log"] = log[-25:]
    return report


def summarize_run(task, column, seed, report) -> dict:
    """One CSV row from a finished run's report (as saved in ``runs/*.json``).

    ``solved``: the paper's protocol during training (50 of 50 test instances
    of length 100 right, checked after each curriculum advance);
    ``perfect_100`` / ``perfect_1000``: a fresh re-test of 50 instances at the end.
    """
    cfg, state = report["config"], report["run"]
    at = {row["length"]: row["solved"] for row in report["evaluations"]}
    solved_at, confirmed_at = state.get("solved_at"), state.get("confirmed_at")
    return dict(task=task, column=column, seed=seed, controller=cfg["controller"], units=cfg["units"],
                solved=bool(solved_at), minutes=round(state["seconds"] / 60, 3),
                minutes_to_solve=round(solved_at["seconds"] / 60, 3) if solved_at else None,
                chars=state["chars"], chars_to_solve=solved_at["chars"] if solved_at else None,
                confirm_length=cfg.get("confirm_length", 0), confirm_passes=cfg.get("confirm_passes", 1),
                solved_lr=cfg.get("solved_lr", 0.0), solved_lr_after=cfg.get("solved_lr_after", "solve"),
                greedy_lanes=cfg.get("greedy_lanes", 0), confirmed=bool(confirmed_at),
                restored_best=bool(state.get("restored_best")),
                minutes_to_confirm=round(confirmed_at["seconds"] / 60, 3) if confirmed_at else None,
                final_level=json_level(report), perfect_100=at.get(100) == 1.0, perfect_1000=at.get(1000) == 1.0,
                solved_fraction_100=at.get(100), solved_fraction_1000=at.get(1000))


def json_level(report) -> int:
    history = report.get("history") or []
    return history[-1]["level"] + (report["config"]["increment"] if history[-1]["advanced"] else 0) \
        if history else report["config"]["start"]


def summarize_directory(out_dir) -> list:
    """Rows of every ``runs/<task>-<column>-s<seed>.json`` in ``out_dir``."""
    rows = []
    folder = os.path.join(out_dir, "runs")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".json"):
            continue
        stem = name[:-5]
        task, rest = stem.split("-", 1)
        column, seed = rest.rsplit("-s", 1)
        with open(os.path.join(folder, name)) as f:
            rows.append(summarize_run(task, column, int(seed), json.load(f)))
    return sorted(rows, key=lambda r: (r["column"], r["task"], r["seed"]))


def run_sweep(jobs, executor: Executor = None, workers: int = 2, log=print, on_result=None) -> list:
    """Run ``jobs`` through ``executor`` (default: a process pool of ``workers``);
    ``on_result(rows so far)`` is called after each finished run."""
    own = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=workers)
    results = []
    try:
        futures = {executor.submit(run_table1_job, job): job for job in jobs}
        for future in as_completed(futures):
            row = future.result()
            results.append(row)
            if on_result:
                on_result(sorted(results, key=lambda r: (r["column"], r["task"], r["seed"])))
            solved = f"solved @100 in {row['minutes_to_solve']:.1f} min" if row["solved"] else "not solved"
            log(f"{row['task']:>15s} {row['column']:>16s} seed {row['seed']:>2d}: {solved} (run {row['minutes']:.1f}"
                f" min, {row['chars']:,} chars); re-test 100: {row['solved_fraction_100']},"
                f" 1000: {row['solved_fraction_1000']}")
    finally:
        if own:
            executor.shutdown()
    return sorted(results, key=lambda r: (r["column"], r["task"], r["seed"]))


def results_csv(rows) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


def median(values):
    values = sorted(values)
    n = len(values)
    return None if n == 0 else (values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2)


def table1_markdown(rows, budget) -> str:
    """Success rates laid out like the paper's Table 1 (columns = variants)."""
    columns = [c for c in TABLE1_COLUMNS if any(r["column"] == c for r in rows)]
    head = ["Task", *[f"{c}: solved @100" for c in columns]]
    if "full" in columns:
        confirm = sorted({r.get("confirm_length", 0) for r in rows if r["column"] == "full"} - {0})
        head += [f"full: passed @{L} in training" for L in confirm]
        head += ["full: re-test @100", "full: re-test @1000", "full: median min to solve",
                 "paper full: @100 / @1000 / min"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task in TABLE1_ROWS:
        cells = [f"{task} ({TABLE1_ROWS[task].upper()})"]
        if not any(r["task"] == task for r in rows):
            continue
        for c in columns:
            rs = [r for r in rows if r["task"] == task and r["column"] == c]
            paper = PAPER_AT_100[c][task]
            cells.append(f"{sum(r['solved'] for r in rs)}/{len(rs)} (paper {paper}/10)" if rs else "")
        if "full" in columns:
            rs = [r for r in rows if r["task"] == task and r["column"] == "full"]
            solve_minutes = [r["minutes_to_solve"] for r in rs if r["minutes_to_solve"] is not None]
            m = median(solve_minutes)
            for L in confirm:          # "-": this task's runs stopped at the paper's solve
                asked = [r for r in rs if r.get("confirm_length", 0) == L]
                cells.append(f"{sum(r.get('confirmed', False) for r in asked)}/{len(asked)}" if asked else "-")
            cells.append(f"{sum(r['perfect_100'] for r in rs)}/{len(rs)}" if rs else "")
            cells.append(f"{sum(r['perfect_1000'] for r in rs)}/{len(rs)}" if rs else "")
            cells.append(f"{m:.2f} ({len(solve_minutes)} solved)" if m is not None else "-")
            p = PAPER_FULL[task]
            cells.append(f"{p[0]}/10 / {p[1]}/10 / {p[2]}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("solved @100: the paper's protocol during training (50 of 50 test instances of length 100"
                 " right, checked after each curriculum advance). re-test: 50 fresh instances at the end, all right.")
    if "full" in columns and confirm:
        passes = sorted({r.get("confirm_passes", 1) for r in rows if r["column"] == "full"
                         and r.get("confirm_length", 0)})
        times = " or ".join(f"{n} times in a row" if n > 1 else "once" for n in passes)
        lines.append("")
        lines.append(f"passed @{confirm[0]} in training: after the paper's solve the run went on training (the"
                     f" curriculum still advancing) until 50 fresh instances of length {confirm[0]} were all right"
                     f" after an advance, {times} (``--confirm-length``, ``--confirm-passes``; a new test after each"
                     " advance), or the budget ran out; the re-tests are of that final model (out of budget, of the"
                     " model that did best at that length if it beat the last one on a fresh test: ``keep_best``)."
                     " The minutes to solve are still the paper's (length 100). \"-\": that task's runs"
                     " stopped at the paper's solve (``--confirm-length 0``).")
    trained_on = [r for r in rows if r["column"] == "full" and r.get("confirm_length", 0)]
    slower = sorted({_slowdown(r) for r in trained_on}, key=lambda x: (x[0], x[1] != "solve"))
    if any(lr for lr, _ in slower):
        when = {"solve": "from the paper's solve", "pass": f"from the first pass @{confirm[0]}"}
        cells = []
        for lr, after in slower:
            tasks = _tasks_where(trained_on, lambda r: _slowdown(r) == (lr, after))
            cells.append(f"{lr} {when[after]} ({tasks})" if lr else f"0.1 throughout ({tasks})")
        lines.append("")
        lines.append("Learning rate after the solve (``--solved-lr``, ``--solved-lr-after``; before it 0.1): "
                     + "; ".join(cells) + ".")
    full = [r for r in rows if r["column"] == "full"]
    greedy = sorted({r.get("greedy_lanes", 0) for r in full})
    if any(greedy):
        cells = [f"{n} ({_tasks_where(full, lambda r: r.get('greedy_lanes', 0) == n)})" for n in greedy]
        lines.append("")
        lines.append("Greedy lanes (``--greedy-lanes``: training lanes of the 20 that never explore; 0 = the paper,"
                     " epsilon on every lane): " + "; ".join(cells) + ".")
    lines.append("")
    lines.append(f"Budget per run: {budget:,} characters (lane-steps). Columns: "
                 + "; ".join(f"{c} = {TABLE1_COLUMNS[c][0]} units, discount {TABLE1_COLUMNS[c][1]},"
                             f" {TABLE1_COLUMNS[c][2]} Q, penalty {'on' if TABLE1_COLUMNS[c][3] else 'off'}"
                             for c in columns) + ".")
    return "\n".join(lines) + "\n"


def _tasks_where(rows, condition) -> str:
    """The tasks (in Table 1's order) with a row that meets ``condition``."""
    return ", ".join(t for t in TABLE1_ROWS if any(r["task"] == t and condition(r) for r in rows))


def _slowdown(row) -> tuple:
    """(solved_lr, solved_lr_after) of a run's CSV row (0.0: the learning rate never changed)."""
    return row.get("solved_lr", 0.0), row.get("solved_lr_after", "solve")


def write_table1(rows, out_dir, budget, command: str) -> None:
    atomic_write_bytes(os.path.join(out_dir, "table1.csv"), results_csv(rows).encode())
    text = f"# Table 1, reproduced\n\nCommand: `{command}`\n\n" + table1_markdown(rows, budget)
    atomic_write_bytes(os.path.join(out_dir, "table1.md"), text.encode())
