"""The paper's Appendix B (reward frequency against reliability: the six tasks
in bases 2 to 10) and Appendix C (the 0/1, discretized and continuous rewards):
median time to solve, the paper's protocol (training stops once 50 fresh
instances of length 100 are all right).

    tinyalgo experiment appendix-b --seeds 10 --budget 10000000
    tinyalgo experiment appendix-c --seeds 10 --budget 10000000

Every run is a Table 1 "full" run (dynamic discount, Watkins Q(lambda), the
penalty; FF for reverse and walk, GRU otherwise) with ``confirm_length`` 0,
made by ``tinyalgo.experiments.table1`` (resumable, through any executor).
Its log is ``runs/<task>-full[-b<base>][-r<reward>]-s<seed>.json``: base 10
with the 0/1 reward is one run, shared by both tables when they share ``--out``.
"""
from __future__ import annotations

import math
import os

from tinyalgo.experiments.table1 import Job, check_tasks, configured, distinct, run_sweep
from tinyalgo.experiments.table1_report import (BASE_DEFAULT, REWARD_DEFAULT, TABLE1_ROWS, common_runs, median,
                                                option_notes, option_value, results_csv, row_key, runs_note,
                                                runs_text, summarize_directory)
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.config import QConfig
from tinyalgo.rewards import REWARDS
from tinyalgo.tasks import TASKS

COLUMN = "full"
BASES = tuple(range(2, 11))
FAILED = 250.0           # the paper's mark of a cell whose runs did not solve
INVALID = "invalid"      # the paper's mark of a task that has no instances in that base
REWARD_NAMES = {"binary": "0/1 reward", "discretized": "discretized reward", "continuous": "continuous reward"}

# Appendix B's table: median minutes to solve over 10 runs, per base (= vocabulary size), as printed
PAPER_APPENDIX_B = {
    "copy": dict(zip(BASES, (1.4, 0.6, 0.6, 0.6, 0.6, 0.5, 0.6, 0.6, 0.6))),
    "reverse": dict(zip(BASES, (6.5, 23.8, 3.1, 3.6, 3.8, 2.5, 2.8, 2.0, 3.1))),
    "walk": dict(zip(BASES, (8.7, 6.9, 6.8, 4.0, 6.2, 5.3, 4.4, 3.9, 11.1))),
    "addition": dict(zip(BASES, (250.0, 30.9, 14.5, 26.1, 21.8, 21.9, 25.0, 23.4, 21.1))),
    "addition3": dict(zip(BASES, (250.0, 61.5, 250.0, 250.0, 112.2, 178.2, 93.8, 79.1, 81.9))),
    "multiplication": dict(zip(BASES, (INVALID, 6.2, 17.8, 20.9, 21.4, 21.5, 22.3, 23.3, 24.7))),
}
# Appendix C's table: median minutes to solve, per reward
PAPER_APPENDIX_C = {
    "copy": dict(binary=0.6, discretized=0.6, continuous=0.8),
    "reverse": dict(binary=3.1, discretized=3.1, continuous=59.7),
    "walk": dict(binary=11.1, discretized=9.5, continuous=250.0),
    "addition": dict(binary=21.1, discretized=21.6, continuous=24.2),
    "addition3": dict(binary=81.9, discretized=77.9, continuous=131.9),
    "multiplication": dict(binary=24.7, discretized=26.5, continuous=26.6),
}
PROTOCOL = {"confirm_length": 0}          # the paper's: training stops at the solve at length 100
DEFAULT_OUT = os.path.join("figures", "appendix")      # the command's --out unless given


def valid(task: str, base: int) -> bool:
    """False for the task/base pairs tinyalgo refuses (3-number addition and multiplication in base 2)."""
    return base >= TASKS[task].min_base


def _jobs(key, values, allowed, allowed_text, flag, tasks, seeds, budget, out_dir, options, keep) -> list:
    """A Job per (task, value of ``key``, seed) for which ``keep(task, value)``, every name checked and every
    run's options built before anything runs."""
    check_tasks(tasks)
    for value in values:
        if value not in allowed:
            raise ValueError(f"unknown {key} {value!r}; allowed: {allowed_text}")
    if key in options:
        raise ValueError(f"the {key} is set by each column of this table ({flag}); it cannot be an option of all runs")
    values, tasks, seeds = distinct(values, tasks, seeds)
    return configured([Job(t, COLUMN, s, budget, out_dir, {**PROTOCOL, **options, key: v})
                       for s in seeds for v in values for t in tasks if keep(t, v)])


def appendix_b_jobs(tasks, bases, seeds, budget, out_dir="", **options) -> list:
    """A Job per (task, base, seed), the invalid task/base pairs left out; ``options``: QConfig options of
    every run (``confirm_length`` 0 unless given)."""
    return _jobs("base", bases, BASES, f"{BASES[0]}..{BASES[-1]}", "--bases", tasks, seeds, budget, out_dir,
                 options, valid)


