"""Sweeps of runs: the paper's Table 1 (Q-learning variants x tasks x seeds).

Runs go through any ``concurrent.futures.Executor``: a process pool on this
machine by default; a Dask (``distributed.Client().get_executor()``) or Ray
(``ray.util.multiprocessing`` / ``ray.util.ActorPool``-backed) executor
spreads a sweep over a cluster, since a run is one picklable function call,
``run_table1_job(job)``, returning a small dict.

A sweep stopped and started again with the same jobs trains only what is
left: finished runs are read from their logs, an interrupted run continues
from its last saved segment boundary.
"""
from __future__ import annotations

import os
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, fields

from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.experiments.runlogs import log_source, run_log
from tinyalgo.experiments.table1_report import (BASE_DEFAULT, REWARD_DEFAULT, TABLE1_COLUMNS, TABLE1_ROWS, row_key,
                                                run_name, summarize_run)
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.runs.options import sweep_options
from tinyalgo.runs.config import QConfig
from tinyalgo.runs.beyond import BeyondThePaper
from tinyalgo.runs.rundir import RunSaver, checkpoint_path, held, resume_run


@dataclass(frozen=True)
class Job:
    """One run of a sweep: a Table 1 cell (task, column), a seed and a budget,
    where to write (``out_dir``), and ``options``, the QConfig options the
    sweep sets for all of its runs (e.g. {"greedy_lanes": 5}); each run takes
    those that apply to its column (``applies``)."""

    task: str
    column: str
    seed: int
    budget: int
    out_dir: str = ""
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``runs/<name>.json``: ``<task>-<column>-s<seed>``, with ``-b<base>`` and ``-r<reward>`` before the
        seed when the options set them to other than their defaults (``table1_report.run_name``)."""
        return run_name(self.task, self.column, self.seed, self.options.get("base", BASE_DEFAULT),
                        self.options.get("reward", REWARD_DEFAULT))

    @property
    def folder(self) -> str:
        """The run's directory, ``<out_dir>/runs/<name>`` (its log is that path + ".json"); "" without an
        ``out_dir``."""
        return os.path.join(self.out_dir, "runs", self.name) if self.out_dir else ""

    def config(self) -> QConfig:
        column = TABLE1_COLUMNS[self.column]
        unknown = sorted(set(self.options) - {f.name for f in fields(QConfig)})
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}; allowed: {', '.join(sweep_options(QConfig))}")
        fixed = sorted(set(self.options) & {*column, *JOB_FIELDS})
        if fixed:
            raise ValueError(f"option {fixed[0]!r} is set by the sweep's columns and rows; it cannot be changed")
        options = {name: value for name, value in self.options.items() if applies(name, self.column)}
        return QConfig(task=self.task, controller=TABLE1_ROWS[self.task], seed=self.seed, budget=self.budget,
                       **column, **options)


def applies(option: str, column: str) -> bool:
    """Whether a sweep's ``option`` applies to the runs of Table 1's ``column``: gamma, the paper's gamma of
    the dynamic discount, only to the dynamic-discount columns (a constant-discount column keeps its
    constant); every other option to every column."""
    return option != "gamma" or TABLE1_COLUMNS[column]["discount"] == "dynamic"


JOB_FIELDS = ("task", "controller", "seed", "budget")      # what a Job sets itself
DEFAULT_OUT = os.path.join("figures", "table1")            # the command's --out unless given


def table1_jobs(tasks, columns, seeds, budget, out_dir="", **options):
    """Every (task, column, seed) as a Job; ``options``: QConfig options for every run (the sweep options of
    ``tinyalgo experiment table1``: gamma, greedy_lanes, confirm_length, ...)."""
    for name in columns:
        if name not in TABLE1_COLUMNS:
            raise ValueError(f"unknown Table 1 column {name!r}; allowed: {', '.join(TABLE1_COLUMNS)}")
    check_tasks(tasks)
    columns, tasks, seeds = distinct(columns, tasks, seeds)
    # seeds outside tasks: a sweep cut short still covers every task
    return configured([Job(t, c, s, budget, out_dir, dict(options)) for c in columns for s in seeds for t in tasks])


def check_tasks(tasks) -> None:
    """A ValueError naming the first task that is not a row of Table 1."""
    for task in tasks:
        if task not in TABLE1_ROWS:
            raise ValueError(f"unknown task {task!r}; allowed: {', '.join(TABLE1_ROWS)}")


def distinct(*names) -> tuple:
    """Each list of names without repeats, in order: a name given twice is one run (two workers must never
    train one run folder)."""
    return tuple(list(dict.fromkeys(x)) for x in names)


def configured(jobs) -> list:
    """``jobs``, each one's QConfig built first: a bad option stops the sweep here, not in a worker."""
    for job in jobs:
        job.config()
    return jobs


