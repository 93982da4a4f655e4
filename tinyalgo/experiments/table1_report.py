"""Table 1 of the paper (its rows, columns and numbers) and the report of a
sweep: one CSV row per run (``summarize_run``), the table in Markdown
(``table1_markdown``).  The CSV carries every sweep option of ``QConfig``
(declared in ``tinyalgo.runs.config``), and the Markdown notes each one that runs
set to other than its default."""
from __future__ import annotations

import csv
import io
import os
import re

from tinyalgo.experiments.runlogs import run_logs
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.runs.options import flag, sweep_options
from tinyalgo.runs.config import QConfig

# Table 1's columns: the QConfig options of each Q-learning variant
TABLE1_COLUMNS = {
    "classic-600": dict(units=600, discount="1", q="one-step", penalty=False),
    "classic-400": dict(units=400, discount="1", q="one-step", penalty=False),
    "classic": dict(units=200, discount="1", q="one-step", penalty=False),
    "gamma-0.99": dict(units=200, discount="0.99", q="one-step", penalty=False),
    "gamma-0.95": dict(units=200, discount="0.95", q="one-step", penalty=False),
    "dynamic": dict(units=200, discount="dynamic", q="one-step", penalty=False),
    "dynamic-watkins": dict(units=200, discount="dynamic", q="watkins", penalty=False),
    "full": dict(units=200, discount="dynamic", q="watkins", penalty=True),
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
BASE_DEFAULT, REWARD_DEFAULT = QConfig.base, QConfig.reward
TABLE_CSV = "table1.csv"
RUN_NAME = re.compile(r"(?P<task>[a-z0-9]+)-(?P<column>.+?)(-b(?P<base>\d+))?(-r(?P<reward>[a-z]+))?-s(?P<seed>\d+)")
PAPER_FULL = {"copy": (10, 10, 0.6), "reverse": (9, 9, 3.1), "walk": (10, 10, 11.1), "addition": (10, 10, 21.1),
              "addition3": (8, 6, 81.9), "multiplication": (10, 0, 24.7)}   # solved@100, @1000 (of 10), minutes


def run_name(task, column, seed, base=10, reward="binary") -> str:
    """A run's file name in ``runs/``: ``<task>-<column>-s<seed>``, with ``-b<base>`` (paper Appendix B) and
    ``-r<reward>`` (Appendix C) before the seed when they are not the defaults."""
    return (f"{task}-{column}" + (f"-b{base}" if base != BASE_DEFAULT else "")
            + (f"-r{reward}" if reward != REWARD_DEFAULT else "") + f"-s{seed}")


def discount_kind(column) -> str:
    """"dynamic" for a Table 1 column with the dynamic discount (paper section 6.1), else "constant"."""
    return "dynamic" if TABLE1_COLUMNS[column]["discount"] == "dynamic" else "constant"


def row_run_name(row) -> str:
    """The ``run_name`` of a summarized run's row."""
    return run_name(row["task"], row["column"], row["seed"], option_value(row, "base"), option_value(row, "reward"))


def parse_run_name(stem) -> tuple:
    """(task, column, seed) of a ``run_name``."""
    match = RUN_NAME.fullmatch(stem)
    if not match or match["task"] not in TABLE1_ROWS or match["column"] not in TABLE1_COLUMNS:
        raise ValueError(f"{stem!r} is not a run name (<task>-<column>[-b<base>][-r<reward>]-s<seed>)")
    return match["task"], match["column"], int(match["seed"])


def row_key(row) -> tuple:
    """The order of a sweep's rows: column, task, base, reward, seed."""
    return (row["column"], row["task"], option_value(row, "base"), option_value(row, "reward"), row["seed"])


def summarize_run(task, column, seed, report) -> dict:
    """One CSV row from a finished run's report (as saved in ``runs/*.json``).

    ``solved``: the paper's protocol during training (50 of 50 test instances
    of length 100 right, checked after each curriculum advance);
    ``perfect_100`` / ``perfect_1000``: a fresh re-test of 50 instances at the end.
    """
    cfg, state = QConfig.from_saved(report["config"]), report["run"]
    at = {row["length"]: row["solved"] for row in report["evaluations"]}
    solved_at, confirmed_at = state.get("solved_at"), state.get("confirmed_at")
    return dict(task=task, column=column, seed=seed, controller=cfg.controller, units=cfg.units,
                budget=cfg.budget, solved=bool(solved_at), minutes=round(state["seconds"] / 60, 3),
                minutes_to_solve=round(solved_at["seconds"] / 60, 3) if solved_at else None,
                chars=state["chars"], chars_to_solve=solved_at["chars"] if solved_at else None,
                **{name: getattr(cfg, name) for name in sweep_options(QConfig)},
                confirmed=bool(confirmed_at), restored_best=bool(state.get("restored_best")),
                minutes_to_confirm=round(confirmed_at["seconds"] / 60, 3) if confirmed_at else None,
                final_level=json_level(report), perfect_100=at.get(100) == 1.0, perfect_1000=at.get(1000) == 1.0,
                solved_fraction_100=at.get(100), solved_fraction_1000=at.get(1000))


def json_level(report) -> int:
    history = report.get("history") or []
    return history[-1]["level"] + (report["config"]["increment"] if history[-1]["advanced"] else 0) \
        if history else report["config"]["start"]


def summarize_directory(out_dir) -> list:
    """Rows of every finished run of ``out_dir``: its logs ``runs/<run_name>.json`` and those packed in
    ``runs.jsonl.gz`` (``tinyalgo.experiments.runlogs``; base and reward: from each run's config)."""
    rows = [summarize_run(*parse_run_name(name), report) for name, report in run_logs(out_dir).items()]
    return sorted(rows, key=row_key)


# The types of ``summarize_run``'s fields (the sweep options': their defaults'), to read its CSV back
ROW_TYPES = dict(task=str, column=str, seed=int, controller=str, units=int, budget=int, solved=bool, minutes=float,
                 minutes_to_solve=float, chars=int, chars_to_solve=int, confirmed=bool, restored_best=bool,
                 minutes_to_confirm=float, final_level=int, perfect_100=bool, perfect_1000=bool,
                 solved_fraction_100=float, solved_fraction_1000=float)


def _typed(name, text, path, line):
    """A CSV cell of ``summarize_run``'s field ``name`` as the value it was ("" is None)."""
    options = sweep_options(QConfig)
    kind = ROW_TYPES[name] if name in ROW_TYPES else type(options[name][0]) if name in options else str
    if text == "":
        return None
    if kind is bool:
        if text not in ("True", "False"):
            raise ValueError(f"{path}, line {line}: {name} is {text!r}, not True or False")
        return text == "True"
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{path}, line {line}: {name} is {text!r}, not {kind.__name__}") from None


def read_results_csv(path) -> list:
    """The rows of a sweep's ``table1.csv`` (``results_csv`` of ``summarize_run`` rows, of this or an earlier
    tinyalgo) as they were written: each field of its type, empty cells None."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [k for k in ("task", "column", "seed", "solved") if k not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path} is not a table1.csv (it lacks {', '.join(missing)})")
        return [{k: _typed(k, v, path, n) for k, v in row.items()} for n, row in enumerate(reader, 2)]


def saved_rows(out_dir) -> list:
    """The rows of the sweep folder ``out_dir``: its run logs' (``summarize_directory``), or, where no run
    log is kept, those of its ``table1.csv``; empty without either."""
    rows = summarize_directory(out_dir)
    path = os.path.join(out_dir, TABLE_CSV)
    return rows if rows or not os.path.isfile(path) else read_results_csv(path)


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


def option_value(row, name):
    """A sweep option's value in a CSV row (rows without it: the option's default)."""
    return row.get(name, sweep_options(QConfig)[name][0])


def seeds_text(seeds) -> str:
    """"seeds 0-9", "seed 3", "seeds 0, 2, 5"."""
    seeds = sorted(set(seeds))
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(str(s) for s in seeds)


def runs_text(rows, budget=None) -> str:
    """The seeds and the budget of a cell's runs: "seeds 0-4, 10,000,000 chars" (``budget``: for rows
    without one)."""
    budgets = sorted({r.get("budget", budget) for r in rows} - {None})
    return seeds_text(r["seed"] for r in rows) + ", " + " or ".join(f"{b:,}" for b in budgets) + " chars"


def common_runs(groups, budget=None):
    """The ``runs_text`` shared by every non-empty group of rows (a table's cells), or None if they differ."""
    texts = {runs_text(rs, budget) for rs in groups if rs}
    return texts.pop() if len(texts) == 1 else None


def runs_note(common) -> str:
    """The table's note on seeds and budgets (``common``: ``common_runs``) and on runs that did not solve."""
    where = (f"Every cell: {common} (characters, i.e. lane-steps, per run)." if common else
             "Each cell states its seeds and its budget (characters, i.e. lane-steps, per run).")
    return where + " A run that did not solve within its budget counts as failed."


def table1_markdown(rows, budget) -> str:
    """Success rates laid out like the paper's Table 1 (columns = variants), each cell beside the paper's;
    every cell's seeds and budget are stated (once if all cells share them)."""
    columns = [c for c in TABLE1_COLUMNS if any(r["column"] == c for r in rows)]
    common = common_runs([[r for r in rows if r["task"] == t and r["column"] == c] for t in TABLE1_ROWS
                          for c in columns], budget)
    full = [r for r in rows if r["column"] == "full"]
    confirm = sorted({option_value(r, "confirm_length") for r in full} - {0})
    head = ["Task", *[f"{c}: solved @100" for c in columns]]
    if full:
        head += [f"full: passed @{L} in training" for L in confirm]
        head += ["full: re-test @100", "full: re-test @1000", "full: median min to solve",
                 "paper full: @100 / @1000 / min"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task in TABLE1_ROWS:
        if not any(r["task"] == task for r in rows):
            continue
        cells = [f"{task} ({TABLE1_ROWS[task].upper()})"]
        for c in columns:
            rs = [r for r in rows if r["task"] == task and r["column"] == c]
            where = "" if common or not rs else f"; {runs_text(rs, budget)}"
            cells.append(f"{sum(r['solved'] for r in rs)}/{len(rs)} (paper {PAPER_AT_100[c][task]}/10{where})"
                         if rs else "")
        if full:
            rs = [r for r in full if r["task"] == task]
            solve_minutes = [r["minutes_to_solve"] for r in rs if r["minutes_to_solve"] is not None]
            m = median(solve_minutes)
            for L in confirm:          # "-": this task's runs stopped at the paper's solve
                asked = [r for r in rs if option_value(r, "confirm_length") == L]
                cells.append(f"{sum(r.get('confirmed', False) for r in asked)}/{len(asked)}" if asked else "-")
            cells.append(f"{sum(r['perfect_100'] for r in rs)}/{len(rs)}" if rs else "")
            cells.append(f"{sum(r['perfect_1000'] for r in rs)}/{len(rs)}" if rs else "")
            cells.append(f"{m:.2f} ({len(solve_minutes)} solved)" if m is not None else "-")
            p = PAPER_FULL[task]
            cells.append(f"{p[0]}/10 / {p[1]}/10 / {p[2]}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "solved @100: the paper's protocol during training (50 of 50 test instances of length 100"
                  " right, checked after each curriculum advance). re-test: 50 fresh instances at the end, all right."]
    if confirm:
        lines += ["", f"passed @L in training: after the paper's solve the run trained on until 50 fresh instances of"
                      f" length L passed ``{flag('confirm_passes')}`` times in a row (a new test after each curriculum"
                      " advance), or the budget ran out; the re-tests are of its final model. The minutes to solve are"
                      " the paper's (length 100). \"-\": that task's runs stopped at the paper's solve."]
    claims = claims_text(rows)
    if claims:
        lines += ["", *claims]
    notes = option_notes(rows)
    if notes:
        lines += ["", "Options that differ from their defaults (value: tasks):", "", *notes]
    lines += ["", runs_note(common), "",
              columns_text(columns) + " The paper: 10 runs per cell, 3 x 10^7 characters each."]
    return "\n".join(lines) + "\n"


def columns_text(columns) -> str:
    """"Columns: classic = units 200, discount 1, q one-step, penalty off; ..." for ``columns``."""
    return "Columns: " + "; ".join(f"{c} = " + ", ".join(f"{k} {_word(v)}" for k, v in TABLE1_COLUMNS[c].items())
                                   for c in columns) + "."


# The paper's claims on Table 1's columns: (the columns in order, what the paper says of each next one)
CLAIMS = ((("classic", "dynamic", "dynamic-watkins", "full"), "each enhancement helps"),
          (("classic", "classic-400", "classic-600"), "more units hurt plain Q-learning"),
          (("classic", "gamma-0.99", "gamma-0.95"),
           "standard Q-learning fails on most tasks, whatever its constant discount"))


def claims_text(rows) -> list:
    """One line per claim of ``CLAIMS`` whose columns (two or more) are in ``rows``: the runs solved and
    the median characters to solve (among the solved runs) per column, over the (task, seed) pairs every
    such column has, so that a sweep still running compares like with like."""
    lines = []
    for chain, claim in CLAIMS:
        columns = [c for c in chain if any(r["column"] == c for r in rows)]
        if len(columns) < 2:
            continue
        pairs = set.intersection(*({(r["task"], r["seed"]) for r in rows if r["column"] == c} for c in columns))
        tasks = [t for t in TABLE1_ROWS if any(task == t for task, _ in pairs)]
        if not tasks:
            continue
        cells, left_out = [], 0
        for c in columns:
            rs = [r for r in rows if r["column"] == c and (r["task"], r["seed"]) in pairs]
            left_out += sum(r["column"] == c for r in rows) - len(rs)
            solved = sum(r["solved"] for r in rs)
            chars = median([r["chars_to_solve"] for r in rs if r["solved"] and r.get("chars_to_solve")])
            cells.append(f"{c} {solved}/{len(rs)}" + (f" (solved in a median of {chars:,.0f} chars)" if chars else ""))
        lines.append(f"- The paper: {claim}. Runs solved over {', '.join(tasks)}"
                     + (f" (the task and seed pairs every column has; {left_out} other runs left out)"
                        if left_out else "")
                     + ": " + "; ".join(cells) + ".")
    return lines


def option_notes(rows, exclude=()) -> list:
    """One line per sweep option (but those in ``exclude``) that some of ``rows``
    set to other than its default: what it is, and each value with the tasks of its runs."""
    notes = []
    for name, (default, opt) in sweep_options(QConfig).items():
        if name in exclude:
            continue
        values = sorted({option_value(r, name) for r in rows}, key=lambda v: (v != default, str(v)))
        if values == [default]:
            continue
        cells = [f"{_word(v)} ({_tasks_where(rows, lambda r: option_value(r, name) == v)})" for v in values]
        notes.append(f"- ``{flag(name)}``, {opt.help} (default {_word(default)}): " + "; ".join(cells) + ".")
    return notes


def _word(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _tasks_where(rows, condition) -> str:
    """The tasks (in Table 1's order) with a row that meets ``condition``."""
    return ", ".join(t for t in TABLE1_ROWS if any(r["task"] == t and condition(r) for r in rows))


def write_table1(rows, out_dir, budget, command: str) -> None:
    """``<out_dir>/table1.csv`` (the rows) and ``table1.md`` (the command and ``table1_markdown``)."""
    atomic_write_bytes(os.path.join(out_dir, TABLE_CSV), results_csv(rows).encode())
    text = f"# Table 1, reproduced\n\nCommand: `{command}`\n\n" + table1_markdown(rows, budget)
    atomic_write_bytes(os.path.join(out_dir, "table1.md"), text.encode())
