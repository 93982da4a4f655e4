"""``tinyalgo assignment``: course assignments made from the package.

    tinyalgo assignment list
    tinyalgo assignment make gru_backward bptt --out hw3        # hw3/ to hand out, hw3-instructor/ to keep
    tinyalgo assignment grade STUDENT --tests hw3-instructor/tests [--json r.json --format gradescope]
    tinyalgo assignment grade-all SUBMISSIONS/ --tests hw3-instructor/tests --csv grades.csv

``make`` refuses an unknown name and an existing non-empty --out (one line,
exit status 2 through ``tinyalgo``).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

import tinyalgo
from tinyalgo.assignments.grade import LIMITS, format_grade, grade, grade_all, instructor_tests
from tinyalgo.assignments.make import make
from tinyalgo.assignments.registry import ASSIGNMENTS
from tinyalgo.assignments.reports import FORMATS, as_format, class_csv
from tinyalgo.cli.args import check_free_space, check_writable_file, int_at_least, seconds_within
from tinyalgo.runs.fileio import atomic_write_bytes, atomic_write_json


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
    package = pathlib.Path(tinyalgo.__file__).parent
    source = sum(f.stat().st_size for f in package.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    tutorials = package.parent / "tutorials"
    source += sum(f.stat().st_size for f in tutorials.glob("*") if f.is_file()) if tutorials.is_dir() else 0
    check_free_space(os.path.dirname(os.path.abspath(args.out)), 4 * source, "--out",
                     "the copy, the instructor's folder and their staging")
    summary = make(args.names, args.out, solution=args.solution, instructor=args.instructor,
                   autograder=args.autograder)
    kind = "solution copy" if args.solution else "student copy"
    print(f"wrote the {kind} of {', '.join(summary['assignments'])} to {summary['out']}"
          f" ({summary['points']} points; {len(summary['stubbed'])} function(s) stubbed)")
    for name in summary["stubbed"]:
        print(f"  stubbed {name}")
    if summary["tutorials"]:
        print(f"  tutorials: {', '.join(summary['tutorials'])}")
    print(f"student: hand out {summary['out']} (see its README.md); instructor: {summary['instructor']}"
          f" (INSTRUCTOR.md; grade with --tests {summary['instructor']}/tests)")
    if summary["autograder"]:
        print(f"Gradescope autograder: {summary['autograder']}")
    return 0


def _check_output(path, option: str) -> None:
    """Refuse an output file that cannot be written, before any grading."""
    if path:
        check_writable_file(path, option)


def cmd_grade(args) -> int:
    _check_output(args.json, "--json")
    result = grade(args.directory, tests=args.tests, test_timeout=args.test_timeout,
                   submission_timeout=args.submission_timeout, confinement=args.confinement)
    print(format_grade(result))
    if args.json:
        atomic_write_json(args.json, as_format(result, args.format))
    return 0


def cmd_grade_all(args) -> int:
    _check_output(args.csv, "--csv")
    chosen = list(instructor_tests(args.tests)["points"])

    def progress(done, total, student, result, error):
        what = f"{result['earned']}/{result['total']}" if result else f"error: {error}"
        print(f"\rgraded {done}/{total}: {student} {what}".ljust(79)[:79], end="" if done < total else "\n",
              file=sys.stderr, flush=True)
    rows = grade_all(args.submissions, args.tests, test_timeout=args.test_timeout,
                     submission_timeout=args.submission_timeout, workers=args.workers, progress=progress,
                     confinement=args.confinement)
    table = class_csv(rows, chosen)
    if args.csv:
        atomic_write_bytes(args.csv, table.encode("utf-8"))
        print(f"wrote {len(rows)} rows to {args.csv}")
    else:
        print(table, end="")
    return 0


def register(sub) -> None:
    """Add ``assignment`` with its ``list``, ``make``, ``grade`` and ``grade-all`` subcommands to ``sub``."""
    parser = sub.add_parser("assignment", help="course assignments: list, make a student copy, grade it")
    commands = parser.add_subparsers(dest="assignment_command", metavar="{list,make,grade,grade-all}")
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
    listing = commands.add_parser("list", help="the assignments: functions, points, tutorial, expected time")
    listing.add_argument("-v", "--verbose", action="store_true", help="also every test and its points (default off)")
    listing.set_defaults(func=cmd_list)
    make = commands.add_parser("make", help="write a student copy of the package with the named assignments stubbed,"
                                            " and the instructor's folder beside it")
    make.add_argument("names", nargs="+", metavar="NAME", help="assignments (see 'tinyalgo assignment list')")
    make.add_argument("--out", required=True, metavar="DIR",
                      help="a new or empty directory for the copy to hand out (required)")
    make.add_argument("--instructor", metavar="DIR", help="a new or empty directory for the instructor's folder"
                                                           " (default: OUT-instructor)")
    make.add_argument("--solution", action="store_true",
                      help="keep the solution bodies (an instructor's check copy: full points) (default off: stubbed)")
    make.add_argument("--autograder", choices=["gradescope"],
                      help="also write the course platform's autograder into the instructor's folder (default: none)")
    make.set_defaults(func=cmd_make)
    low, high = LIMITS["test_timeout"]
    timeout = dict(type=seconds_within(low, high), default=30.0, metavar="SECONDS",
                   help=f"time limit of each call into a submission, {low:g} to {high:g}; a test whose call runs"
                        " past it fails (default 30 seconds)")
    low, high = LIMITS["submission_timeout"]
    budget = dict(type=seconds_within(low, high), default=300.0, metavar="SECONDS",
                  help=f"time for a whole submission, {low:g} to {high:g}; tests left when it is spent score 0"
                       " (default 300 seconds)")
    confine = dict(choices=("auto", "bubblewrap", "fallback"), default="auto",
                   help="how the submission's code is confined: bubblewrap where it runs, else the fallback"
                        " (a separate process with resource limits and an audit hook); the report says which"
                        " (default auto)")
    tests_help = "the instructor's tests folder written by 'assignment make' (OUT-instructor/tests) (required)"
    grade = commands.add_parser("grade", help="grade a student's copy with the instructor's tests")
    grade.add_argument("directory", help="a student's copy (the folder handed out, with their work)")
    grade.add_argument("--tests", required=True, help=tests_help)
    grade.add_argument("--json", metavar="FILE", help="also write the grade as JSON (for a gradebook) (default: none)")
    grade.add_argument("--format", choices=FORMATS, default="tinyalgo",
                       help="the --json file's schema: tinyalgo's, Gradescope's or PrairieLearn's results.json"
                            " (default tinyalgo)")
    grade.add_argument("--test-timeout", **timeout)
    grade.add_argument("--submission-timeout", **budget)
    grade.add_argument("--confinement", **confine)
    grade.set_defaults(func=cmd_grade)
    every = commands.add_parser("grade-all", help="grade a folder of submissions (one folder per student) in"
                                                  " parallel and write the class's grades as CSV")
    every.add_argument("submissions", help="a folder holding one folder or .zip per student, named by the student")
    every.add_argument("--tests", required=True, help=tests_help)
    every.add_argument("--csv", metavar="FILE", help="write the grades here (default: print them)")
    every.add_argument("--workers", type=int_at_least(1), default=None, metavar="N",
                       help="worker processes grading submissions side by side; the grades do not depend"
                            " on it, only the wall time (default: one per core)")
    every.add_argument("--test-timeout", **timeout)
    every.add_argument("--submission-timeout", **budget)
    every.add_argument("--confinement", **confine)
    every.set_defaults(func=cmd_grade_all)


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