def appendix_c_jobs(tasks, rewards, seeds, budget, out_dir="", **options) -> list:
    """A Job per (task, reward, seed); ``options`` as ``appendix_b_jobs``."""
    return _jobs("reward", rewards, REWARDS, ", ".join(REWARDS), "--rewards", tasks, seeds, budget, out_dir,
                 options, lambda t, r: True)


def failed_median(values):
    """The median of minutes or characters to solve, a run that did not solve counting as failed
    (after every solved one); None (failed) if the median falls on a failed run."""
    m = median([math.inf if v is None else v for v in values])
    return None if m is None or math.isinf(m) else m


def cell(rows) -> dict:
    """A cell's numbers: runs, solved, median minutes and characters to solve (None: failed)."""
    return dict(runs=len(rows), solved=sum(r["solved"] for r in rows),
                minutes=failed_median([r["minutes_to_solve"] for r in rows]),
                chars=failed_median([r["chars_to_solve"] for r in rows]))


def chars_text(n) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.0f}k" if n >= 1e3 else f"{n:.0f}"


def paper_text(value) -> str:
    if value == INVALID:
        return "invalid"
    return f"{value:.1f} = failed" if value == FAILED else f"{value:.1f}"


def cell_text(rows, paper, refused: bool, where: str = "") -> str:
    """"0.52 min, 140k chars, 5/5 solved (paper 0.6)"; "failed, 2/5 solved (paper 250.0 = failed)"."""
    if refused:
        ours = "invalid (tinyalgo refuses)"
    elif not rows:
        ours = "not run"
    else:
        c = cell(rows)
        ours = ("failed" if c["minutes"] is None else f"{c['minutes']:.2f} min, {chars_text(c['chars'])} chars") \
            + f", {c['solved']}/{c['runs']} solved"
    return f"{ours} (paper {paper_text(paper)}{where})"


def ratio_text(rows, reference_rows, reference: str) -> str:
    """Median characters to solve of ``rows`` over those of ``reference_rows`` (called ``reference``):
    "1.80x", "failed", "base 10 failed", "-" (not run)."""
    if not rows or not reference_rows:
        return "-"
    a, b = cell(rows)["chars"], cell(reference_rows)["chars"]
    if a is None or b is None:
        return "failed" if a is None else f"{reference} failed"
    return f"{a / b:.2f}x"


