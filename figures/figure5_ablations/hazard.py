"""The failures at long lengths as an error rate per unit of complexity: for
each run of figure5.csv, h(N) = -ln(fraction solved at complexity N) / N
(a run that solves none of its instances counts as solving half of one).
An h that stays the same as N grows is a fixed chance of an error per step,
so the chance of getting through an instance falls geometrically with its
length; an h that grows with N is a state that drifts the longer the
instance runs.

    python figures/figure5_ablations/hazard.py [--figure figures/figure5_ablations/figure5.csv] [--task addition]
        [--csv PATH]

Writes a row per run (h per 10^5 of complexity at each complexity of 1,000
and more) to --csv (default hazard.csv beside this script), prints the
medians per kind of discount (constant: classic, gamma-0.99, gamma-0.95;
dynamic: dynamic, dynamic-watkins, full), and returns the rows.
"""
import argparse
import collections
import csv
import math
import os

from tinyalgo.experiments.table1_report import TABLE1_COLUMNS, discount_kind, median, results_csv
from tinyalgo.runs.fileio import atomic_write_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = tuple(c for c, options in TABLE1_COLUMNS.items() if options["units"] == 200)   # the 200-unit columns
KINDS = ("constant", "dynamic")
SHORTEST = 1000                                    # the complexities compared: this one and longer


def hazard(solved: float, complexity: int, instances: int) -> float:
    """-ln(solved) / complexity per 10^5 of complexity; none solved counts as half an instance."""
    return abs(math.log(max(solved, 0.5 / instances))) / complexity * 1e5


def hazards(rows, task: str) -> list:
    """A row per run of ``task`` in Figure 5's CSV rows: column, kind, seed, and h_<N> for each N >= SHORTEST."""
    runs = collections.defaultdict(dict)
    for r in rows:
        if r["task"] == task and int(r["complexity"]) >= SHORTEST:
            runs[r["column"], int(r["seed"])][int(r["complexity"])] = (float(r["solved"]), int(r["instances"]))
    out = []
    for (column, seed), points in sorted(runs.items()):
        if column in COLUMNS:
            out.append(dict(column=column, kind=discount_kind(column), seed=seed,
                            **{f"h_{n}": round(hazard(s, n, i), 3) for n, (s, i) in sorted(points.items())}))
    return out


def growth(runs, longer: int) -> float:
    """The median over ``runs`` that failed at SHORTEST of h(longer) / h(SHORTEST); None without such runs."""
    ratios = [r[f"h_{longer}"] / r[f"h_{SHORTEST}"] for r in runs if r[f"h_{SHORTEST}"] > 0 and f"h_{longer}" in r]
    return median(ratios)


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--figure", default=os.path.join(HERE, "figure5.csv"), help="a figure5.csv (default: this folder's)")
    parser.add_argument("--task", default="addition", help="the task (default addition)")
    parser.add_argument("--csv", default=os.path.join(HERE, "hazard.csv"), help="where the rows go")
    args = parser.parse_args(argv)
    with open(args.figure, newline="") as f:
        rows = hazards(list(csv.DictReader(f)), args.task)
    if not rows:
        parser.error(f"{args.figure} has no {args.task} runs of Table 1's discount columns at complexity"
                     f" {SHORTEST} or more")
    atomic_write_bytes(args.csv, results_csv(rows).encode())
    longer = sorted(int(k[2:]) for k in rows[0] if k.startswith("h_") and int(k[2:]) > SHORTEST)
    for kind in KINDS:
        runs = [r for r in rows if r["kind"] == kind]
        if not runs:
            continue
        levels = ", ".join(f"{n:,}: {median([r[f'h_{n}'] for r in runs]):.1f}" for n in (SHORTEST, *longer))
        ratios = ", ".join(f"{n:,}: {g:.2f}" for n in longer for g in [growth(runs, n)] if g is not None)
        print(f"{kind} discount, {len(runs)} runs: median h per 10^5 at {levels};"
              f" median h(N) / h({SHORTEST:,}) at {ratios}")
    return rows


if __name__ == "__main__":
    main()
