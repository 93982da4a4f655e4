"""The failures at long lengths as an error rate per unit of complexity, from
a Figure 5 sweep's table (paper section 6.4): for each run,
h(N) = -ln(fraction solved at complexity N) / N (a run that solves none of its
instances counts as solving half of one).  An h that stays the same as N grows
is a fixed chance of an error per step, so the chance of getting through an
instance falls geometrically with its length; an h that grows with N is a
state that drifts the longer the instance runs.

    tinyalgo experiment hazard --out figures/figure5_ablations

Reads ``<out>/figure5.csv``; a row per run of Table 1's 200-unit columns (h per
10^5 of complexity at each complexity of 1,000 and more) goes to
``<out>/hazard.csv``.
"""
from __future__ import annotations

import collections
import csv
import math
import os

from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, TABLE1_ROWS, discount_kind, median, results_csv
from tinyalgo.runs.fileio import atomic_write_bytes

COLUMNS = tuple(c for c, options in TABLE1_COLUMNS.items() if options["units"] == 200)   # the 200-unit columns
KINDS = ("constant", "dynamic")
SHORTEST = 1000                                    # the complexities compared: this one and longer
FIGURE, CSV = "figure5.csv", "hazard.csv"
DEFAULT_OUT = os.path.join("figures", "figure5_ablations")      # the command's --out unless given


def hazard(solved: float, complexity: int, instances: int) -> float:
    """-ln(solved) / complexity per 10^5 of complexity; none solved counts as half an instance."""
    return abs(math.log(max(solved, 0.5 / instances))) / complexity * 1e5


def read_figure(path) -> list:
    """The rows of a Figure 5 CSV (``figure5.csv``); a ValueError if it cannot be read as one."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path} cannot be read ({err}); give the --out of a figure5 sweep") from None
    missing = [k for k in ("task", "column", "seed", "complexity", "instances", "solved") if rows and k not in rows[0]]
    if not rows or missing:
        raise ValueError(f"{path} is not a Figure 5 table (a row per run and complexity with task, column, seed,"
                         " complexity, instances, solved)")
    return rows


def figure_tasks(rows) -> list:
    """The tasks of Figure 5's rows, in Table 1's order."""
    return [t for t in TABLE1_ROWS if any(r["task"] == t for r in rows)]


def hazards(rows, task: str) -> list:
    """A row per run of ``task`` in Figure 5's CSV rows: task, column, kind, seed, and h_<N> for each
    N >= SHORTEST."""
    runs = collections.defaultdict(dict)
    for r in rows:
        if r["task"] == task and int(r["complexity"]) >= SHORTEST:
            runs[r["column"], int(r["seed"])][int(r["complexity"])] = (float(r["solved"]), int(r["instances"]))
    out = []
    for (column, seed), points in sorted(runs.items()):
        if column in COLUMNS:
            out.append(dict(task=task, column=column, kind=discount_kind(column), seed=seed,
                            **{f"h_{n}": round(hazard(s, n, i), 3) for n, (s, i) in sorted(points.items())}))
    return out


def growth(runs, longer: int) -> float:
    """The median over ``runs`` that failed at SHORTEST of h(longer) / h(SHORTEST); None without such runs."""
    ratios = [r[f"h_{longer}"] / r[f"h_{SHORTEST}"] for r in runs if r[f"h_{SHORTEST}"] > 0 and f"h_{longer}" in r]
    return median(ratios)


def lengths(rows) -> list:
    """The complexities N of the h_<N> columns of ``hazards`` rows."""
    return sorted({int(k[2:]) for r in rows for k in r if k.startswith("h_")})


def summary(rows) -> dict:
    """{(task, kind): (runs, {N: median h}, {N > SHORTEST: median h(N) / h(SHORTEST)})} of ``hazards`` rows."""
    out = {}
    for task in dict.fromkeys(r["task"] for r in rows):
        for kind in KINDS:
            runs = [r for r in rows if r["task"] == task and r["kind"] == kind]
            if not runs:
                continue
            levels = lengths(runs)
            out[task, kind] = (len(runs), {n: median([r[f"h_{n}"] for r in runs if f"h_{n}" in r]) for n in levels},
                               {n: growth(runs, n) for n in levels if n > SHORTEST})
    return out


def hazard_table(out_dir, tasks=None) -> list:
    """The ``hazards`` rows of every task of ``tasks`` (default: all in the figure) from
    ``<out_dir>/figure5.csv``, written to ``<out_dir>/hazard.csv``."""
    figure = read_figure(os.path.join(out_dir, FIGURE))
    tasks = tasks or figure_tasks(figure)
    rows = [row for task in tasks for row in hazards(figure, task)]
    for task in tasks:
        if not any(r["task"] == task for r in rows):
            raise ValueError(f"{os.path.join(out_dir, FIGURE)} has no {task} runs of Table 1's 200-unit columns at"
                             f" complexity {SHORTEST} or more")
    atomic_write_bytes(os.path.join(out_dir, CSV), results_csv(rows).encode())
    return rows