def _markdown(rows, tasks, keys, key_name, heads, paper, refused, budget, findings) -> str:
    groups = {(t, k): [r for r in rows if r["task"] == t and option_value(r, key_name) == k]
              for t in tasks for k in keys}
    common = common_runs(groups.values(), budget)
    lines = ["| task | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for t in tasks:
        cells = []
        for k in keys:
            rs = groups[t, k]
            where = "" if common or not rs else f"; ours: {runs_text(rs, budget)}"
            cells.append(cell_text(rs, paper[t][k], refused(t, k), where))
        lines.append(f"| {t} ({TABLE1_ROWS[t].upper()}) | " + " | ".join(cells) + " |")
    lines += ["", "Each cell: our median minutes and characters (lane-steps) to solve, the runs that solved,"
                  " and the paper's median minutes (10 runs). Solved: the paper's protocol, 50 of 50 fresh"
                  " instances of length 100 right, tested after each curriculum advance; training stops there."
                  " The median counts a run that did not solve as slower than every run that did: \"failed\""
                  " when it falls on such a run (at least half of the runs did not solve), as the paper's 250.0."
                  " Minutes are wall time on a shared machine; characters do not depend on it.",
              "", runs_note(common)]
    lines += ["", *findings]
    notes = option_notes(rows, exclude=("base", "reward"))
    if notes:
        lines += ["", "Options that differ from their defaults (value: tasks):", "", *notes]
    return "\n".join(lines) + "\n"


def table_rows(name, rows) -> list:
    """The rows of an appendix table: the full method's, with the 0/1 reward (B) or in base 10 (C)."""
    fixed, value = ("reward", REWARD_DEFAULT) if name == "appendix-b" else ("base", BASE_DEFAULT)
    return [r for r in rows if r["column"] == COLUMN and option_value(r, fixed) == value]


def _cell_rows(rows, task, key, value) -> list:
    return [r for r in rows if r["task"] == task and option_value(r, key) == value]


def fastest(rows, task, bases) -> str:
    """The base (or bases, tied) of ``task`` whose median characters to solve is least, with its runs solved:
    "base 4 (4/5 solved)", "bases 4 (5/5 solved), 7 (5/5 solved)"; "every base failed" or "not run"."""
    cells = {b: cell(rs) for b in bases for rs in [_cell_rows(rows, task, "base", b)] if rs}
    solved = {b: c["chars"] for b, c in cells.items() if c["chars"] is not None}
    if not solved:
        return "every base failed" if cells else "not run"
    best = [b for b, m in solved.items() if m == min(solved.values())]
    return ("base " if len(best) == 1 else "bases ") + ", ".join(
        f"{b} ({cells[b]['solved']}/{cells[b]['runs']} solved)" for b in best)


def appendix_b_markdown(rows, tasks=None, bases=BASES, budget=None) -> str:
    """Appendix B's table: tasks x bases, ours beside the paper's, cell by cell."""
    rows = table_rows("appendix-b", rows)
    tasks = [t for t in TABLE1_ROWS if t in (tasks or {r["task"] for r in rows})]
    first = {t: min(b for b in bases if valid(t, b)) for t in tasks}
    everywhere = [t for t in tasks if all(valid(t, b) for b in bases)]
    findings = ["- Median characters to solve in the smallest valid base against base 10 (above 1: the small"
                " vocabulary, a frequent but less reliable reward, is slower): "
                + "; ".join(f"{t}, base {first[t]}: " + ratio_text(_cell_rows(rows, t, "base", first[t]),
                                                                   _cell_rows(rows, t, "base", 10), "base 10")
                            for t in tasks) + ".",
                *([f"- Runs that solved, over the tasks valid in every base ({', '.join(everywhere)}): " + ", ".join(
                    f"base {b} {sum(r['solved'] for r in rs)}/{len(rs)}"
                    for b in bases for rs in [[r for r in rows if option_value(r, "base") == b
                                               and r["task"] in everywhere]] if rs) + "."] if everywhere else []),
                "- Base with the fewest median characters to solve: " + "; ".join(
                    f"{t}: " + fastest(rows, t, [b for b in bases if valid(t, b)]) for t in tasks) + "."]
    return _markdown(rows, tasks, list(bases), "base", [f"base {b}" for b in bases], PAPER_APPENDIX_B,
                     lambda t, b: not valid(t, b), budget, findings)


def appendix_c_markdown(rows, tasks=None, rewards=REWARDS, budget=None) -> str:
    """Appendix C's table: tasks x rewards, ours beside the paper's, cell by cell."""
    rows = table_rows("appendix-c", rows)
    tasks = [t for t in TABLE1_ROWS if t in (tasks or {r["task"] for r in rows})]
    findings = [f"- Median characters to solve with the {REWARD_NAMES[k]} against the 0/1 reward (above 1: slower): "
                + "; ".join(f"{t}: " + ratio_text(_cell_rows(rows, t, "reward", k),
                                                  _cell_rows(rows, t, "reward", "binary"), "0/1 reward")
                            for t in tasks) + "."
                for k in rewards if k != "binary"]
    return _markdown(rows, tasks, list(rewards), "reward", [REWARD_NAMES[k] for k in rewards], PAPER_APPENDIX_C,
                     lambda t, k: False, budget, findings)


TABLES = {"appendix-b": ("appendix_b", "Appendix B: reward frequency against reliability (bases 2-10)",
                         appendix_b_markdown),
          "appendix-c": ("appendix_c", "Appendix C: reward structure", appendix_c_markdown)}


def write_appendix(name, rows, out_dir, command, tasks=None, columns=None, budget=None) -> str:
    """``<out>/appendix_b.csv`` and ``.md`` (or ``appendix_c``): the rows and the table; the table's text."""
    stem, title, markdown = TABLES[name]
    table = markdown(rows, tasks, *([columns] if columns else []), budget=budget)
    atomic_write_bytes(os.path.join(out_dir, stem + ".csv"),
                       results_csv(sorted(table_rows(name, rows), key=row_key)).encode())
    text = f"# {title}, reproduced\n\nCommand: `{command}`\n\n{table}"
    atomic_write_bytes(os.path.join(out_dir, stem + ".md"), text.encode())
    return text


def run_appendix(name, tasks, columns, seeds, budget, out_dir, options, command, workers=2, summarize=False,
                 executor=None, log=print) -> str:
    """Run (or with ``summarize`` only tabulate) Appendix B (``columns``: bases) or C (rewards); the table."""
    if name not in TABLES:
        raise ValueError(f"unknown appendix table {name!r}; allowed: {', '.join(TABLES)}")
    make = appendix_b_jobs if name == "appendix-b" else appendix_c_jobs
    jobs = make(tasks, columns, seeds, budget, out_dir, **options)       # bad names stop here, before any run
    if summarize:
        rows = summarize_directory(out_dir)
        if not rows:
            raise ValueError(f"no run logs in {out_dir}/runs to summarize")
        return write_appendix(name, rows, out_dir, command, tasks, columns, budget)
    log(f"{TABLES[name][1]}: {len(jobs)} runs, {workers} worker processes -> {out_dir}"
        f" (each run's progress: {out_dir}/runs/<name>.log; rerun the same command to continue)")
    rows = run_sweep(jobs, executor=executor, workers=workers, log=log,
                     on_result=lambda rows: write_appendix(name, rows, out_dir, command, tasks, columns, budget))
    return write_appendix(name, rows, out_dir, command, tasks, columns, budget)


def command(args, command_line, options) -> int:
    """``tinyalgo experiment appendix-b`` / ``appendix-c`` from the parsed arguments (its runs; ``--summarize``
    is the CLI's)."""
    columns = args.bases if args.name == "appendix-b" else args.rewards
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    text = run_appendix(args.name, args.tasks or list(TABLE1_ROWS), columns, seeds, args.budget or QConfig.budget,
                        args.out or DEFAULT_OUT, options, command_line, args.workers)
    print(text)
    return 0