def run_table1_job(job: Job) -> dict:
    """Train one Table 1 run and evaluate it at lengths 100 and 1000; its CSV row.

    With an ``out_dir`` the run can be stopped and run again: its log
    ``runs/<name>.json`` (``Job.name``) is written once it is finished (a
    finished run, its log loose or packed in ``runs.jsonl.gz``, is not trained
    again: ``tinyalgo.experiments.runlogs``), and until then its checkpoint is saved
    to ``runs/<name>/`` at segment boundaries, every
    ``SAVE_EVERY_SECONDS`` as ``tinyalgo train`` does, and a new call continues
    from it (exactly as if the run had never stopped).  While it trains, the run
    directory is ``held``: a second sweep reaching the same run waits for it
    and reads its log."""
    cfg = job.config()
    if not job.out_dir:
        return summarize_run(job.task, job.column, job.seed, train_job(job, cfg))
    done = job.folder + ".json"
    report = run_log(job.folder)                                    # finished: its log, loose or packed
    if report is None:
        saved = checkpoint_path(job.folder)
        if os.path.exists(saved):                                   # a run of other options: refused before waiting
            same_config(cfg, load_checkpoint(saved)[1]["config"], saved)
        with held(job.folder):                                      # another sweep may be training it
            if not os.path.exists(done):
                atomic_write_json(done, train_job(job, cfg))
        report = run_log(job.folder)
    same_config(cfg, report["config"], log_source(job.folder))
    return summarize_run(job.task, job.column, job.seed, report)


def train_job(job: Job, cfg: QConfig) -> dict:
    """Train ``job``'s run to its end (from its saved checkpoint if there is one); its compact report."""
    folder = job.folder
    resuming = bool(folder) and os.path.exists(checkpoint_path(folder))
    live_path = folder + ".log" if folder else os.devnull      # progress as it goes: tail -f <out>/runs/<name>.log
    lines = []
    if resuming and os.path.exists(live_path):
        with open(live_path) as f:
            lines = f.read().splitlines()
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(live_path, "a" if resuming else "w", buffering=1) as live:
        def log(line):
            lines.append(line)
            live.write(line + "\n")

        if resuming:
            trainer = resume_run(folder, log=log)
            same_config(cfg, asdict(trainer.cfg), checkpoint_path(folder))
            log(f"resumed from {checkpoint_path(folder)}: {trainer.state.chars} characters trained")
        else:
            trainer = BeyondThePaper(cfg, log=log)
        save = RunSaver(folder, trainer) if folder else lambda trainer, force=False: None
        try:
            trainer.run(on_boundary=save)
        except KeyboardInterrupt:
            save(trainer, force=True)
            raise
        save(trainer, force=True)
        return compact_report(trainer.final_report(), lines)


def same_config(cfg: QConfig, saved: dict, path: str) -> None:
    """A ValueError if the run saved in ``path`` was not made with ``cfg``."""
    old, new = asdict(QConfig.from_saved(saved)), asdict(cfg)
    for name in new:
        if old[name] != new[name]:
            raise ValueError(f"{path} is a run with {name} {old[name]!r}, this sweep asks for {new[name]!r}:"
                             " give the sweep another --out, or delete the run to train it again")


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


def run_sweep(jobs, executor: Executor | None = None, workers: int = 2, log=print, on_result=None,
              run=run_table1_job) -> list:
    """Run ``jobs`` through ``executor`` (default: a process pool of ``workers``);
    ``on_result(rows so far)`` is called after each finished run.  ``run(job)``
    (picklable) makes a job's row: a ``summarize_run`` row, possibly with more.
    If a run or ``on_result`` fails, the runs not yet started are cancelled
    and the error is raised (the finished runs are on disk: a rerun goes on)."""
    own = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=workers)
    results, futures = [], {}
    try:
        futures = {executor.submit(run, job): job for job in jobs}
        for future in as_completed(futures):
            row = future.result()
            results.append(row)
            solved = f"solved @100 in {row['minutes_to_solve']:.1f} min" if row["solved"] else "not solved"
            log(f"{futures[future].name:>32s}: {solved} (run {row['minutes']:.1f}"
                f" min, {row['chars']:,} chars); re-test 100: {row['solved_fraction_100']},"
                f" 1000: {row['solved_fraction_1000']}")
            if on_result:
                on_result(sorted(results, key=row_key))
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:
        if own:
            executor.shutdown()
    return sorted(results, key=row_key)
