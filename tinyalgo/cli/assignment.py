"""``tinyalgo assignment``: course assignments made from the package.

    tinyalgo assignment list
    tinyalgo assignment make gru_backward bptt --out hw3        # a student copy, 0 points as made
    tinyalgo assignment grade hw3 [--tests DIR/tests] [--json grade.json]

``make`` refuses an unknown name and an existing non-empty --out (one line,
exit status 2 through ``tinyalgo``).
"""
from __future__ import annotations

import argparse
import sys

from tinyalgo.assignments.grade import format_grade, grade
from tinyalgo.assignments.make import make
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.fileio import atomic_write_json


def cmd_list(args) -> int:
    print(f"{'assignment':<22} {'points':>6}  tutorial  {'time':>7}  functions")
    for a in ASSIGNMENTS.values():
        funcs = ", ".join(f"{f.module.split('.', 1)[1]}.{f.qualname}" for f in a.functions)
        print(f"{a.name:<22} {a.total:>6}  {a.tutorial:>8}  {a.minutes:>4} min  {funcs}")
        if args.verbose:
            print(f"    {a.title}")
            for test, points in a.points.items():
                print(f"    {points:>2} points  {test}")
    print(f"{len(ASSIGNMENTS)} assignments, {sum(a.total for a in ASSIGNMENTS.values())} points")
    return 0


def cmd_make(args) -> int:
    summary = make(args.names, args.out, solution=args.solution)
    kind = "solution copy" if args.solution else "student copy"
    print(f"wrote the {kind} of {', '.join(summary['assignments'])} to {summary['out']}"
          f" ({summary['points']} points; {len(summary['stubbed'])} function(s) stubbed)")
    for name in summary["stubbed"]:
        print(f"  stubbed {name}")
    print(f"student: see {summary['out']}/README.md; instructor: {summary['out']}/INSTRUCTOR.md")
    return 0


def cmd_grade(args) -> int:
    result = grade(args.directory, tests=args.tests)
    print(format_grade(result))
    if args.json:
        result.pop("pytest_output", None)
        atomic_write_json(args.json, result)
    return 0


def register(sub) -> None:
    """Add ``assignment`` with its ``list``, ``make`` and ``grade`` subcommands to ``sub``."""
    parser = sub.add_parser("assignment", help="course assignments: list, make a student copy, grade it")
    commands = parser.add_subparsers(dest="assignment_command", metavar="{list,make,grade}")
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
    listing = commands.add_parser("list", help="the assignments: functions, points, tutorial, expected time")
    listing.add_argument("-v", "--verbose", action="store_true", help="also every test and its points")
    listing.set_defaults(func=cmd_list)
    make = commands.add_parser("make", help="write a student copy of the package with the named assignments stubbed")
    make.add_argument("names", nargs="+", metavar="NAME", help="assignments (see 'tinyalgo assignment list')")
    make.add_argument("--out", required=True, help="a new or empty directory for the copy")
    make.add_argument("--solution", action="store_true",
                      help="keep the solution bodies (an instructor's check copy: full points)")
    make.set_defaults(func=cmd_make)
    grade = commands.add_parser("grade", help="run a copy's grading tests against its package and score them")
    grade.add_argument("directory", help="a copy written by 'assignment make' (a student's work)")
    grade.add_argument("--tests", help="the tests directory to grade with (default DIRECTORY/tests;"
                                       " give your own copy's so a student's edits to tests/ do not count)")
    grade.add_argument("--json", metavar="FILE", help="also write the scores as JSON (for a gradebook)")
    grade.set_defaults(func=cmd_grade)


def main(argv=None) -> int:
    """``python -m tinyalgo.cli.assignment ...``: the same commands on their own."""
    parser = argparse.ArgumentParser(prog="tinyalgo", description=__doc__.split("\n")[0])
    register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(["assignment"] + list(sys.argv[1:] if argv is None else argv))
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"tinyalgo: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
