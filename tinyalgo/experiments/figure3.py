"""The paper's Figure 3: supervised training of FF, GRU and LSTM controllers
on the six tasks, then accuracy at complexities from 10 up to 20,000.

    tinyalgo experiment figure3 --seeds 3 --out figures

Each run trains with ground-truth actions and the curriculum until it solves
complexity 1000 (or its budget is spent), then is evaluated greedily on fresh
instances at log-spaced complexities.  Runs go through a process pool.
"""
from __future__ import annotations

import csv
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING

import numpy as np

from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.experiments.table1_report import results_csv
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.runs.fileio import atomic_savefig, atomic_write_bytes
from tinyalgo.supervised import train_supervised

if TYPE_CHECKING:
    from tinyalgo.inspection.figure import Figure

TASKS = ("copy", "reverse", "walk", "addition", "addition3", "multiplication")
CONTROLLERS = ("ff", "gru", "lstm")
COMPLEXITIES = (10, 30, 100, 300, 1000, 3000, 10000, 20000)


def run_figure3_job(job) -> list:
    """Train one (task, controller, seed) supervised and evaluate it."""
    task, controller, seed, budget, complexities, instances = job
    cfg = SupervisedConfig(task=task, controller=controller, seed=seed, budget=budget, target=1000)
    model, report = train_supervised(cfg, log=lambda s: None)
    agent = GreedyAgent(model)
    rows = []
    for c in complexities:
        r = evaluate_complexity(agent, task, c, instances, seed=10_000 + seed)
        rows.append(dict(task=task, controller=controller, seed=seed, complexity=c, solved=r["solved"],
                         char_accuracy=round(r["char_accuracy"], 6), trained_level=report["final_level"],
                         solved_1000_in_training=report["solved_target"], train_seconds=report["seconds"],
                         chars=report["chars"]))
        if r["solved"] == 0.0 and r["char_accuracy"] < 0.01:
            for c2 in complexities[complexities.index(c) + 1:]:      # longer ones fail too: skip the work
                rows.append(dict(rows[-1], complexity=c2, solved=0.0, char_accuracy=0.0))
            break
    return rows


def run_figure3(tasks, controllers, seeds, budget, complexities, instances, workers, log=print) -> list:
    jobs = [(t, c, s, budget, tuple(complexities), instances) for t in tasks for c in controllers for s in seeds]
    rows = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(run_figure3_job, job): job for job in jobs}
        for future in as_completed(futures):
            got = future.result()
            rows += got
            t, c, s = futures[future][:3]
            log(f"{t:>15s} {c:>4s} seed {s}: " + "  ".join(f"{r['complexity']}:{r['solved']:.2f}" for r in got))
    return sorted(rows, key=lambda r: (r["task"], r["controller"], r["seed"], r["complexity"]))


def plot_figure3(rows, path) -> Figure:
    """Accuracy (instances solved) against complexity, one panel per task, one colour per controller."""
    styles = {"ff": dict(ls="--", lw=3.5), "gru": dict(ls="-", lw=2), "lstm": dict(ls=":", lw=2.5)}
    series = [(c, color, styles[c], c.upper()) for c, color in zip(CONTROLLERS, ("tab:green", "tab:blue", "tab:red"))]
    return plot_accuracy(rows, path, "controller", series,
                         "Supervised training (paper Fig. 3): accuracy against test complexity")


def plot_accuracy(rows, path, key, series, title) -> Figure:
    """``accuracy_figure`` saved to the PNG ``path``; returns the figure."""
    fig = accuracy_figure(rows, key, series, title)
    atomic_savefig(fig, path, dpi=90)
    return fig


def accuracy_figure(rows, key, series, title) -> Figure:
    """Accuracy (instances solved) against complexity, one panel per task: for each
    ``(value, color, style, label)`` of ``series``, the rows whose ``key`` is ``value``,
    a thin line per seed and their mean (paper Figures 3 and 5)."""
    from tinyalgo.inspection.figure import Figure  # matplotlib loads when a figure is drawn
    tasks = [t for t in TASKS if any(r["task"] == t for r in rows)]
    ncols = min(3, len(tasks))
    nrows = -(-len(tasks) // ncols)
    fig = Figure(figsize=(1 + 4 * ncols, 0.5 + 3.25 * nrows))
    axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
    for ax, task in zip(axes.ravel(), tasks):
        counts = set()
        for value, color, style, label in series:
            rs = [r for r in rows if r["task"] == task and r[key] == value]
            if not rs:
                continue
            cs = sorted({r["complexity"] for r in rs})
            seeds = sorted({r["seed"] for r in rs})
            acc = np.array([[next((r["solved"] for r in rs if r["seed"] == s and r["complexity"] == c), np.nan)
                             for c in cs] for s in seeds])
            for a in acc:
                ax.plot(cs, a, color=color, alpha=0.25, lw=1)
            ax.plot(cs, np.nanmean(acc, axis=0), color=color, marker="o", label=f"{label} (mean)", **style)
            counts.add(len(seeds))
        ax.set_xscale("log")
        per_line = "-".join(map(str, sorted({min(counts), max(counts)}))) if counts else "no"
        ax.set_title(f"{task} ({per_line} seeds per line)")
        ax.set_xlabel("test complexity")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(tasks):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("instances solved")
    axes[0, 0].legend(loc="lower left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def merge_rows(old_csv, new_rows) -> list:
    """Rows of ``old_csv`` for the (task, controller) pairs not in ``new_rows``, plus ``new_rows``."""
    fresh = {(r["task"], r["controller"]) for r in new_rows}
    kept = []
    with open(old_csv) as f:
        for r in csv.DictReader(f):
            if (r["task"], r["controller"]) in fresh:
                continue
            for key in ("seed", "complexity", "trained_level", "chars"):
                r[key] = int(r[key])
            for key in ("solved", "char_accuracy", "train_seconds"):
                r[key] = float(r[key])
            r["solved_1000_in_training"] = r["solved_1000_in_training"] == "True"
            kept.append(r)
    return sorted(kept + list(new_rows), key=lambda r: (r["task"], r["controller"], r["seed"], r["complexity"]))


def write_figure3(rows, out_dir) -> None:
    atomic_write_bytes(os.path.join(out_dir, "supervised_accuracy.csv"), results_csv(rows).encode())
    plot_figure3(rows, os.path.join(out_dir, "supervised_accuracy.png"))
