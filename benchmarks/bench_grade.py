"""Grading, timed (tinyalgo.assignments): ``make`` and ``grade`` of a whole
submission of every assignment.

    python benchmarks/bench_grade.py [--repeats 5] [--workers 2 --class-size 8] [--smoke]

Prints, as medians over the repeats: the seconds of ``make`` (the copy and
the instructor's folder), of ``grade`` on a solution copy (every test passes)
and on a stub copy (every test fails), and, with ``--class-size``, of
``grade_all`` on that many solution copies with ``--workers`` graders.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
import pathlib

from tinyalgo.assignments.grade import grade, grade_all
from tinyalgo.assignments.make import make
from tinyalgo.assignments.registry import ASSIGNMENTS

from timing import median_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--class-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="one repeat, a class of one")
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.class_size, args.workers = 1, 1, 1
    names = list(ASSIGNMENTS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        counter = iter(range(10 ** 6))
        made = median_seconds(lambda: make(names, tmp / f"m{next(counter)}"), repeats=args.repeats)
        make(names, tmp / "stub")
        make(names, tmp / "sol", solution=True)
        tests = tmp / "sol-instructor" / "tests"            # each copy with the instructor's folder made with it
        result = grade(tmp / "sol", tests)
        assert result["earned"] == result["total"], "the solution copy must grade full points"
        solution = median_seconds(lambda: grade(tmp / "sol", tests), repeats=args.repeats)
        stub = median_seconds(lambda: grade(tmp / "stub", tmp / "stub-instructor" / "tests"), repeats=args.repeats)
        print(f"{len(names)} assignments, {result['total']} points, {len(result['tests'])} tests")
        print(f"make:                    {made:6.2f} s")
        print(f"grade, solution copy:    {solution:6.2f} s")
        print(f"grade, stub copy:        {stub:6.2f} s")
        if args.class_size:
            room = tmp / "class"
            for i in range(args.class_size):
                shutil.copytree(tmp / "sol", room / f"student{i:03d}")
            seconds = median_seconds(lambda: grade_all(room, tests, workers=args.workers),
                                     repeats=max(1, args.repeats // 2))
            print(f"grade_all, {args.class_size} copies, {args.workers} workers: {seconds:6.2f} s"
                  f" ({seconds / args.class_size:.2f} s a submission)")


if __name__ == "__main__":
    main()
